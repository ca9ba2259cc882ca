"""rulegrad.jit: a step's kernels recorded once and replayed, against numpy's own step.

Each test runs a jitted function for more calls than it takes to start replaying (two warm-up
and recording calls, one confirming call) and checks every call's values against numpy, and
that the replay path really ran (`replays`, a count of calls, never a time)."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
from call_counts import python_calls
from result_holders import HOLDERS, hold, values_held

import rulegrad
from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam
from rulegrad.runtime import buffer

CALLS = 8  # the first three record; the rest replay


def _linear_sgd_np(w: np.ndarray, x: np.ndarray, y: np.ndarray, lr: float):
    """numpy's step of a linear least-squares model: (loss before the update, new w)."""
    err = x @ w - y
    loss = (err * err).mean()
    grad = 2 * x.T @ err / err.size
    return loss, w - lr * grad


def test_training_step_replays_numpys_sgd_step_by_step():
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((5, 3)).astype(np.float32)
    w = Tensor(w_np.copy(), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)

    @rulegrad.jit
    def step(x, y):
        opt.zero_grad()
        err = x @ w - y
        loss = (err * err).mean()
        loss.backward()
        opt.step(loss)
        return loss

    for _ in range(CALLS):
        x = rng.standard_normal((7, 5)).astype(np.float32)
        y = rng.standard_normal((7, 3)).astype(np.float32)
        loss = step(Tensor(x), Tensor(y))
        want_loss, w_np = _linear_sgd_np(w_np, x, y, 0.1)
        np.testing.assert_allclose(loss.item(), want_loss, rtol=1e-5)
        np.testing.assert_allclose(w.numpy(), w_np, rtol=1e-5, atol=1e-6)
    assert step.replays == CALLS - 3 and step.refused == []


def test_results_of_earlier_calls_keep_their_values():
    @rulegrad.jit
    def f(a, b):
        return (a * b + 1).sum(axis=0), a - b

    rng = np.random.default_rng(1)
    kept = []
    for _ in range(CALLS):
        a, b = rng.standard_normal((2, 4, 6)).astype(np.float32)
        kept.append((f(Tensor(a), Tensor(b)), a, b))
    for (s, d), a, b in kept:  # read after every call ran: none was overwritten
        np.testing.assert_allclose(s.numpy(), (a * b + 1).sum(axis=0), rtol=1e-5)
        np.testing.assert_array_equal(d.numpy(), a - b)
    assert f.replays == CALLS - 3


def test_new_shapes_and_aliased_arguments_record_again():
    @rulegrad.jit
    def f(a, b):
        return a * 2 + b

    rng = np.random.default_rng(2)
    for i in range(3 * CALLS):
        n = (3, 5, 8)[i % 3]
        a = rng.standard_normal(n).astype(np.float32)
        ta = Tensor(a)
        if i % 2:  # the same tensor twice: one buffer in both places
            np.testing.assert_allclose(f(ta, ta).numpy(), a * 3, rtol=1e-6)
        else:
            b = rng.standard_normal(n).astype(np.float32)
            np.testing.assert_allclose(f(ta, Tensor(b)).numpy(), a * 2 + b, rtol=1e-6)
    assert f.replays > 0


def test_an_array_handed_out_keeps_its_values_across_replays():
    w = Tensor(np.zeros(4, np.float32)).realize()

    @rulegrad.jit
    def bump(x):
        w.assign(w + x).realize()
        return w * 1

    seen = []
    for _ in range(CALLS):
        bump(Tensor(np.full(4, 1.0, np.float32)))
        seen.append(w.numpy())  # a read-only view; the next replay writes w in place
    for i, arr in enumerate(seen):
        np.testing.assert_array_equal(arr, np.full(4, i + 1.0, np.float32))
    assert bump.replays == CALLS - 3


@pytest.mark.parametrize("case", ["random", "host_read", "argument_read", "python_value",
                                  "rebinding"])
def test_steps_that_cannot_be_replayed_run_as_they_are(case):
    """What a replay would freeze (random numbers, a value read back, a Python number that
    changes, state kept by rebinding a name) is found, and such steps keep numpy's values."""
    rng = np.random.default_rng(3)
    state = {"scale": 1.0, "acc": Tensor(np.zeros(3, np.float32)).realize()}
    acc_np = np.zeros(3, np.float32)

    def f(x):
        if case == "random":
            return x + Tensor.rand(3) * 0  # the draw changes each call; its value is unused
        if case == "host_read":
            return x * 2 if x.sum().item() > 0 else x * -2
        if case == "argument_read":  # (a realized argument's own array: `numpy`'s short path)
            return x * 2 if x.numpy().sum() > 0 else x * -2
        if case == "python_value":
            state["scale"] += 1.0
            return x * Tensor([state["scale"]] * 3)
        state["acc"] = (state["acc"] + x).realize()
        return state["acc"] * 1

    jf = rulegrad.jit(f)
    scale = 1.0
    for _ in range(CALLS):
        x = rng.standard_normal(3).astype(np.float32)
        got = jf(Tensor(x)).numpy()
        if case == "random":
            want = x
        elif case in ("host_read", "argument_read"):
            want = x * 2 if x.sum() > 0 else x * -2
        elif case == "python_value":
            scale += 1.0
            want = x * np.float32(scale)
        else:
            acc_np = acc_np + x
            want = acc_np
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert jf.replays == 0 and len(jf.refused) == 1


# ---------------------------------------------------------------- the work of a replay
# what a replay must never do again: build a node, make a Buffer or a numpy array, schedule,
# look a plan or a program up, walk a graph, convert with ctypes
_GRAPH_WORK = ("uop.py:__new__", "buffer.py:__init__", "buffer.py:_take", "plans.py:key",
               "plans.py:run", "run.py:compile_program", "run.py:run_schedule",
               "schedule.py:schedule_with_outputs", "uop.py:toposort", "jit.py:_flatten",
               "C:cast", "C:empty")


def _mlp_step(sizes: tuple[int, ...], batch: int):
    """An SGD step of an MLP of `sizes` with a log-softmax loss, jitted, and its data."""
    rng = np.random.default_rng(7)
    params = []
    for d, h in zip(sizes, sizes[1:]):
        params += [Tensor((rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32),
                          requires_grad=True).realize(),
                   Tensor(np.zeros(h, np.float32), requires_grad=True).realize()]
    opt = SGD(params, lr=0.01)

    @rulegrad.jit
    def step(x, y):
        opt.zero_grad()
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = h.relu()
        loss = -(h.log_softmax(1) * y).sum(1).mean()
        loss.backward()
        opt.step(loss)
        return loss

    x = Tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32)).realize()
    y = Tensor(np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]).realize()
    return step, x, y, params


def test_a_replay_builds_no_graph_and_allocates_nothing_for_a_dropped_result():
    """A loop that reads each loss and drops it: from the second replay on, a call makes no
    node and no Buffer (the dropped result's buffer is written again), schedules nothing and
    looks nothing up. A deeper model (more kernels, more buffers) adds no Python call but the
    guard of each buffer written in place (`Buffer.prepare_write`): the kernels' calls are
    prepared once, and ctypes calls are no Python calls."""
    counts = []
    for sizes in ((6, 8, 3), (6, 8, 8, 8, 3)):
        step, x, y, params = _mlp_step(sizes, 5)
        for _ in range(5):
            step(x, y).item()
        before = next(buffer._ids)
        calls = python_calls(lambda step=step, x=x, y=y: step(x, y).item())
        assert next(buffer._ids) == before + 1  # (the read itself takes one id)
        assert [k for k in _GRAPH_WORK if calls[k]] == []
        assert step.replays == 3
        replay = next(iter(step.entries.values())).replay
        assert calls["buffer.py:prepare_write"] == len(replay.written)
        counts.append((len(replay.calls), calls))
    (k1, c1), (k2, c2) = counts
    assert k2 > k1
    assert set(c2 - c1) == {"buffer.py:prepare_write", "C:getrefcount"}
    assert set(c1 - c2) == set()


def test_a_replayed_step_still_trains_as_numpy_does():
    """The replay that reuses its loss buffer still computes every step from the current
    weights: the losses of a long run match numpy's own step, call by call."""
    step, x, y, params = _mlp_step((4, 5, 3), 6)
    w1, b1, w2, b2 = (p.numpy().astype(np.float64) for p in params)
    xs, ys = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    for _ in range(12):
        loss = step(x, y).item()
        h = xs @ w1 + b1
        a = np.maximum(h, 0)
        z = a @ w2 + b2
        logp = z - z.max(1, keepdims=True)
        logp -= np.log(np.exp(logp).sum(1, keepdims=True))
        np.testing.assert_allclose(loss, -(logp * ys).sum(1).mean(), rtol=1e-4)
        dz = (np.exp(logp) - ys) / len(xs)
        da = dz @ w2.T * (h > 0)
        w1, b1 = w1 - 0.01 * xs.T @ da, b1 - 0.01 * da.sum(0)
        w2, b2 = w2 - 0.01 * a.T @ dz, b2 - 0.01 * dz.sum(0)
    assert step.replays == 9


@pytest.mark.parametrize("holder", [*HOLDERS, "plan"])
def test_a_result_anyone_still_holds_is_never_written_again(holder):
    """A result kept in any form (its Tensor, its array, a graph over it, its Buffer, its
    BUFFER node, a realize plan whose graph reads it) keeps its values through later replays,
    which write another buffer instead."""
    @rulegrad.jit
    def f(a):
        return a * 2 + 1

    x = np.arange(6, dtype=np.float32)
    for _ in range(4):
        f(Tensor(x)).numpy()
    t = f(Tensor(x))
    base = weakref.ref(t.uop.base)
    if holder == "plan":
        for _ in range(2):  # the second realize runs the plan the first one recorded
            held = (t - 3).realize()
    else:
        held = hold(t, holder)
    del t
    for i in range(3):
        np.testing.assert_array_equal(f(Tensor(x + 10 * (i + 1))).numpy(),
                                      (x + 10 * (i + 1)) * 2 + 1)
    held = held.numpy() if holder == "plan" else values_held(held, holder)
    want = x * 2 - 2 if holder == "plan" else x * 2 + 1
    np.testing.assert_array_equal(held, want)  # the result handed out before, unchanged
    if holder == "plan":  # the plan's graph still reads the first result's buffer, unchanged
        np.testing.assert_array_equal(base().arg.data, x * 2 + 1)


@pytest.mark.parametrize("holder", [*HOLDERS, "plan", "weakref"])
@pytest.mark.parametrize("dtype, results", [(np.float32, 1), (np.int32, 1), (np.float32, 2)])
def test_a_result_held_through_calls_over_the_same_arguments_keeps_its_values(holder, dtype,
                                                                             results):
    """The same argument Tensors again, assigned new values in place (the replay that only
    runs the kernels once the last results are dropped; one result is checked apart from
    several): a result kept in any form keeps its values through later calls, each of which
    has numpy's values of its own arguments."""
    @rulegrad.jit
    def f(a, b):
        return a * 3 - b if results == 1 else (a * 3 - b, a + b)

    def first(a: Tensor, b: Tensor) -> Tensor:
        out = f(a=a, b=b)
        if results == 2:
            np.testing.assert_array_equal(out[1].numpy(), a.numpy() + b.numpy())
            return out[0]
        return out

    x, y = np.arange(7, dtype=dtype), np.arange(7, dtype=dtype)[::-1].copy()
    a, b = Tensor(x).realize(), Tensor(y).realize()
    for _ in range(5):
        np.testing.assert_array_equal(first(a, b).numpy(), x * 3 - y)
    t = first(a, b)
    if holder == "plan":
        for _ in range(2):  # the second realize runs the plan the first one recorded
            held = (t + 1).realize()
    elif holder == "weakref":
        held = weakref.ref(t)
        np.testing.assert_array_equal(t.numpy(), x * 3 - y)
    else:
        held = hold(t, holder)
    del t
    for i in range(1, 4):
        a.assign(Tensor((x + i).astype(dtype)))
        np.testing.assert_array_equal(first(a, b).numpy(), (x + i) * 3 - y)
    if holder == "plan":
        np.testing.assert_array_equal(held.numpy(), x * 3 - y + 1)
    elif holder == "weakref":  # (no one else holds it: it is gone, never handed out again)
        assert held() is None or held() is not first(a, b)
    else:
        np.testing.assert_array_equal(values_held(held, holder), x * 3 - y)
    assert f.replays == 6


def test_the_same_arguments_again_are_not_keyed_again_and_read_current_values():
    """A call with the very argument nodes of the last replayed call skips building its key;
    it still reads the arguments' current values (an assign, a move to new storage), and any
    other call (new nodes, another shape, a keyword call) is keyed and right."""
    @rulegrad.jit
    def f(a, b):
        return a * b - a

    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((2, 16)).astype(np.float32)
    a, b = Tensor(x).realize(), Tensor(y).realize()
    for i in range(6):
        a.assign(Tensor(x + i))
        np.testing.assert_allclose(f(a, b).numpy(), (x + i) * y - (x + i), rtol=1e-6)
    held = a.numpy()  # the next assign moves a's buffer to new storage
    a.assign(Tensor(x * 3))
    calls = python_calls(lambda: np.testing.assert_allclose(
        f(a, b).numpy(), x * 3 * y - x * 3, rtol=1e-6))
    assert calls["jit.py:_tensors_key"] == 0 and calls["jit.py:_flatten"] == 0
    np.testing.assert_array_equal(held, x + 5)
    short = Tensor(x[:8]).realize()  # another shape right after: keyed, run as it is
    np.testing.assert_allclose(f(short, b[:8]).numpy(), x[:8] * y[:8] - x[:8], rtol=1e-6)
    np.testing.assert_allclose(f(b=b, a=a).numpy(), x * 3 * y - x * 3, rtol=1e-6)
    np.testing.assert_allclose(f(b, a).numpy(), y * x * 3 - y, rtol=1e-6)
    replays = f.replays
    np.testing.assert_allclose(f(a, b).numpy(), x * 3 * y - x * 3, rtol=1e-6)
    assert f.replays == replays + 1


def test_a_returned_argument_is_this_calls_argument():
    """A step that returns an argument, read by a kernel or by none, returns the argument of
    this call on a replay, never the recorded call's."""
    @rulegrad.jit
    def f(a, b):
        return a * 2, a, b

    for i in range(CALLS):
        a, b = Tensor(np.full(3, i, np.float32)), Tensor(np.full(3, 10 + i, np.float32))
        x, y, z = f(a, b)
        np.testing.assert_array_equal(x.numpy(), np.full(3, 2 * i, np.float32))
        np.testing.assert_array_equal(y.numpy(), np.full(3, i, np.float32))
        np.testing.assert_array_equal(z.numpy(), np.full(3, 10 + i, np.float32))
    assert f.replays == CALLS - 3


def test_a_replay_runs_threaded_kernels_of_every_kind_from_one_c_call():
    """A replay of several kernels is one C call (backends/c/driver.py), launched kernels too:
    a packed product over threads (its shared scratch), a threaded sum (its slots and their
    finish) and a threaded elementwise kernel. Their values match numpy on every call, over new
    arguments each time, and a replay enters none of launch.py's Python wrappers."""
    @rulegrad.jit
    def f(a, b, x):
        return (a @ b).relu(), (x * 3).sum(), x * x + 1

    rng = np.random.default_rng(11)
    for i in range(CALLS):
        a = rng.standard_normal((256, 256)).astype(np.float32)
        b = rng.standard_normal((256, 256)).astype(np.float32)
        x = rng.standard_normal(1 << 22).astype(np.float32)
        args = Tensor(a).realize(), Tensor(b).realize(), Tensor(x).realize()
        calls = python_calls(lambda args=args: f(*args))
        p, s, e = f(*args)
        np.testing.assert_allclose(p.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(s.item(), (x.astype(np.float64) * 3).sum(), rtol=1e-4)
        np.testing.assert_allclose(e.numpy(), x * x + 1, rtol=1e-6)
        if i >= 3:
            assert not [k for k in calls if k.startswith("launch.py:")], calls
    replay = next(iter(f.entries.values())).replay
    launched = [k.launch for prog in replay.progs for k in prog.kernels if k.launch[0]]
    assert {bool(shared[0]) for _, _, shared, _ in launched} == {True, False}  # (the kinds ran)
    assert any(combine for _, combine, _, _ in launched)
    assert f.replays == 2 * CALLS - 3


_OPTIMIZERS = {  # (rulegrad's, torch's) of the same settings
    "sgd": (lambda p: SGD(p, lr=0.05), lambda torch, p: torch.optim.SGD(p, lr=0.05)),
    "momentum": (lambda p: SGD(p, lr=0.05, momentum=0.9, nesterov=True),
                 lambda torch, p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
    "adam": (lambda p: Adam(p, lr=0.01), lambda torch, p: torch.optim.Adam(p, lr=0.01)),
}


@pytest.mark.parametrize("sizes,optim", [((784, 256, 10, 128), "sgd"), ((64, 128, 10, 64), "sgd"),
                                         ((13, 7, 3, 1), "sgd"), ((64, 128, 10, 64), "momentum"),
                                         ((64, 128, 10, 64), "adam")])
def test_a_replayed_training_step_has_torchs_losses(sizes, optim):
    """bench/peers.py's training step (and a prime, batch-1 one; SGD with momentum, Adam, whose
    state is written in place too), jitted, against torch's step: the losses of a run over new
    batches each step, call by call, and the parameters after it."""
    torch = pytest.importorskip("torch")
    d, h, o, b = sizes
    rng = np.random.default_rng(3)
    w = [(rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32), np.zeros(h, np.float32),
         (rng.standard_normal((h, o)) / np.sqrt(h)).astype(np.float32), np.zeros(o, np.float32)]
    params = [Tensor(v.copy(), requires_grad=True).realize() for v in w]
    make_opt, make_torch_opt = _OPTIMIZERS[optim]
    opt = make_opt(params)

    @rulegrad.jit
    def step(x, y):
        opt.zero_grad()
        logits = (x @ params[0] + params[1]).relu() @ params[2] + params[3]
        loss = -(logits.log_softmax(1) * y).sum(1).mean()
        loss.backward()
        opt.step(loss)
        return loss

    tp = [torch.from_numpy(v.copy()).requires_grad_() for v in w]
    topt = make_torch_opt(torch, tp)
    for _ in range(CALLS):
        x = rng.standard_normal((b, d)).astype(np.float32)
        y = np.eye(o, dtype=np.float32)[rng.integers(0, o, b)]
        loss = step(Tensor(x), Tensor(y)).item()
        topt.zero_grad()
        logits = torch.relu(torch.from_numpy(x) @ tp[0] + tp[1]) @ tp[2] + tp[3]
        want = -(torch.log_softmax(logits, 1) * torch.from_numpy(y)).sum(1).mean()
        want.backward()
        topt.step()
        np.testing.assert_allclose(loss, want.item(), rtol=1e-5, atol=1e-5)
    for p, t in zip(params, tp):
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert step.replays == CALLS - 3 and step.refused == []


def test_a_step_with_a_kernel_over_more_buffers_than_the_c_loop_calls_still_replays():
    """The C loop calls plain kernels of up to MAX_ARITY buffers; a step with a larger one runs
    its kernels one by one from Python, with the same values."""
    from rulegrad.backends.c.driver import MAX_ARITY

    @rulegrad.jit
    def f(*xs):
        s = xs[0]
        for x in xs[1:]:
            s = s + x
        s = s.contiguous()
        return s.sum(), s * 2

    rng = np.random.default_rng(5)
    for _ in range(CALLS):
        arrays = [rng.standard_normal(8).astype(np.float32) for _ in range(MAX_ARITY + 8)]
        total, twice = f(*[Tensor(a) for a in arrays])
        want = np.sum(arrays, axis=0, dtype=np.float64)
        np.testing.assert_allclose(twice.numpy(), want * 2, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(total.item(), want.sum(), rtol=1e-4, atol=1e-5)
    replay = next(iter(f.entries.values())).replay
    assert max(k.nparams for prog in replay.progs for k in prog.kernels) > MAX_ARITY
    assert f.replays == CALLS - 3


def test_a_new_dtype_or_shape_records_again_and_each_replays_its_own_kernels():
    """Calls alternating between argument dtypes and shapes: each kind of call is a key of its
    own, recorded from its own calls, and every call has numpy's values (a replay of another
    kind's kernels would read float64 data as float32, or the wrong number of elements)."""
    @rulegrad.jit
    def f(a, b):
        return (a * b).sum(axis=0) + a[0], a - b

    rng = np.random.default_rng(9)
    kinds = [(np.float32, (3, 5)), (np.float64, (3, 5)), (np.int32, (3, 5)), (np.float32, (4, 2))]
    for i in range(CALLS * len(kinds)):
        dt, shape = kinds[i % len(kinds)]
        a, b = (rng.integers(-9, 9, shape).astype(dt) + (0.5 if dt != np.int32 else 0)
                for _ in range(2))
        s, d = f(Tensor(a), Tensor(b))
        assert d.dtype.np == dt
        np.testing.assert_allclose(s.numpy(), (a * b).sum(axis=0) + a[0], rtol=1e-6)
        np.testing.assert_array_equal(d.numpy(), a - b)
    assert len(f.entries) == len(kinds) and f.replays == len(kinds) * (CALLS - 3)


# ---------------------------------------------------------------- numpy arrays, fresh Tensors
def test_a_step_called_with_numpy_arrays_copies_them_into_its_own_buffers():
    """numpy arrays as arguments (the step gets `Tensor(array)`): keyed by shape and dtype, and
    a replay copies each array into a buffer of the replay's own, in place: no Tensor, node
    or Buffer is made for them, and the kernels' argument lists stay as they are. Every
    call's values are numpy's, read after all calls ran and after the caller wrote into its
    arrays; a new shape or dtype records again."""
    @rulegrad.jit
    def f(a, b):
        return (a * b + 1).sum(axis=1), a - b

    rng = np.random.default_rng(46)
    kept = []
    for i in range(3 * CALLS):
        n, dt = ((5, np.float32), (7, np.float32), (5, np.float64))[i % 3]
        a, b = rng.standard_normal((2, 3, n)).astype(dt)
        kept.append((f(a, b), a.copy(), b.copy()))
        a[:] = 99  # (the caller's array, written after the call: the results keep theirs)
    for (s, d), a, b in kept:
        np.testing.assert_allclose(s.numpy(), (a * b + 1).sum(axis=1), rtol=1e-6)
        np.testing.assert_array_equal(d.numpy(), a - b)
        assert s.dtype.np == a.dtype
    assert f.replays == 3 * (CALLS - 3) and f.refused == []
    a, b = rng.standard_normal((2, 3, 5)).astype(np.float32)
    f(a, b)  # (a result dropped: the next replay writes its buffers again)
    calls = python_calls(lambda: f(a, b))
    assert [k for k in _GRAPH_WORK + ("tensor.py:__init__", "buffer.py:host_copy",
                                      "lazy.py:materialize") if calls[k]] == []


def test_arrays_of_any_layout_tensors_and_numbers_mix_in_one_call():
    """A call of a strided array, a fresh Tensor, a realized one and a Python number: each
    kind keyed as its own (a number by its value: two numbers, two recordings), and every
    replay's values numpy's."""
    rng = np.random.default_rng(50)
    w_np = rng.standard_normal(4).astype(np.float32)
    w = Tensor(w_np).realize()
    f = rulegrad.jit(lambda x, s, t: x * s + t + w)
    for i in range(2 * CALLS):
        x = rng.standard_normal((4, 8)).astype(np.float32)[:, ::2]  # (not C-contiguous)
        s = (2.0, 3)[i % 2]
        t = rng.standard_normal(4).astype(np.float32)
        np.testing.assert_allclose(f(x, s, Tensor(t)).numpy(), x * np.float32(s) + t + w_np,
                                   rtol=1e-6)
    assert f.replays == 2 * (CALLS - 3) and f.refused == []


@pytest.mark.parametrize("step", ["returned", "viewed", "written"])
def test_numpy_arguments_the_step_writes_or_returns_get_a_buffer_per_call(step):
    """An array argument the step returns (or a view of it), or writes in place, is a buffer
    of that call's own (a copy made in the replay's place would be overwritten by the next
    call under the result handed out). The others still take the replay's buffers."""
    def f(a, b):
        if step == "written":
            a.assign(a * 2).realize()
            return a + b
        return (a if step == "returned" else a[1:].realize()), a + b

    want = {"returned": lambda a, b: (a, a + b), "viewed": lambda a, b: (a[1:], a + b),
            "written": lambda a, b: a * 2 + b}[step]
    jf = rulegrad.jit(f)
    rng = np.random.default_rng(47)
    kept = [(jf(a, b), a.copy(), b.copy())
            for a, b in rng.standard_normal((CALLS, 2, 3, 4)).astype(np.float32)]
    for out, a, b in kept:
        for got, expected in zip(out if isinstance(out, tuple) else (out,),
                                 (want(a, b) if step != "written" else (want(a, b),))):
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert jf.replays == CALLS - 3
    (entry,) = jf.entries.values()
    assert [d is not None for d in entry.replay.host_dst] == [False, True]


def test_fresh_tensors_of_arrays_are_keyed_without_building_their_graph():
    """`step(Tensor(x), Tensor(y))` with new arrays each call: the key is each Tensor's
    record (shape, dtype, the buffer's device): no node is built for the arguments, and the
    replay patches their buffers' addresses in."""
    @rulegrad.jit
    def f(a, b):
        return (a * b).exp() + a

    rng = np.random.default_rng(48)
    for x, y in rng.standard_normal((CALLS, 2, 16)).astype(np.float32):
        np.testing.assert_allclose(f(a=Tensor(x), b=Tensor(y)).numpy(), np.exp(x * y) + x,
                                   rtol=1e-5, atol=1e-6)
    x, y = rng.standard_normal((2, 16)).astype(np.float32)
    calls = python_calls(lambda: f(a=Tensor(x), b=Tensor(y)))
    assert [k for k in _GRAPH_WORK + ("lazy.py:materialize",) if calls[k]] == []
    np.testing.assert_allclose(f(a=Tensor(x), b=Tensor(y)).numpy(), np.exp(x * y) + x,
                               rtol=1e-5, atol=1e-6)
    assert f.replays == CALLS - 3 + 2


def test_python_numbers_are_keyed_by_their_value_and_sign():
    """A number argument is part of the key by its type and value, a float by its hex form:
    -0.0 and 0.0 are two keys (each its own recording: the sign of x * s differs), NaN
    is one key and replays."""
    f = rulegrad.jit(lambda x, s: x * s)
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for s in [0.0, -0.0, float("nan"), 2.5] * CALLS:
        got = f(Tensor(x), s).numpy()
        want = x * np.float32(s)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert f.replays == 4 * (CALLS - 3) and f.refused == []


# ---------------------------------------------------------------- views
_VIEW_STEPS = {
    "a.T": (lambda a: a.permute(1, 0).realize(), lambda x: x.T),
    "a[1:3]": (lambda a: a[1:3].realize(), lambda x: x[1:3]),
    "(b, b.T)": (lambda a: _and_view(a * 2), lambda x: (x * 2, (x * 2).T)),
    "b.T alone": (lambda a: _and_view(a * 2)[1], lambda x: (x * 2).T),
    "(b.T, b)": (lambda a: _and_view(a * 2)[::-1], lambda x: ((x * 2).T, x * 2)),
    "(b, b.reshape(16))": (lambda a: _reshaped((a * 2).realize()),
                           lambda x: (x * 2, (x * 2).reshape(16))),
}


def _and_view(b: Tensor) -> tuple[Tensor, Tensor]:
    t = b.permute(1, 0)
    Tensor.realize(b, t)  # (realized together: t stays a view of b's buffer)
    return b, t


def _reshaped(b: Tensor) -> tuple[Tensor, Tensor]:
    return b, b.reshape(16).realize()


@pytest.mark.parametrize("step", list(_VIEW_STEPS))
def test_a_step_returning_views_replays_them_over_each_calls_buffers(step):
    """A realized view of a buffer (`a.T` of an argument, a slice, a view of a result the step
    made, a result also returned in another shape) is replayed as the same view of this
    call's buffer: every call's values are numpy's, read after all calls ran."""
    fn, want = _VIEW_STEPS[step]
    f = rulegrad.jit(fn)
    rng = np.random.default_rng(49)
    kept = [(f(Tensor(x).realize()), x) for x in rng.standard_normal((CALLS, 4, 4))
            .astype(np.float32)]
    for out, x in kept:
        expected = want(x)
        for got, w in zip(out if isinstance(out, tuple) else (out,),
                          expected if isinstance(expected, tuple) else (expected,)):
            assert got.shape == w.shape
            np.testing.assert_array_equal(got.numpy(), w)
    assert f.replays == CALLS - 3 and f.refused == []
    a = Tensor(np.zeros((4, 4), np.float32)).realize()
    for _ in range(CALLS):  # the same argument each call (the last call's nodes: no key)
        x = rng.standard_normal((4, 4)).astype(np.float32)
        a.assign(Tensor(x))
        out, expected = f(a), want(x)
        for got, w in zip(out if isinstance(out, tuple) else (out,),
                          expected if isinstance(expected, tuple) else (expected,)):
            np.testing.assert_array_equal(got.numpy(), w)


def test_a_step_that_returns_nothing_replays_its_assigns():
    """An optimizer-like step returns None: its recording has no results (the record read a
    name it set only for returned tensors, and every call raised UnboundLocalError)."""
    w = Tensor(np.zeros(4, np.float32)).realize()
    want = np.zeros(4, np.float32)

    @rulegrad.jit
    def step(x):
        w.assign(w * 0.5 + x).realize()

    for i in range(6):
        x = np.arange(4, dtype=np.float32) + i
        assert step(Tensor(x).realize()) is None
        want = want * 0.5 + x
        np.testing.assert_allclose(w.numpy(), want, rtol=1e-6)
    assert step.replays > 0
