"""Review of step 66 (backward's one walk; a gradient template's key entries kept): adversarial
training loops compared with torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD  # noqa: E402
from rulegrad.runtime import gradient_forms  # noqa: E402


@pytest.mark.parametrize("flags", ["0011", "1100"])
def test_float_lifting_switched_between_rebuilt_steps(monkeypatch, flags):
    """RULEGRAD_FLOAT_PARAMS switched between steps of one loss whose gradient adds a float the
    forward does not hold (exp2's ln 2): the forward's key is the same either way, so the
    template is rebuilt; its kept key entries, made by a walk that lifted floats (or not), must
    not be added to a walk that does not (or does). Before the fix, "0011": a TypeError in the
    step's key (the entry's float value read as a slot); "1100" put a lifted slot in a walk that
    lifts none, which came out right (values checked: it fails before the fix only after
    "0011" in the same process, whose form it shares)."""
    rng = np.random.default_rng(0)
    w0 = (rng.standard_normal((5, 3)) * 0.3).astype(np.float32)
    w = Tensor(w0, requires_grad=True).realize()
    tw = torch.tensor(w0, requires_grad=True)
    opt, topt = SGD([w], lr=0.1), torch.optim.SGD([tw], lr=0.1)
    before = gradient_forms.stats["rebuilt"]
    for flag in flags:
        monkeypatch.setenv("RULEGRAD_FLOAT_PARAMS", flag)
        x0 = rng.standard_normal((4, 5)).astype(np.float32)
        loss = (Tensor(x0) @ w).exp2().sum()
        want = (torch.tensor(x0) @ tw).exp2().sum()
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        want.backward()
        opt.step()  # (straight after backward: the step goes on with backward's walk)
        topt.step()
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert gradient_forms.stats["rebuilt"] > before  # (the path under test: a rebuild)


def test_gradient_backward_and_a_realized_loss_share_one_form():
    """One loss form taken three ways: `gradient()` (no key walk of backward's), `backward()`
    (backward's key walk) and `backward()` of a loss read first (expand's root, walked in
    toposort order). The key of each is one: the rules derive the form once and the other ways
    rebuild its template. Before: the walk numbered from a toposort keyed the graph otherwise
    (sources first to last, the key's walk last to first), so gradient() and backward() each
    derived and kept a template of the same form (test_step_66's
    test_gradient_and_backward_of_one_form checked values only)."""
    rng = np.random.default_rng(3)
    w0 = (rng.standard_normal((13, 3)) * 0.3).astype(np.float32)  # (a form of this test's own)
    w = Tensor(w0, requires_grad=True).realize()
    tw = torch.tensor(w0, requires_grad=True)
    before = gradient_forms.stats["derived"]
    for i in range(6):
        x0 = rng.standard_normal((4, 13)).astype(np.float32)
        loss = ((Tensor(x0) @ w).sigmoid() * 0.37).sum()
        want = ((torch.tensor(x0) @ tw).sigmoid() * 0.37).sum()
        (tg,) = torch.autograd.grad(want, tw)
        if i % 3 == 0:
            (g,) = loss.gradient(w)
        else:
            if i % 3 == 2:
                loss.item()  # (realized first: backward differentiates its graph)
            w.grad = None
            loss.backward()
            g = w.grad
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)
    assert gradient_forms.stats["derived"] - before == 1
