"""Lazy records (runtime/lazy.py): a Tensor of host data and the elementwise ops over such
tensors build no graph until one is read, and a record whose form has a plan runs it keyed by
the record itself. Every value is checked against numpy, on calls that run the plan (fresh
arrays each call, as a loop over batches makes them)."""

from __future__ import annotations

import numpy as np
import pytest
from call_counts import python_calls
from test_plans import _fresh_plans  # noqa: F401 - the autouse fixture, shared

from rulegrad import Tensor
from rulegrad.runtime import plans
from rulegrad.runtime.errors import InvalidArgument
from rulegrad.runtime.schedule_cache import graph_key

_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


def _arrays(dtype: str, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        v = rng.standard_normal(12) * 3
        v[:3] = [0.0, -0.0, np.nan] if dtype.startswith("float") else [0, 1, 2]
        out.append(v.astype(dtype) if dtype != "bool" else v > 0)
    return out


def _served(fn, want, *arrays_each_call, rtol: float = 0, atol: float = 0) -> int:
    """Call fn over fresh copies of the arrays several times, each against numpy's `want`
    (exactly, or to `rtol`: exp is the C library's); how many calls a plan keyed by the
    records served (they must be most)."""
    before = plans.stats["form_hits"]
    for arrays in arrays_each_call:
        got = fn(*[Tensor(a.copy()) for a in arrays]).numpy()
        expected = want(*arrays)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    return plans.stats["form_hits"] - before


@pytest.mark.parametrize("dtype", _DTYPES)
def test_ops_over_records_keep_numpys_dtypes_and_values(dtype):
    """`+ * -` of two records, with a Python int or float (weak, numpy 2), a float function
    and relu: numpy's result dtype and values (NaN, -0.0 and wrapping ints included), on
    calls served by the plan of the records' form."""
    xs, ys = _arrays(dtype, 5, 1), _arrays(dtype, 5, 2)
    cases = [(lambda a, b: a + b, lambda a, b: a + b),
             (lambda a, b: a * b - a, lambda a, b: a * b - a),
             (lambda a, b: a * 3 + b, lambda a, b: a * 3 + b),
             (lambda a, b: (a * 0.5).exp() + b, lambda a, b: np.exp(a * 0.5) + b),
             (lambda a, b: (b - a * -0.0).relu(), lambda a, b: np.maximum(b - a * -0.0, 0))]
    for i, (fn, want) in enumerate(cases):
        if dtype == "bool" and i in (1, 4):
            continue  # (numpy refuses bool subtraction: so does rulegrad, tested elsewhere)
        with np.errstate(all="ignore"):
            served = _served(fn, want, *zip(xs, ys), rtol=1e-5 if i == 3 else 0,
                             atol=1e-6 if i == 3 else 0)
        assert served >= 2, served


def test_constants_of_one_form_are_told_apart():
    """A record keys its constants by type and value (a float by its hex form) and by their
    side: x + 1.0, x + 2.0, x + -0.0, x + 0.0, x + 1, x + NaN, x - c and c - x over the same
    arrays, in turns, are each their own program's values."""
    xs = _arrays("float32", 3, 3)
    for _ in range(3):
        for c in (1.0, 2.0, -0.0, 0.0, 1, np.nan):
            f32 = np.float32(c) if isinstance(c, float) else c
            _served(lambda a, c=c: a + c, lambda a, f32=f32: a + f32, *[(x,) for x in xs])
            _served(lambda a, c=c: a - c, lambda a, f32=f32: a - f32, *[(x,) for x in xs])
            _served(lambda a, c=c: c - a, lambda a, f32=f32: f32 - a, *[(x,) for x in xs])


def test_a_buffer_read_twice_is_another_form_than_two_buffers():
    """`t + t` over one tensor and `a + b` over two are different programs: a record says
    which of its leaves share a buffer, so neither is served by the other's plan."""
    xs, ys = _arrays("float32", 4, 4), _arrays("float32", 4, 5)
    for _ in range(2):
        for x, y in zip(xs, ys):
            np.testing.assert_array_equal((Tensor(x) + Tensor(y)).numpy(), x + y)
            t = Tensor(x)
            np.testing.assert_array_equal((t * t + t).numpy(), x * x + x)
            np.testing.assert_array_equal((t * Tensor(y) + t).numpy(), x * y + x)


def test_an_assign_after_the_op_keeps_the_value_the_op_had_when_built():
    """A lazy value built from a tensor of host data, then an assign into that tensor: the
    value is the one of the old contents (its graph is built for the assign's reader scan),
    with the plan of its form warm and cold."""
    x, y, z = _arrays("float32", 3, 6)
    for _ in range(4):
        a, b = Tensor(x.copy()), Tensor(y.copy())
        c = (a * b).exp() + a
        d = a + 1.0
        a.assign(Tensor(z.copy()))
        np.testing.assert_allclose(c.numpy(), np.exp(x * y) + x, rtol=1e-6)
        np.testing.assert_array_equal(d.numpy(), x + 1)
        np.testing.assert_array_equal(a.numpy(), z)
        np.testing.assert_array_equal((a + b).numpy(), z + y)


def test_a_record_read_as_a_graph_is_the_eager_graph():
    """Reading `.uop` of a record builds the very nodes the eager ops build (hash-consed: the
    same objects), so gradients, schedules and identity tests see no difference."""
    x, y = _arrays("float32", 2, 7)
    bx, by = Tensor(x), Tensor(y)
    lazy = ((bx * by).exp() + 2.0).relu()
    ex, ey = Tensor(x, dtype="float32"), Tensor(y, dtype="float32")  # (not records)
    eager = ((ex * ey).exp() + 2.0).relu()
    assert ex.uop is not bx.uop and lazy.uop is not eager.uop  # (other buffers)
    assert graph_key([lazy.uop])[0] == graph_key([eager.uop])[0]  # the same program
    assert (bx * by).uop is (bx * by).uop  # (hash-consed: the same node again)
    w = Tensor(x.copy())
    w.requires_grad = True
    loss = (w * Tensor(y)).exp().sum()
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), y * np.exp(x * y), rtol=1e-5)


def test_a_long_chain_and_broadcasts_over_records_are_right():
    """A chain longer than a record holds goes on eagerly; a broadcast over records and a
    number: both give numpy's values."""
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    t, want = Tensor(x), x.copy()
    for _ in range(80):
        t, want = t * np.float32(0.99).item() + 0.01, want * np.float32(0.99) + np.float32(0.01)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5)
    m, r = np.arange(12, dtype=np.float32).reshape(3, 4), np.arange(4, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal((Tensor(m) * Tensor(r) + 1.0).numpy(), m * r + 1)


# (a, b) shapes: a row over a matrix, tiny, both sides broadcast, prime sizes, batch 1, tall,
# skinny, another rank on either side
_BROADCASTS = [((4, 4), (4,)), ((1,), (7,)), ((3, 1), (1, 5)), ((1, 13), (13,)),
               ((1, 1, 3), (5, 1)), ((257, 1), (257, 2)), ((2, 31), (1, 31)), ((7,), (11, 1))]


@pytest.mark.parametrize("dta, dtb", [("float32", "float32"), ("int32", "float32"),
                                      ("bool", "int8"), ("uint8", "int64"),
                                      ("float16", "float64")])
def test_broadcasts_over_records_are_numpys_and_run_their_forms_plan(dta, dtb):
    """Two records of shapes that broadcast (`a + b`, `b - a`, `a * b + a`): numpy's dtype
    and values bit for bit (NaN and -0.0 included) on fresh arrays each call, most calls
    served by the plan of the records' form with no node built (a broadcast is a record too:
    it built its graph and walked it for the form's key at every call), and the graph a
    broadcast record builds is the eager op's (the same form)."""
    rng = np.random.default_rng(40)
    cases = [(lambda a, b: a + b, lambda a, b: a + b),
             (lambda a, b: b * 2 - a, lambda a, b: b * 2 - a),
             (lambda a, b: a * b + a, lambda a, b: a * b + a)]

    def draw(shape: tuple, dt: str) -> np.ndarray:
        v = rng.standard_normal(shape) * 3
        if dt == "bool":
            return v > 0
        if dt.startswith("float"):
            v.flat[:2] = [np.nan, -0.0][:v.size]
        return v.astype(dt)

    for sa, sb in _BROADCASTS:
        for fn, want in cases:
            if "bool" in (dta, dtb) and fn is cases[1][0]:
                continue  # (numpy refuses bool subtraction, tested elsewhere)
            calls = [(draw(sa, dta), draw(sb, dtb)) for _ in range(5)]
            with np.errstate(all="ignore"):
                served = _served(fn, want, *calls)
            assert served >= 2, (sa, sb, served)
            x, y = calls[0]
            with np.errstate(all="ignore"):  # a served call builds no node and walks no graph
                work = python_calls(lambda f=fn, p=x, q=y: f(Tensor(p), Tensor(q)).numpy())
            assert work["uop.py:__new__"] == work["schedule_cache.py:graph_key"] == 0, (sa, sb)
            eager = fn(Tensor(x, dtype=dta), Tensor(y, dtype=dtb))  # (not records)
            assert graph_key([fn(Tensor(x), Tensor(y)).uop])[0] == graph_key([eager.uop])[0]


@pytest.mark.parametrize("fn", [lambda a, b, c: a + b * 0 + c, lambda a, b, c: b * 0 + a + c,
                                lambda a, b, c: a + c + b * 0])
def test_a_leaf_no_kernel_reads_leaves_the_others_in_their_slots(fn):
    """`b * 0` of ints folds away: b is in the graph but no kernel reads it, so the plan's
    inputs are not the graph's buffers in order. Every leaf read is the right one, on calls
    served by the form's plan."""
    rng = np.random.default_rng(41)
    calls = [tuple(rng.integers(-50, 50, 12).astype(np.int32) for _ in range(3))
             for _ in range(5)]
    assert _served(fn, fn, *calls) >= 2


def test_a_record_whose_forms_plan_left_the_table_is_not_served_by_it(monkeypatch):
    """A record's trail keeps the form's plan it found (weakly, not to hash the form at every
    call). Once that plan leaves the table (dropped for newer ones) it never serves again, even
    while something still holds it: the next call is realized the ordinary way, and a plan made
    again for the form serves the calls after. Every value is numpy's."""
    monkeypatch.setattr(plans, "MAX_PLANS", 3)
    xs, ys = _arrays("float32", 12, 11), _arrays("float32", 12, 12)

    def call(i: int) -> bool:
        hits = plans.stats["form_hits"]
        np.testing.assert_array_equal((Tensor(xs[i]) + Tensor(ys[i])).numpy(), xs[i] + ys[i])
        return plans.stats["form_hits"] == hits + 1

    assert [call(i) for i in range(4)] == [False, False, True, True]
    (held,) = [p for p in plans._plans.values() if p.inputs is not None]
    a = Tensor(np.arange(4, dtype=np.float32)).realize()
    for i in range(4):  # newer plans push the form's out of the table
        (a + (i + 10)).realize()
    assert all(p is not held for p in plans._plans.values())
    assert not call(4)  # (held, but out of the table: not run)
    assert [call(i) for i in range(5, 8)] == [False, True, True]


def test_shapes_that_do_not_broadcast_raise_as_the_eager_op_does():
    x, y = np.ones((3, 4), np.float32), np.ones((5,), np.float32)
    with pytest.raises(InvalidArgument, match="cannot be broadcast"):
        Tensor(x) + Tensor(y)
    with pytest.raises(InvalidArgument, match="cannot be broadcast"):
        Tensor(x, dtype="float32") + Tensor(y, dtype="float32")


def test_records_follow_an_environment_change(monkeypatch):
    """Plans off in the middle of a process: a record's form plan no longer serves it, and
    the value is still numpy's; back on, it serves again."""
    xs, ys = _arrays("float32", 6, 8), _arrays("float32", 6, 9)

    def run(i):
        return (Tensor(xs[i]) * Tensor(ys[i]) + 1.0).numpy()

    for i in range(3):
        run(i)
    monkeypatch.setenv("RULEGRAD_PLANS", "0")
    hits = plans.stats["form_hits"]
    np.testing.assert_array_equal(run(3), xs[3] * ys[3] + 1)
    assert plans.stats["form_hits"] == hits
    monkeypatch.delenv("RULEGRAD_PLANS")
    np.testing.assert_array_equal(run(4), xs[4] * ys[4] + 1)
    assert plans.stats["form_hits"] == hits + 1


def test_a_lazy_tensor_is_a_tensor_until_its_graph_is_read_then_a_plain_one():
    """A record's tensor is a Tensor (isinstance; a LazyTensor until its graph is read, then a
    plain Tensor, whose own reads have no hook); a subclass of Tensor made from an array keeps
    its class; both compute numpy's values."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor(x)
    u = (t * 2.0).exp()
    assert isinstance(t, Tensor) and isinstance(u, Tensor)
    assert u.shape == (2, 3) and u.dtype.name == "float32" and type(u) is not Tensor
    assert u.uop.shape == (2, 3) and type(u) is Tensor and type(t) is not Tensor
    np.testing.assert_allclose(u.numpy(), np.exp(x * 2), rtol=1e-6)
    np.testing.assert_array_equal((t + u - u).numpy(), x)  # (a record with a plain Tensor)
    assert all("__getattr__" not in vars(k) for k in Tensor.__mro__)

    class Mine(Tensor):
        __slots__ = ()

    m = Mine(x)
    assert type(m) is Mine
    np.testing.assert_array_equal((m + 1.0).numpy(), x + 1)


def test_a_jitted_step_over_fresh_arrays_replays_with_numpys_values():
    """`rulegrad.jit` called with Tensors of fresh arrays each call (records until the jit
    reads them): the step replays, and each result is this call's."""
    import rulegrad

    step = rulegrad.jit(lambda a, b: ((a * b).exp() + a).relu())
    xs, ys = _arrays("float32", 7, 10), _arrays("float32", 7, 11)
    for x, y in zip(xs, ys):
        with np.errstate(all="ignore"):
            want = np.maximum(np.exp(x * y) + x, 0)
        np.testing.assert_allclose(step(a=Tensor(x), b=Tensor(y)).numpy(), want, rtol=1e-5,
                                   atol=1e-6)
    assert step.replays >= 3


_OPS = [("add", lambda a, b: a + b, np.add), ("sub", lambda a, b: a - b, np.subtract),
        ("mul", lambda a, b: a * b, np.multiply), ("max", lambda a, b: a.maximum(b), np.maximum),
        ("rsub", lambda a, b: b - a, lambda a, b: np.subtract(b, a))]
_SCALARS = [2, -3, 300, 0.5, -0.0, 1e30, True]


def _program(rng: np.random.Generator) -> list[tuple[str, int, int, object]]:
    steps = []
    for _ in range(int(rng.integers(1, 6))):
        name = _OPS[int(rng.integers(len(_OPS)))][0]
        kind = int(rng.integers(3))  # 0, 1: a tensor so far (picked), 2: a Python number
        steps.append((name, kind, int(rng.integers(3)), _SCALARS[int(rng.integers(7))]))
    return steps


def _twin(steps: list, rng: np.random.Generator) -> list:
    """The program with one step changed a little: another op, operand or number."""
    steps = list(steps)
    i = int(rng.integers(len(steps)))
    name, kind, pick, scalar = steps[i]
    what = int(rng.integers(3))
    if what == 0:
        name = {"sub": "rsub", "rsub": "sub", "add": "mul", "mul": "add", "max": "add"}[name]
    elif what == 1:
        kind, pick = (kind + 1) % 3, pick + 1
    else:
        scalar = _SCALARS[(_SCALARS.index(scalar) + 1) % len(_SCALARS)]
    steps[i] = (name, kind, pick, scalar)
    return steps


def _run_steps(steps: list, inputs: list, lib: str):
    vals = list(inputs)
    for name, kind, pick, scalar in steps:
        fn = next(f if lib == "rg" else g for n, f, g in _OPS if n == name)
        other = vals[pick % len(vals)] if kind < 2 else scalar
        last = vals[-1]
        if lib == "np" and type(other) is int and last.dtype.kind in "iu" and not (
                np.iinfo(last.dtype).min <= other <= np.iinfo(last.dtype).max):
            if name == "max":  # a bound, as clamp's: exact, refused where no value fits
                if other > np.iinfo(last.dtype).max:
                    raise OverflowError(f"maximum({other}) of {last.dtype}")
                vals.append(last.copy())
                continue
            other = np.asarray(other).astype(last.dtype)  # torch wraps it; numpy 2 refuses it
        with np.errstate(all="ignore"):
            vals.append(fn(last, other))
    return vals[-1]


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_over_records_are_numpys_on_every_call(seed):
    """Random chains of ops over records of one dtype (tensors reused: shared buffers), with
    Python numbers of each kind, and each one's twin (one op, operand or number changed), run
    in turns on fresh arrays (the later turns run the forms' plans keyed by the records, so
    two forms told apart wrongly would swap values): numpy's dtype and values, bit for bit
    (NaN and -0.0 included); numpy's refusals are rulegrad's too."""
    rng = np.random.default_rng(seed)
    dtype = ["int8", "uint8", "int32", "int64", "float16", "float32", "float64"][seed % 7]
    programs = []
    for _ in range(4):
        p = _program(rng)
        programs += [p, _twin(p, rng)]
    hits = plans.stats["form_hits"]
    for _ in range(4):
        for steps in programs:
            arrays = [(rng.standard_normal((2, 5)) * 50).astype(dtype) for _ in range(2)]
            if dtype.startswith("float"):
                arrays[0][0, :3] = [np.nan, -0.0, np.inf]
            try:
                want = _run_steps(steps, arrays, "np")
            except (OverflowError, TypeError) as e:
                with pytest.raises(type(e)):
                    _run_steps(steps, [Tensor(a.copy()) for a in arrays], "rg").numpy()
                continue
            got = _run_steps(steps, [Tensor(a.copy()) for a in arrays], "rg").numpy()
            assert got.dtype == want.dtype, (steps, got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want, err_msg=str(steps))
            # the sign of a zero (a NaN's sign is no value): numpy's, but of a max of two
            # zeros, where the eager path's is not numpy's either: there, the eager path's
            eager = _run_steps(steps, [Tensor(a, dtype=dtype) for a in arrays], "rg").numpy()
            real = ~np.isnan(want)
            assert np.array_equal(np.signbit(got)[real], np.signbit(eager)[real]), steps
            if all(name != "max" for name, *_ in steps):
                assert np.array_equal(np.signbit(got)[real], np.signbit(want)[real]), steps
    assert plans.stats["form_hits"] > hits


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint8", "float16", "float32",
                                   "float64"])
def test_every_arithmetic_operator_and_its_reflection_over_records_is_numpys(dtype):
    """`+ - * /` of two records and with Python numbers on either side (LazyTensor's own
    operators: each its op, its probe and its side): numpy's dtype and values, -0.0 and NaN
    included, on calls served by the records' form plans."""
    xs, ys = _arrays(dtype, 4, 21), _arrays(dtype, 4, 22)
    cases = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
             lambda a, b: 2 + a, lambda a, b: 3 - a, lambda a, b: -0.0 * a, lambda a, b: 1 / b,
             lambda a, b: a + 1.5, lambda a, b: a - 2, lambda a, b: a * -0.0, lambda a, b: a / 3,
             lambda a, b: 2.5 - b, lambda a, b: 0.5 / a + b, lambda a, b: 7 * a / b]
    for i, fn in enumerate(cases):
        with np.errstate(all="ignore"):
            try:
                fn(np.ones(1, dtype), np.ones(1, dtype))
            except TypeError:  # (bool subtraction: numpy refuses, and so does rulegrad)
                with pytest.raises(TypeError):
                    fn(Tensor(xs[0]), Tensor(ys[0]))
                continue
            served = _served(fn, fn, *zip(xs, ys), rtol=1e-3 if dtype == "float16" else 1e-6)
        assert served >= 2, (i, served)


def test_two_threads_running_one_form_plan_each_get_their_own_values():
    """Two threads, 200 calls each over fresh arrays of their own, one program (the same form
    plan): every result is numpy's for that thread's inputs, and none is overwritten by the
    other thread's next call (each result is checked again after both threads finished)."""
    import threading

    rng = np.random.default_rng(23)
    inputs = [[rng.standard_normal((2, 16)).astype(np.float32) for _ in range(200)]
              for _ in range(2)]
    for x, y in inputs[0][:3]:
        ((Tensor(x) * Tensor(y)).exp() + Tensor(x)).relu().numpy()  # (the form plan, made)
    results: list[list] = [[], []]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(t: int) -> None:
        try:
            start.wait()
            for x, y in inputs[t]:
                got = ((Tensor(x) * Tensor(y)).exp() + Tensor(x)).relu().numpy()
                want = np.maximum(np.exp(x * y) + x, 0)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
                results[t].append(got)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    served = plans.stats["form_hits"]
    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    assert plans.stats["form_hits"] - served >= 300  # (the plan served them, not the scheduler)
    for t in range(2):
        for got, (x, y) in zip(results[t], inputs[t]):
            np.testing.assert_allclose(got, np.maximum(np.exp(x * y) + x, 0), rtol=1e-5, atol=1e-6)
