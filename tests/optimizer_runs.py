"""The ways a training step is run in the optimizer tests that compare with torch: each
(scheduler, backend, optimizer on) as a pytest fixture, and each optimizer paired with torch's.
Callers import torch first (pytest.importorskip)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam

# (scheduler, backend, optimizer on): the oracle schedules nothing
RUNS = [("rangeify", "c", "1"), ("kernelize", "c", "1"), ("rangeify", "c", "0"),
        ("kernelize", "c", "0"), ("rangeify", "interp", "1"), ("rangeify", "oracle", "1")]


def runs_fixture(runs: list[tuple[str, str, str]]):
    """A fixture `run` that sets each of `runs` for one test."""
    @pytest.fixture(params=runs,
                    ids=lambda p: "-".join(p[:2]) + ("-opt0" if p[2] == "0" else ""))
    def run(request, monkeypatch):
        from rulegrad.runtime.kernelize import using

        scheduler, backend, opt = request.param
        monkeypatch.setenv("RULEGRAD_BACKEND", backend)
        monkeypatch.setenv("RULEGRAD_OPT", opt)
        with using(scheduler):
            yield
    return run


OPTIMIZERS = {
    "sgd": (lambda p: SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "momentum": (lambda p: SGD(p, lr=0.1, momentum=0.9),
                 lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    "adam": (lambda p: Adam(p, lr=0.1), lambda p: torch.optim.Adam(p, lr=0.1)),
    "adamw": (lambda p: Adam(p, lr=0.1, weight_decay=0.1),
              lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1)),
}


# A small MLP with a log-softmax loss, in rulegrad and torch from one set of weights (the step
# tests' model). Primes: no size is a vector's multiple.
D, H, C = 11, 7, 5


def mlp_loss(lib, p: dict, x, y):
    """The MLP's mean log-softmax loss, in rulegrad (lib=Tensor) or torch: the same expression."""
    relu = (lambda t: t.relu()) if lib is Tensor else torch.relu
    logits = relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return -(logits.log_softmax(1) * y).sum(1).mean()


def mlp_models(kind: str, seed: int = 0) -> list:
    """[our weights, our optimizer `kind`, torch's weights, torch's optimizer], equal weights."""
    rng = np.random.default_rng(seed)
    w = {"w1": rng.standard_normal((D, H)) / np.sqrt(D), "b1": rng.standard_normal(H) * 0.1,
         "w2": rng.standard_normal((H, C)) / np.sqrt(H), "b2": rng.standard_normal(C) * 0.1}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    ours = {k: Tensor(v, requires_grad=True).realize() for k, v in w.items()}
    theirs = {k: torch.tensor(v, requires_grad=True) for k, v in w.items()}
    make, make_torch = OPTIMIZERS[kind]
    return [ours, make(list(ours.values())), theirs, make_torch(list(theirs.values()))]


def mlp_batch(rng, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """`batch` inputs and one-hot targets."""
    x = rng.standard_normal((batch, D)).astype(np.float32)
    return x, np.eye(C, dtype=np.float32)[rng.integers(0, C, batch)]


def assert_as_torch(loss, want, ours: dict, theirs: dict) -> None:
    """A step's loss and every parameter after it, against torch's."""
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-4, atol=1e-5)
    for k in ours:
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=k)


def step_both(ours: dict, opt, theirs: dict, topt, x_np, y_np, loss_fn=mlp_loss) -> None:
    """One step on each side over the same batch (ours from a fresh Tensor of each array, the
    loss read after `opt.step(loss)`); the losses and parameters agree."""
    topt.zero_grad()
    want = loss_fn(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
    want.backward()
    topt.step()
    x, y = Tensor(x_np), Tensor(y_np)
    opt.zero_grad()
    loss = loss_fn(Tensor, ours, x, y)
    loss.backward()
    opt.step(loss)
    assert_as_torch(loss, want, ours, theirs)
