"""Review of hunt68 (rev68d): torch's ignore_index in nll_loss and cross_entropy, against torch.

An ignored target adds 0 to the loss and gets a 0 gradient, also where every target is ignored
(the mean is 0 / 0 = NaN, its gradient still 0 at every ignored row) and where an ignored row's
class-0 log-probability is -inf; nll_loss takes torch's unbatched form, (C,) log-probabilities
and a 0-d label; a jitted loss step with its targets as arguments replays."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import rulegrad
from rulegrad import Tensor
from rulegrad.nn.optim import SGD


def _both(fn, x: np.ndarray, y: np.ndarray, computed: bool = False, **kw):
    """(ours, torch's) loss and gradient of x for fn ('nll' over log_softmax, or 'ce')."""
    cdim = 0 if x.ndim == 1 else 1
    tx = torch.tensor(x, requires_grad=True)
    tin = tx.log_softmax(cdim) if fn == "nll" else tx
    tl = (F.nll_loss if fn == "nll" else F.cross_entropy)(tin, torch.tensor(y).long(), **kw)
    tl.sum().backward()
    ox = Tensor(x, requires_grad=True)
    oy = Tensor(y) + 0 if computed else Tensor(y)  # (+ 0: a target computed in the graph)
    oin = ox.log_softmax(cdim) if fn == "nll" else ox
    ol = (oin.nll_loss if fn == "nll" else oin.cross_entropy)(oy, **kw)
    ol.sum().backward()
    return (ol.numpy(), ox.grad.numpy()), (tl.detach().numpy(), tx.grad.numpy())


def _agree(ours, theirs):
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # (NaN where NaN)


@pytest.mark.parametrize("fn", ["nll", "ce"])
@pytest.mark.parametrize("computed", [False, True])
def test_every_target_ignored_gives_a_nan_mean_and_zero_gradients(fn, computed):
    # nll_loss's gradient was NaN everywhere: each row's weight 0 times the mean's 1 / 0
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    ours, theirs = _both(fn, x, np.array([-100, -100, -100]), computed)
    assert np.isnan(theirs[0]) and not np.isnan(theirs[1]).any()
    _agree(ours, theirs)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_an_ignored_row_with_a_minus_inf_class_0_adds_nothing(reduction):
    # an ignored row is read as class 0 weighted 0: -(-inf) * 0 was a NaN loss
    with np.errstate(divide="ignore"):
        lp = np.log(np.array([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], np.float32))
    y = np.array([-100, 2, 0])
    want = F.nll_loss(torch.tensor(lp), torch.tensor(y), reduction=reduction).numpy()
    got = Tensor(lp).nll_loss(Tensor(y), reduction=reduction).numpy()
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("label", [2, -100])
def test_nll_loss_takes_torchs_unbatched_form(reduction, label):
    # (C,) log-probabilities and a 0-d label: it read self.shape[1], a bare IndexError
    x = np.random.default_rng(1).standard_normal(5).astype(np.float32)
    ours, theirs = _both("nll", x, np.array(label), reduction=reduction)
    _agree(ours, theirs)


@pytest.mark.parametrize("fn", ["nll", "ce"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_k_dim_targets_with_ignored_places_against_torch(fn, reduction):
    x = np.random.default_rng(2).standard_normal((2, 4, 3, 2)).astype(np.float32)
    y = np.array([[[1, -100], [2, 3], [0, -100]], [[-100, -100], [3, 3], [1, 0]]])
    for computed in (False, True):
        kw = {"label_smoothing": 0.3} if fn == "ce" else {}
        _agree(*_both(fn, x, y, computed, reduction=reduction, **kw))


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_a_jitted_loss_step_with_ignored_targets_replays_torchs_steps(loss):
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((4, 5)).astype(np.float32)
    w = Tensor(w0.copy(), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)
    tw = torch.tensor(w0.copy(), requires_grad=True)

    def logits(x, mod):
        z = x @ w if mod is Tensor else x @ tw
        return z if loss == "cross_entropy" else z.log_softmax(-1)

    @rulegrad.jit
    def step(x, y):
        opt.zero_grad()
        out = getattr(logits(x, Tensor), loss)(y)
        out.backward()
        opt.step(out)
        return out

    calls = 8
    for i in range(calls):
        x = rng.standard_normal((3, 4)).astype(np.float32)
        y = rng.integers(0, 5, (3,)).astype(np.int32)
        y[i % 3] = -100
        want = getattr(F, loss)(logits(torch.tensor(x), torch), torch.tensor(y).long())
        want.backward()
        with torch.no_grad():
            tw -= 0.1 * tw.grad
            tw.grad = None
        np.testing.assert_allclose(step(Tensor(x), Tensor(y)).item(), want.item(), rtol=1e-5)
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert step.replays == calls - 3 and step.refused == []


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_a_minus_inf_logit_off_the_target_class_is_torchs_finite_loss(reduction, label_smoothing):
    # (a masked class): the one-hot's 0 times its -inf log-probability was a NaN loss
    x = np.array([[0.0, -np.inf, 1.0], [2.0, 1.0, 0.0], [-np.inf, 0.5, 0.0]], np.float32)
    y = np.array([0, -100, 2])
    ours, theirs = _both("ce", x, y, reduction=reduction, label_smoothing=label_smoothing)
    if label_smoothing == 0:
        assert np.isfinite(theirs[0]).all()
    _agree(ours, theirs)


def test_sparse_categorical_crossentropy_unsmoothed_with_a_minus_inf_logit():
    # torch's cross_entropy is the oracle: with no smoothing both are the picked log-probability
    x = np.array([[0.0, -np.inf, 1.0], [2.0, 1.0, 0.0]], np.float32)
    y = np.array([0, 1])
    want = F.cross_entropy(torch.tensor(x), torch.tensor(y), reduction="none").numpy()
    got = Tensor(x).sparse_categorical_crossentropy(Tensor(y), reduction="none").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
