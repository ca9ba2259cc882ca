"""Sliding-window arguments torch refuses (a stride, dilation or kernel of 0 or below, a tuple of
the wrong length, groups of 0, an output padding not below the stride or dilation, a negative
resize): a stride of 0 was a bare ZeroDivisionError, a negative one a reshape error about -1s,
and a dilation of 0 or below or a 3-long stride of a 2-d conv gave values from other elements,
silently. Each is now refused with the op and argument named; torch refuses each too."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor
from rulegrad.runtime.errors import InvalidArgument

X = np.arange(2 * 3 * 7 * 6, dtype=np.float32).reshape(2, 3, 7, 6)
W = np.ones((4, 3, 2, 2), np.float32)
WT = np.ones((3, 4, 2, 2), np.float32)

CASES = {
    "max_pool2d kernel_size": (lambda x, w, wt, m: m.max_pool2d(x, 0)),
    "max_pool2d stride": (lambda x, w, wt, m: m.max_pool2d(x, 2, stride=0)),
    "max_pool2d stride ": (lambda x, w, wt, m: m.max_pool2d(x, 2, stride=-1)),
    "max_pool2d dilation": (lambda x, w, wt, m: m.max_pool2d(x, 2, dilation=0)),
    "max_pool2d dilation ": (lambda x, w, wt, m: m.max_pool2d(x, 2, dilation=-1)),
    "avg_pool2d stride": (lambda x, w, wt, m: m.avg_pool2d(x, 2, stride=0)),
    "avg_pool2d kernel_size": (lambda x, w, wt, m: m.avg_pool2d(x, -2)),
    "conv2d stride": (lambda x, w, wt, m: m.conv2d(x, w, stride=0)),
    "conv2d stride ": (lambda x, w, wt, m: m.conv2d(x, w, stride=(1, 1, 1))),
    "conv2d dilation": (lambda x, w, wt, m: m.conv2d(x, w, dilation=-1)),
    "conv2d groups": (lambda x, w, wt, m: m.conv2d(x, w, groups=0)),
    "conv_transpose2d stride": (lambda x, w, wt, m: m.conv_transpose2d(x, wt, stride=-1)),
    "conv_transpose2d output_padding": (
        lambda x, w, wt, m: m.conv_transpose2d(x, wt, stride=2, output_padding=2)),
    "conv_transpose2d groups": (lambda x, w, wt, m: m.conv_transpose2d(x, wt, groups=0)),
    "interpolate size": (lambda x, w, wt, m: m.interpolate(x, (-1, 3))),
}


class _Ours:
    """The calls above through rulegrad's methods, spelled as torch.nn.functional's."""

    def __getattr__(self, name):
        return lambda x, *a, **k: getattr(x, name)(*a, **k)


@pytest.mark.parametrize("case", list(CASES))
def test_window_arguments_torch_refuses_are_refused(case):
    call = CASES[case]
    with pytest.raises(RuntimeError):  # the oracle: torch refuses this call
        call(torch.from_numpy(X), torch.from_numpy(W), torch.from_numpy(WT), F)
    with pytest.raises(InvalidArgument, match=case.strip().split()[-1]):
        call(Tensor(X), Tensor(W), Tensor(WT), _Ours()).numpy()


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=(1, 2), dilation=(2, 1), padding=1),
                                dict(kernel_size=(2, 3), stride=3, ceil_mode=True),
                                dict(kernel_size=np.int64(2), stride=np.int64(1))])
def test_window_arguments_torch_takes_still_pool_as_torch(kw):
    got = Tensor(X).max_pool2d(**kw).numpy()
    want = F.max_pool2d(torch.from_numpy(X), **{k: (int(v) if isinstance(v, np.integer) else v)
                                               for k, v in kw.items()}).numpy()
    np.testing.assert_array_equal(got, want)
    wt = np.arange(3 * 2 * 2 * 3, dtype=np.float32).reshape(3, 2, 2, 3) / 10
    got = Tensor(X).conv_transpose2d(Tensor(wt), stride=(2, 3), output_padding=(1, 2)).numpy()
    want = F.conv_transpose2d(torch.from_numpy(X), torch.from_numpy(wt), stride=(2, 3),
                              output_padding=(1, 2)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
