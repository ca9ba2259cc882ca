"""rev66c's review of epi66 (a select's known condition; MAX/MIN against a constant as one
compare-select): what its tests did not try."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_alu, render_const, render_kernel
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

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


@pytest.mark.parametrize("op", [Ops.MAX, Ops.MIN])
def test_a_bound_is_one_select_only_where_its_literal_is_printed(op: Ops) -> None:
    """render_alu prints an op over the names it is given: a reduce's update MAX(acc, c) is
    printed over (its accumulator, a thread's partial result or a vector's fold), not over
    c's literal. The compare-select form, chosen from the node's sources, had printed
    `isgreater(acc, q) ? acc : q`, a max that drops a NaN acc; only a printed literal is a
    bound (and the select then keeps the other side's NaN: C evaluated below)."""
    two = UOp.const(dtypes.float32, 2.0)
    node = UOp(op, dtypes.float32, (two, UOp.const(dtypes.float32, 3.0)))
    over_names = render_alu(node, ["acc", "q_[i_]"])
    assert "__builtin_is" not in over_names
    assert over_names == render_alu(UOp(op, dtypes.float32, (UOp.const(dtypes.float32, 0.0),
                                                            node.src[1])), ["acc", "q_[i_]"])
    literal = render_const(2.0, dtypes.float32)
    assert "__builtin_is" in render_alu(node, [literal, "x"])


def test_a_clamps_bound_is_still_one_select_in_a_kernel() -> None:
    """The kernel printer's own call (operands as slots, each filled with its source's text)
    keeps the compare-select: exp(x) clamped to 25 and sqrt(x * x) floored at 3."""
    x = np.linspace(-3, 3, 37).astype(np.float32)
    for t, builtin in ((Tensor(x).exp().minimum(25.0), "__builtin_isless"),
                       ((Tensor(x) * Tensor(x)).sqrt().maximum(3.0), "__builtin_isgreater")):
        sources = [render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                   for i, item in enumerate(t.schedule())]
        assert any(builtin in s for s in sources)
