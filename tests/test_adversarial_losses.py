"""binary_crossentropy at probabilities of exactly 0 and 1, against torch: torch clamps each
log at -100, so p = 0 with label 0 costs 0 and with label 1 costs 100. The plain formula gave
0 * log(0) = 0 * -inf = NaN for the term the label switches off."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_binary_crossentropy_at_certain_probabilities(monkeypatch, backend, scheduler):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-12, 1 - 1e-7, 0.0, 1.0, 0.25], np.float32)
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.3, 0.3, 0.7], np.float32)
    for reduction in ("none", "mean", "sum"):
        got = Tensor(p).binary_crossentropy(Tensor(y), reduction=reduction).numpy()
        want = F.binary_cross_entropy(torch.from_numpy(p), torch.from_numpy(y),
                                      reduction=reduction).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # inside (0, 1) the gradient is the formula's, as before
    inner = np.array([0.1, 0.5, 0.9], np.float32)
    x = Tensor(inner, requires_grad=True)
    x.binary_crossentropy(Tensor(y[[4, 9, 2]])).backward()
    t = torch.tensor(inner, requires_grad=True)
    F.binary_cross_entropy(t, torch.from_numpy(y[[4, 9, 2]])).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5)
