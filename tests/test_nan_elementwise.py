"""relu, sign and cummax/cummin's indices at NaN, -0.0 and 0.0, against torch and numpy, values
and gradients. relu was `x > 0 ? x : 0`, which turned NaN into 0 (torch and numpy keep NaN) and
-0.0 into 0.0; sign took NaN for a non-zero and gave 1 (numpy gives NaN, torch 0); cummax's
index at a NaN running max was -1 (NaN matched no element; torch gives the last NaN's)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor

VALUES = np.array([np.nan, -0.0, 0.0, -1.5, 2.0, np.inf, -np.inf, 1e-30, -1e-30])


def _same(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (got, want)


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_relu_and_sign_at_nan_and_zeros(monkeypatch, backend, scheduler, dt):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    a = VALUES.astype(dt)
    t = torch.tensor(a, requires_grad=True)
    g = np.linspace(-2, 3, len(a)).astype(dt)
    (torch.relu(t) * torch.from_numpy(g)).sum().backward()
    x = Tensor(a, requires_grad=True)
    y = x.relu()
    (y * Tensor(g)).sum().backward()
    _same(y.numpy(), torch.relu(t).detach().numpy())
    _same(x.grad.numpy(), t.grad.numpy())  # 1 at NaN, 0 at both zeros (torch's)
    s = Tensor(a).sign().numpy()
    _same(s, np.sign(a))  # NaN at NaN (numpy's; torch's sign gives 0 there)
    want = torch.sign(torch.from_numpy(a)).numpy()
    _same(s[~np.isnan(a)], want[~np.isnan(a)])
    ints = np.array([-3, 0, 5], np.int32)
    _same(Tensor(ints).relu().numpy(), np.maximum(ints, 0))
    _same(Tensor(ints).sign().numpy(), np.sign(ints))


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("seed", range(4))
def test_cummax_cummin_indices_over_nan(monkeypatch, backend, seed):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    rng = np.random.default_rng(seed)
    a = VALUES[rng.integers(0, len(VALUES), (3, 11))].astype(np.float32)
    t = torch.from_numpy(a)
    for axis in (0, 1):
        for mine, theirs in ((Tensor(a).cummax(axis), torch.cummax(t, axis)),
                             (Tensor(a).cummin(axis), torch.cummin(t, axis))):
            np.testing.assert_array_equal(mine[1].numpy(), theirs[1].numpy())
            np.testing.assert_array_equal(mine[0].numpy(), theirs[0].numpy())


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (7,), (2, 3)])
def test_relu_builds_the_very_nodes_of_its_definition(dt, shape):
    """relu builds its graph directly; nodes are hash-consed, so it must be the very node its
    definition through the Tensor ops gives (`x <= 0` selecting a detached `x < 0 ? 0 : x`)."""
    x = Tensor(np.linspace(-2, 2, int(np.prod(shape))).reshape(shape).astype(dt))
    defined = (x <= 0).where((x < 0).where(0.0, x).detach(), x)
    assert x.relu().uop is defined.uop
