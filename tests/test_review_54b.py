"""rev54b's review of the running max's gradient (cummax / cummin) and the step's walks: wrong
answers found against torch, each a test seen failing on the code before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")


# the gradient of a gradient through a float cummax / cummin: grad_scan_max's segment sums are
# exact int64 limbs of g's bits, through which no gradient flows, so a second derivative lost
# every term through g (torch's double backward: the scatter's gradient is the gather h[idx])
# ((2, 9) and (9, 3): a short axis's unrolled windows past a vector's 8 lanes, the programs of
# test_peel's double gradients, whose kernels the session's cache then holds; 13 long they cost
# 13-17 CPU-s a test, mostly the optimizer's peel and gcc, for the same paths.) Each shape is
# run for one name, both names for the 1-element axis: cummax and cummin both move the axis
# last before the one scan (tensor_ops), and cummin's is cummax's scan of -x, its values
# negated back, whatever the shape, so the shapes' paths and the names' are independent (the
# four other pairs cost 2-10 CPU-s each, for paths these run)
@pytest.mark.parametrize("name, shape, axis", [
    ("cummax", (1,), 0), ("cummin", (1,), 0), ("cummax", (7,), 0), ("cummin", (3, 600), 1),
    ("cummax", (2, 9), 1), ("cummin", (9, 3), 0)])
def test_the_gradient_of_a_running_max_is_twice_differentiable(name, shape, axis):
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(-3, 4, size=shape).astype(np.float32)  # (ties: segments longer than 1)
    a.flat[::5] = rng.standard_normal(a.size)[::5]
    w = rng.standard_normal(shape).astype(np.float32)
    x = Tensor(a, requires_grad=True)
    v = getattr(x, name)(axis)[0]
    gx, = (v * v * x * Tensor(w)).sum().gradient(x)
    gg, = (gx * gx).sum().gradient(x)
    tx = torch.tensor(a.astype(np.float64), requires_grad=True)
    tv = getattr(torch, name)(tx, axis)[0]
    tgx, = torch.autograd.grad((tv * tv * tx * torch.tensor(w.astype(np.float64))).sum(), tx,
                               create_graph=True)
    tgg, = torch.autograd.grad((tgx * tgx).sum(), tx)
    np.testing.assert_allclose(gx.numpy(), tgx.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-4, atol=1e-4)
