"""rev66c's review of epi66 (a select's known condition; MAX/MIN against a constant as one
compare-select): what its tests did not try."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _inf_tests(t: Tensor) -> int:
    """How many compares against +-inf t's kernels make, after the optimizer's actions."""
    nodes = [n for item in t.schedule() for n in toposort(optimize_kernel(lower_only(item.ast)))]
    return sum(n.op is Ops.CMPEQ and any(s.op is Ops.CONST and s.arg in (np.inf, -np.inf)
                                         for s in n.src) for n in nodes)


@pytest.mark.parametrize("approximate", ["tanh", "none"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_gelu_forward_has_no_inf_select_in_every_float_dtype(approximate: str,
                                                            dtype: type) -> None:
    """gelu's forward, alone and as a product's epilogue, tests no value against +-inf in
    float64 too: its gradient's select (`_nan_slope_at_inf`) had been built in float32 and
    cast to float64, MUL[y, CAST(WHERE(c, inf, 1))], which `select_actions` does not see
    through, so a float64 gelu kept both compares and two selects per element."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 7)).astype(dtype)
    w = rng.standard_normal((7, 3)).astype(dtype)
    x[0, :3] = [np.inf, -np.inf, np.nan]
    alone = Tensor(x).gelu(approximate=approximate)
    product = (Tensor(x) @ Tensor(w)).gelu(approximate=approximate)
    assert (_inf_tests(alone), _inf_tests(product)) == (0, 0)
    want = F.gelu(torch.from_numpy(x.astype(np.float64)), approximate=approximate).numpy()
    got = alone.numpy().astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    tol = {np.float64: 1e-14, np.float32: 1e-6, np.float16: 2e-3}[dtype]
    np.testing.assert_allclose(got[ok], want[ok], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_gelu_gradient_at_inf_is_nan_in_every_float_dtype(dtype: type) -> None:
    """The select kept for the gradient at +-inf (torch's NaN) still gives it, in the select's
    new dtype (its input's), and torch's finite gradients elsewhere."""
    x = np.array([np.inf, -np.inf, np.nan, -30.0, -3.0, -0.0, 0.5, 3.0, 30.0], dtype)
    for approximate in ("tanh", "none"):
        t = Tensor(x, requires_grad=True)
        t.gelu(approximate=approximate).sum().backward()
        r = torch.from_numpy(x.astype(np.float64)).requires_grad_()
        F.gelu(r, approximate=approximate).sum().backward()
        got, want = t.grad.numpy().astype(np.float64), r.grad.numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        tol = {np.float64: 1e-12, np.float32: 1e-6, np.float16: 2e-3}[dtype]
        np.testing.assert_allclose(got[3:], want[3:], rtol=tol, atol=tol)
