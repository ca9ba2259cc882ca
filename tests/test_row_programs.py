"""Row programs (softmax, log-softmax, logsumexp, layernorm) at the row lengths where the
kernel-local rules of rules/rangeify.rules change their choice (shorter and longer than
LOCAL_MAX_ARRAY and LOCAL_MAX_ROW), with NaN, +-inf and all -inf rows, along the last axis
and others, in float16/32/64: values against torch (softmax of an all -inf row is NaN, as
torch's; logsumexp's is -inf)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.rules.flash_cost import local_max_array
from rulegrad.rules.generated.rangeify import local_max_row

torch = pytest.importorskip("torch")

LOCAL_MAX_ARRAY, LOCAL_MAX_ROW = local_max_array(), local_max_row()
# short, a vector and a bit, past L1's array (local in L2), past a local row (global buffers)
ROWS = (1, 7, 33, LOCAL_MAX_ARRAY + 8, LOCAL_MAX_ROW + 1)

PROGRAMS = {  # name: (rulegrad, torch)
    "softmax": (lambda t, ax: t.softmax(ax), lambda t, ax: torch.softmax(t, ax)),
    "log_softmax": (lambda t, ax: t.log_softmax(ax), lambda t, ax: torch.log_softmax(t, ax)),
    "logsumexp": (lambda t, ax: t.logsumexp(ax), lambda t, ax: torch.logsumexp(t, ax)),
    "logsumexp keepdim": (lambda t, ax: t.logsumexp(ax, keepdim=True),
                          lambda t, ax: torch.logsumexp(t, ax, keepdim=True)),
    "layernorm": (lambda t, ax: t.layernorm(ax),
                  lambda t, ax: torch.nn.functional.layer_norm(
                      t.movedim(ax, -1), t.shape[ax:][:1], eps=1e-5).movedim(-1, ax)),
}


def _rows(n: int, dtype=np.float32) -> np.ndarray:
    """5 rows of n: plain, one NaN, one +inf, all -inf, and -inf but one element."""
    x = np.random.default_rng(n).standard_normal((5, n)).astype(dtype)
    x[1, n // 2] = np.nan
    x[2, n // 3] = np.inf
    x[3] = -np.inf
    x[4] = -np.inf
    x[4, n - 1] = 1.5
    return x


def _check(name: str, x: np.ndarray, axis: int) -> None:
    ours, theirs = PROGRAMS[name]
    got = ours(Tensor(x), axis).numpy()
    want = theirs(torch.from_numpy(x.copy()), axis).numpy()
    tol = 2e-3 if x.dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{name} {x.shape}")


@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rows_with_special_values_against_torch(name, n):
    _check(name, _rows(n), -1)


@pytest.mark.parametrize("name", ["softmax", "logsumexp", "layernorm"])
def test_other_axes_and_dtypes_against_torch(name):
    """Over axis 0 of a 2-D and axis 1 of a 3-D tensor, a batch of 1, and float16/float64."""
    rng = np.random.default_rng(5)
    for shape, axis in (((33, 5), 0), ((3, 40, 7), 1), ((1, 4097), -1), ((1000, 3), -1)):
        _check(name, rng.standard_normal(shape).astype(np.float32), axis)
    for dtype in (np.float16, np.float64):
        _check(name, _rows(LOCAL_MAX_ARRAY + 8, dtype)[:1], -1)
        _check(name, _rows(33, dtype), -1)
