"""A value that reads a parameter's old and new value in the realize of an optimizer step (issue
33): `Tensor.realize(*opt.schedule_step(), (w + old).contiguous())` stopped with a bare
RuntimeError ("cycle: a kernel reads buffer ? both before and after an assign").

What the program means, lazily and in program order: `old = w * 3`, built before the step, reads
w's old value; `w` after `schedule_step()` is the step's ASSIGN, its new value. So `w + old` is
new + 3 * old (torch computes both eagerly in that order). The oracle is a numpy reenactment of
the program in that order, on both schedulers and the C and interpreter backends."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam

SHAPES = [(1, 1), (3, 4), (7, 5), (1, 13), (16, 2)]
OPTS = {"sgd": lambda p: SGD(p, lr=0.1), "momentum": lambda p: SGD(p, lr=0.1, momentum=0.9),
        "adam": lambda p: Adam(p, lr=0.1)}


def _new(kind: str, w: np.ndarray, g: np.ndarray) -> np.ndarray:
    if kind != "adam":  # (one step from zero momentum is plain SGD)
        return w - np.float32(0.1) * g
    m, v = 0.1 * g, 0.001 * g * g
    return w - 0.1 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-8)


# each: (what is realized with the step, from new w, old = w * 3; numpy of it from new, old)
MIXES = {
    "add": (lambda w, o: (w + o).contiguous(), lambda n, o: n + o),
    "sub_lazy": (lambda w, o: w - o, lambda n, o: n - o),
    "sum": (lambda w, o: (w * o).sum(), lambda n, o: (n * o).sum()),
    "matmul": (lambda w, o: w.T @ o, lambda n, o: n.T @ o),
    "old_first": (lambda w, o: (o * 2 + w.exp()).max(1), lambda n, o: (o * 2 + np.exp(n)).max(1)),
}


# (the oracle backend schedules nothing: its one entry checks the numpy interpreter of the
# tensor graph, which read a written buffer's new value where the old one was meant)
SCHEDULED = [("rangeify", "c"), ("kernelize", "c"), ("rangeify", "interp"), ("rangeify", "oracle")]


@pytest.fixture(params=SCHEDULED, ids=lambda p: "-".join(p))
def scheduled(request, monkeypatch):
    from rulegrad.runtime.kernelize import using

    monkeypatch.setenv("RULEGRAD_BACKEND", request.param[1])
    with using(request.param[0]):
        yield


# every mix with every optimizer on each scheduler and backend (the paths the bug was in: which
# kernel reads the buffer before or after the step's assign), one shape a case (one element,
# small, prime, batch 1, tall and narrow: the kernels' geometry), turned with the scheduler as
# well as the mix and optimizer, so that every mix, every optimizer and every scheduler meets
# every shape: 60 cases where the full product is 300 (34 CPU-s for the 60's 7: suite68).
# (With the shape turned by mix and optimizer only, a mix met three shapes: `sum` never ran on
# one element, `matmul` never on the tall 16x2, whatever the scheduler: rev68a.)
CASES = [(sched, mix, kind, SHAPES[(m + 2 * k + s) % len(SHAPES)])
         for s, sched in enumerate(SCHEDULED) for m, mix in enumerate(MIXES)
         for k, kind in enumerate(OPTS)]


@pytest.mark.parametrize("scheduled, mix, kind, shape", CASES, indirect=["scheduled"],
                         ids=str)
def test_a_value_of_the_old_and_the_new_parameter_realized_with_the_step(scheduled, shape, kind,
                                                                         mix):
    build, ref = MIXES[mix]
    w0 = (np.random.default_rng(len(shape) * 7 + shape[0]).standard_normal(shape)
          .astype(np.float32))
    w = Tensor(w0.copy(), requires_grad=True)
    opt = OPTS[kind]([w])
    loss = (w * w).sum()
    loss.backward()
    old = w * 3  # built before the step: the old value
    steps = opt.schedule_step()
    after = (w * 2).contiguous()  # built after: the new value
    out = build(w, old)  # both
    Tensor.realize(*steps, old, after, out, loss)
    new = _new(kind, w0, 2 * w0)
    np.testing.assert_allclose(w.numpy(), new, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(old.numpy(), w0 * 3, rtol=1e-6)
    np.testing.assert_allclose(after.numpy(), new * 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.numpy(), ref(new, w0 * 3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loss.numpy(), (w0 * w0).sum(), rtol=1e-5)


def test_old_and_new_momentum_in_one_value_and_a_second_step(scheduled):
    w0 = np.linspace(-2, 2, 10).astype(np.float32)
    w = Tensor(w0.copy(), requires_grad=True)
    opt = SGD([w], lr=0.1, momentum=0.9)
    want_w, want_b = w0.copy(), np.zeros_like(w0)
    for _ in range(3):  # (the second step reads the momentum the first wrote)
        opt.zero_grad()
        (w * w).sum().backward()
        old_b = opt.b[0] * 1  # before the step
        steps = opt.schedule_step()
        both = (opt.b[0] - old_b + w).contiguous()
        Tensor.realize(*steps, both)
        g = 2 * want_w
        old = want_b
        want_b = 0.9 * want_b + g
        want_w = want_w - 0.1 * want_b
        np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(both.numpy(), want_b - old + want_w, rtol=1e-5, atol=1e-5)


def test_a_pending_assign_read_with_its_old_value():
    """The same without an optimizer: an ASSIGN left for a later realize, and a value of its
    new and its old contents realized with it (and the whole buffer when the ASSIGN writes a
    slice of it)."""
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    base = np.arange(9, dtype=np.float32) * 1.5 - 4
    x = Tensor(base.copy()).realize()
    old = x * 1
    pending = Tensor(UOp(Ops.ASSIGN, x.dtype, (x[2:6].uop, (x[0:4] * 10).uop)))
    out = (pending.sum() + old[2:6]).contiguous()
    Tensor.realize(pending, out)
    want = base.copy()
    want[2:6] = base[0:4] * 10
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_allclose(out.numpy(), want[2:6].sum() + base[2:6], rtol=1e-6)


def test_a_tensor_passed_twice_beside_a_view_of_it():
    """`Tensor.realize(*opt.schedule_step(), loss)` passes a lazy loss twice (the step realizes
    its readers too); beside a view of one of them, the second one's lookup failed (KeyError)."""
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = Tensor(base) + 1
    t = a.T
    Tensor.realize(a, a, t, t)
    np.testing.assert_array_equal(a.numpy(), base + 1)
    np.testing.assert_array_equal(t.numpy(), (base + 1).T)
