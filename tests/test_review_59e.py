"""rev59e: a parameter frozen for many steps, then trained again, under Adam (misc59's frozen
parameters): its bias correction from its own step count, as torch's."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import Adam


def test_adam_unfreezes_a_parameter_after_b1_t_underflowed_as_torch():
    """A parameter frozen from the start while another trains, unfrozen once the shared b1^t is
    0 in float32 (b1 = 0.5: 0.5^160; b1 = 0.9 past 980 steps, a backbone unfrozen in a fine
    tune): its bias correction was b1^t / b1^skipped = 0 / 0.5^160 (also 0 as a float32
    constant), NaN, and the NaN reached the other parameter through the loss. torch counts the
    parameter's own steps; so does its own b1^t now. torch is the oracle."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0, v0 = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    w, v = Tensor(w0.copy()), Tensor(v0.copy()).requires_grad_()
    w.requires_grad = False  # (frozen from the start: None would be made True by Adam)
    tw, tv = torch.tensor(w0.copy()), torch.tensor(v0.copy(), requires_grad=True)
    opt = Adam([w, v], lr=0.01, b1=0.5)
    topt = torch.optim.Adam([tw, tv], lr=0.01, betas=(0.5, 0.999))
    for step in range(163):
        if step == 160:
            w.requires_grad = True
            tw.requires_grad_(True)
        opt.zero_grad()
        ((w * v).sum() + (v * v).sum()).backward()
        opt.step()
        topt.zero_grad()
        ((tw * tv).sum() + (tv * tv).sum()).backward()
        topt.step()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v.numpy(), tv.detach().numpy(), rtol=1e-5, atol=1e-6)
