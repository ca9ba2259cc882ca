"""Parameters that are views of one buffer, stepped by an optimizer, against torch: torch
updates the parameters one after another, so where two views overlap the later update reads the
value the earlier one wrote, and the base sees every write. Symbolic views (`a[:n]`) as
parameters, and `Tensor(t)` of a tensor, which copies as `torch.tensor(t)` does."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor, Variable  # noqa: E402
from rulegrad.nn.optim import SGD, Adam  # noqa: E402

BASE = np.random.default_rng(7).standard_normal((3, 5)).astype(np.float32)
STEPS = 3

# two parameters over one base: disjoint (a row and the others transposed; two column blocks),
# overlapping column blocks, and three views, two of them overlapping, beside another buffer
VIEWS = {
    "row_and_rows_T": lambda b: [b[0], b[1:].T],
    "column_blocks": lambda b: [b[:, :2], b[:, 2:]],
    "overlapping": lambda b: [b[:, :3], b[:, 1:]],
    "three_views": lambda b: [b[1:, 1:4], b[0], b[:, 2:].T],
}
OPTS = {
    "sgd": (SGD, torch.optim.SGD, dict(lr=0.1)),
    "sgd_momentum": (SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    "sgd_nesterov_wd": (SGD, torch.optim.SGD,
                        dict(lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=True)),
    "adam": (Adam, torch.optim.Adam, dict(lr=0.1)),
}


def loss_of(ps):
    # a different function per parameter: each gets its own gradient
    return sum(((p * p * (k + 1)).sum() + (p * p * p).sum() * 0.1) for k, p in enumerate(ps))


def run(make, views, opt_cls, kw, other=None):
    """STEPS steps of opt_cls over the views of a base made by `make` (rulegrad's Tensor or
    torch.tensor), `other` second among the parameters; the base and the parameters after."""
    base = make(BASE.copy())
    ps = views(base)
    for p in ps:
        p.requires_grad_()
    if other is not None:
        ps.insert(1, other)
    opt = opt_cls(ps, **kw)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_of(ps).backward()
        opt.step()
    return base, ps


def run_rulegrad(views, opt_cls, kw, other=None):
    return run(Tensor, views, opt_cls, kw, other)


def run_torch(views, opt_cls, kw, other=None):
    return run(torch.tensor, views, opt_cls, kw, other)


@pytest.mark.parametrize("opt", sorted(OPTS))
@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_views_of_one_buffer_step_as_torch(kind, opt):
    ours, theirs, kw = OPTS[opt]
    other = np.linspace(-1, 1, 4, dtype=np.float32)  # a parameter of its own buffer between
    base, ps = run_rulegrad(VIEWS[kind], ours, kw, Tensor(other.copy()).requires_grad_())
    tbase, tps = run_torch(VIEWS[kind], theirs, kw,
                           torch.tensor(other.copy()).requires_grad_())
    np.testing.assert_allclose(base.numpy(), tbase.detach().numpy(), rtol=1e-5, atol=1e-5)
    for i, (p, tp) in enumerate(zip(ps, tps)):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"parameter {i}")


def test_a_base_and_its_view_step_one_after_another():
    """A base and a view of it, both parameters (torch makes such a view a non-leaf, so the
    oracle is torch's SGD loop in numpy float64): the view's update reads the base's new
    value, and both the base and the view hold the view's write."""
    base = Tensor(BASE.copy())
    row = base[1]
    base.requires_grad_()
    row.requires_grad_()
    opt = SGD([base, row], lr=0.1, momentum=0.5)
    b, bufs = BASE.astype(np.float64), [0.0, 0.0]
    for _ in range(STEPS):
        opt.zero_grad()
        loss = (base * base).sum() + (row * row * row).sum()
        loss.backward()
        opt.step(loss)
        grads = [2 * b, 3 * b[1] ** 2]
        for i, g in enumerate(grads):  # torch's _single_tensor_sgd, one parameter at a time
            bufs[i] = 0.5 * bufs[i] + g
            if i == 0:
                b = b - 0.1 * bufs[i]
            else:
                b[1] = b[1] - 0.1 * bufs[i]
    np.testing.assert_allclose(base.numpy(), b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(row.numpy(), b[1], rtol=1e-5, atol=1e-5)


def test_loss_and_schedule_step_with_shared_storage():
    """`step(loss)` realizes the loss from the values before the step, and `schedule_step`
    still gives the step (the shared storage's earlier rounds realized inside it)."""
    for use_schedule_step in (False, True):
        base, tbase = Tensor(BASE.copy()), torch.tensor(BASE.copy())
        ps, tps = [base[:, :3], base[:, 1:]], [tbase[:, :3], tbase[:, 1:]]
        for p, tp in zip(ps, tps):
            p.requires_grad_()
            tp.requires_grad_()
        opt, topt = SGD(ps, lr=0.1), torch.optim.SGD(tps, lr=0.1)
        for _ in range(STEPS):
            opt.zero_grad()
            topt.zero_grad()
            loss, tloss = loss_of(ps), loss_of(tps)
            loss.backward()
            tloss.backward()
            if use_schedule_step:
                Tensor.realize(loss, *opt.schedule_step())
            else:
                opt.step(loss)
            topt.step()
            np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
        np.testing.assert_allclose(base.numpy(), tbase.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", ["c", "interp", "oracle"])
def test_assign_through_a_symbolic_view_writes_its_rows_only(backend, monkeypatch):
    """`a[:n]` is stored at n's maximum: its assign computed every row of `a` and wrote them
    all (`a[n:]` changed); torch writes the first n."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    a_np = np.arange(1, 13, dtype=np.float32).reshape(6, 2)
    a, ta = Tensor(a_np.copy()), torch.tensor(a_np.copy())
    n = Variable("n", 1, 6).bind(4)
    a[:n].assign(a[:n] * 0.5 - 1)
    ta[:4] = ta[:4] * 0.5 - 1
    np.testing.assert_array_equal(a.numpy(), ta.numpy())
    m = Variable("m", 1, 2).bind(1)  # two symbolic axes, through a transpose
    v = a[:n, :m].T
    v.assign(v + 100)
    ta[:4, :1] += 100
    np.testing.assert_array_equal(a.numpy(), ta.numpy())


@pytest.mark.parametrize("opt", sorted(OPTS))
def test_symbolic_view_parameter_steps_its_base(opt):
    """`p = a[:n]` trained: each step writes the bound rows of `a` (and only those), with
    momentum and Adam state of p's symbolic shape, as torch's `a[:3]`."""
    ours, theirs, kw = OPTS[opt]
    a, ta = Tensor(BASE.copy()), torch.tensor(BASE.copy())
    p, tp = a[:Variable("n", 1, 3).bind(2)], ta[:2]
    p.requires_grad_()
    tp.requires_grad_()
    o, to = ours([p], **kw), theirs([tp], **kw)
    for _ in range(STEPS):
        o.zero_grad()
        to.zero_grad()
        loss_of([p]).backward()
        loss_of([tp]).backward()
        o.step()
        to.step()
    np.testing.assert_allclose(a.numpy(), ta.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make", ["buffer", "view", "requires_grad"])
def test_a_tensor_of_a_tensor_is_a_copy(make):
    """`Tensor(t)` copies t's storage, as `torch.tensor(t)` does: an optimizer's step on the new
    tensor leaves t as it was, and an assign into t leaves the new tensor as it was."""
    t, tt = Tensor(BASE.copy()), torch.tensor(BASE.copy())
    if make == "view":
        t, tt = t[1:].T, tt[1:].T
    p = Tensor(t, requires_grad=True) if make == "requires_grad" else Tensor(t)
    tp = tt.clone().detach()
    p.requires_grad_()
    tp.requires_grad_()
    opt, topt = SGD([p], lr=0.5, momentum=0.5), torch.optim.SGD([tp], lr=0.5, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        topt.zero_grad()
        (p * t).sum().backward()
        (tp * tt).sum().backward()
        opt.step()
        topt.step()
    np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-6)
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-6)
    t.assign(t * 3)  # and the other way: the copy keeps its values
    tt.mul_(3)
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-6)


def test_a_jitted_step_of_views_of_one_buffer_replays_torchs_steps():
    """The rounds of a step (one schedule each) are recorded and replayed by rulegrad.jit."""
    import rulegrad

    base, tbase = Tensor(BASE.copy()), torch.tensor(BASE.copy())
    ps, tps = [base[:, :3], base[:, 1:]], [tbase[:, :3], tbase[:, 1:]]
    for p, tp in zip(ps, tps):
        p.requires_grad_()
        tp.requires_grad_()
    opt, topt = SGD(ps, lr=0.1, momentum=0.5), torch.optim.SGD(tps, lr=0.1, momentum=0.5)

    @rulegrad.jit
    def step(w):
        opt.zero_grad()
        loss = (ps[0] * ps[0] * w).sum() + (ps[1] * ps[1] * ps[1]).sum()
        loss.backward()
        opt.step(loss)
        return loss

    for i in range(5):  # (the jit records on its second call and replays from its third)
        w = np.full((3, 3), 1 + i, np.float32)
        loss = step(Tensor(w))
        topt.zero_grad()
        tloss = (tps[0] * tps[0] * torch.tensor(w)).sum() + (tps[1] ** 3).sum()
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
        np.testing.assert_allclose(base.numpy(), tbase.detach().numpy(), rtol=1e-5, atol=1e-5)
