"""misc59 (issue 31): gradients of the elu family (elu, selu, celu) and of gelu (its tanh and
erf forms) at special points, against torch: NaN, +-inf, +-0, a tiny and a huge value, and a
few ordinary ones, in float32 and float64, on both schedulers.

gelu's gradient at +-inf was the limit (1 at inf, 0 at -inf: its pieces are clamped, and a
select passes no gradient past a clamp), where torch's is NaN (cdf(x) + x pdf(x) meets inf * 0
there); it is NaN now (runtime/tensor_ops.py's `_nan_slope_at_inf`). The elu family's
gradient at NaN is NaN, torch's vectorized kernel's (its scalar loop, for an array's last few
elements, gives the positive side's slope there, as for hardtanh): each point fills whole
vectors here (64 copies), so torch answers with its vectorized loop throughout.
"huge" is 1e12: at 1e30 in float32 torch's tanh form squares x to inf and gives NaN, an
overflow of its formula, not a value of the function's slope.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

torch = pytest.importorskip("torch")
F = torch.nn.functional

# (ordinary points mild: at -4 torch's tanh form cancels 1 + tanh in float32, 5e-4 off the
# slope, and at -30 its erf form's 1 + erf is 0: ours keeps both; not this test's point)
POINTS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e12, -1e12, 0.75, -1.5, 2.5,
          -2.0]
COPIES = 64  # (every point fills whole vectors of torch's loop: no scalar tail)
# name: (ours, torch's)
FUNCS = {
    "elu": (lambda x: x.elu(), F.elu),
    "elu(0.5)": (lambda x: x.elu(0.5), lambda t: F.elu(t, 0.5)),
    "selu": (lambda x: x.selu(), F.selu),
    "celu": (lambda x: x.celu(), F.celu),
    "celu(2)": (lambda x: x.celu(2.0), lambda t: F.celu(t, 2.0)),
    "gelu tanh": (lambda x: x.gelu(), lambda t: F.gelu(t, approximate="tanh")),
    "gelu erf": (lambda x: x.gelu(approximate="none"), F.gelu),
}


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", FUNCS)
def test_gradient_at_special_points_is_torchs(name, dt, scheduler):
    ours, theirs = FUNCS[name]
    a = np.repeat(np.array(POINTS, dt), COPIES)
    up = np.tile(np.linspace(0.5, 2.0, COPIES, dtype=dt), len(POINTS))  # an upstream gradient
    with using(scheduler):
        x = Tensor(a)
        (g,) = ours(x).gradient(x, gradient=Tensor(up))
        got = g.numpy()
    t = torch.tensor(a, requires_grad=True)
    (want,) = torch.autograd.grad(theirs(t), t, torch.tensor(up))
    want = want.numpy()
    for i, p in enumerate(POINTS):
        at = slice(i * COPIES, (i + 1) * COPIES)
        rtol = 1e-5 if dt == np.float32 else 1e-10
        np.testing.assert_allclose(got[at], want[at], rtol=rtol, atol=0, equal_nan=True,
                                   err_msg=f"{name} at {p}")
