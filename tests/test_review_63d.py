"""Review of step 63 (rev63d): an op's nodes recorded per form (`_by_form`) must hold only
what depends on the operands' dtypes and shapes.

`B.T @ B` (a Gram matrix) was recorded with the product's transpose of B read as the first
operand, because that transpose is the very node `B.T` (nodes are hash-consed): every later
product of that form over unrelated operands then computed `a @ a.T` instead of `a @ b`.
The shapes are primes no other test multiplies: the first product of a form is the one
recorded.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

pytestmark = pytest.mark.usefixtures("one_device")


def _gram_first(b: np.ndarray, a_of, rng, dtype_a=np.float32, dtype_b=np.float32) -> None:
    """`a_of(B) @ B` first (its form recorded from it), then unrelated operands of that form."""
    B = Tensor(b)
    A = a_of(B)
    want_first = a_of(b) @ b
    np.testing.assert_allclose((A @ B).numpy(), want_first, rtol=1e-4, atol=1e-4)
    for _ in range(2):
        a2 = rng.standard_normal(A.shape).astype(dtype_a)
        b2 = rng.standard_normal(b.shape).astype(dtype_b)
        np.testing.assert_allclose((Tensor(a2) @ Tensor(b2)).numpy(), a2 @ b2, rtol=1e-4,
                                   atol=1e-4)


def test_gram_matrix_first_does_not_poison_its_form():
    rng = np.random.default_rng(0)
    _gram_first(rng.standard_normal((19, 3)).astype(np.float32), lambda t: t.T, rng)


def test_batched_gram_first_does_not_poison_its_form():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((2, 23, 3)).astype(np.float32)
    _gram_first(b, lambda t: t.transpose(0, 2, 1) if isinstance(t, np.ndarray)
                else t.permute(0, 2, 1), rng)


def test_cast_gram_first_does_not_poison_its_form():
    """The product casts a float16 operand to float32 first: `B.float().T @ B`."""
    rng = np.random.default_rng(2)
    b = rng.standard_normal((29, 2)).astype(np.float16)
    _gram_first(b, lambda t: t.astype(np.float32).T if isinstance(t, np.ndarray)
                else t.float().T, rng, dtype_b=np.float16)


@pytest.mark.parametrize("shape, axis", [((7, 1), 1), ((1, 11), 0), ((5, 1, 1), (1, 2))])
def test_a_mean_of_constants_first_does_not_poison_its_form(shape, axis):
    """`Tensor.ones(7, 1).mean(1, keepdim=True)`: the op divides by 1.0 broadcast to (7, 1),
    the very nodes of `Tensor.ones(7, 1)`; recorded from it, later means of the form divided
    x by itself (all ones)."""
    rng = np.random.default_rng(3)
    np.testing.assert_array_equal(Tensor.ones(*shape).mean(axis, keepdim=True).numpy(),
                                  np.ones(shape, np.float32).mean(axis, keepdims=True))
    for _ in range(2):
        a = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(Tensor(a).mean(axis, keepdim=True).numpy(),
                                   a.mean(axis, keepdims=True), rtol=1e-6)




def test_step_plans_over_slices_and_scaled_gradients():
    """Step plans against torch where a step's form repeats but its values come from elsewhere:
    batches sliced from a fresh array at varying offsets (a shrink's offset is in the form)
    and gradients scaled by a float between backward and step (0.5, then 2.0, -0.0: lifted
    floats, in the form by value). Some steps are the plans' runs."""
    torch = pytest.importorskip("torch")
    from optimizer_runs import mlp_batch, mlp_loss, mlp_models

    from rulegrad.runtime import plans

    ours, opt, theirs, topt = mlp_models("momentum", seed=5)
    rng = np.random.default_rng(6)
    hits = plans.stats["step_hits"]
    for i, (lo, scale) in enumerate([(0, 0.5), (0, 0.5), (0, 0.5), (0, 0.5), (6, 0.5), (6, 0.5),
                                     (0, 2.0), (12, 0.5), (0, -0.0), (3, 0.5), (0, 0.5)]):
        x, y = mlp_batch(rng, 20)
        topt.zero_grad()
        want = mlp_loss(torch, theirs, torch.from_numpy(x[lo:lo + 6]),
                        torch.from_numpy(y[lo:lo + 6]))
        want.backward()
        for p in theirs.values():
            p.grad.mul_(scale)
        topt.step()
        opt.zero_grad()
        loss = mlp_loss(Tensor, ours, Tensor(x)[lo:lo + 6], Tensor(y)[lo:lo + 6])
        loss.backward()
        for p in ours.values():
            p.grad = p.grad * scale
        opt.step(loss)
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-4, atol=1e-5)
        for k in ours:
            np.testing.assert_allclose(ours[k].numpy(), theirs[k].detach().numpy(), rtol=1e-4,
                                       atol=1e-5, err_msg=f"step {i}: {k}")
    assert plans.stats["step_hits"] > hits
