"""Per-call latency and cold start, as work counted (never timed): a tiny op on a seen program,
through `rulegrad.jit` and plain, makes no Python call it need not make, reads no environment
variable and takes one lock; a change to the environment still takes effect at the next call;
a first tensor program loads none of the rule front end or its heavy dependencies.

Each count is checked against numpy's values in the same test."""

from __future__ import annotations

import ast
import collections
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest
from call_counts import python_calls

import rulegrad
from rulegrad import Tensor
from rulegrad.runtime import buffer, plans
from rulegrad.runtime.dtype import to_dtype


def _env_reads(calls: collections.Counter) -> list[str]:
    """The calls that read the environment: os.environ's methods (os.py), rulegrad's readers
    (env.py's env_get and raw_reader's function) and the plans' settings."""
    return [k for k in calls if k.startswith(("os.py:", "env.py:env_", "env.py:<lambda>",
                                                "plans.py:_settings"))]


@pytest.fixture()
def inputs(monkeypatch, one_device):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    plans.clear()
    rng = np.random.default_rng(33)
    x, y = rng.standard_normal((2, 16)).astype(np.float32)
    yield x, y, Tensor(x).realize(), Tensor(y).realize()
    plans.clear()


# ---------------------------------------------------------------------- rulegrad.jit
def test_a_replay_of_the_same_arguments_makes_no_tensor_and_reads_no_environment(inputs):
    """The same argument Tensors again (a benchmark loop, inference over inputs assigned in
    place): the replay runs in `Jit.__call__` alone (is the last result dropped? then the
    kernel), and hands out the very Tensor of the last call, dropped by then, over the same
    buffer: no Tensor, node or Buffer made, nothing read from the environment. Its values are
    this call's."""
    x, y, a, b = inputs
    f = rulegrad.jit(lambda p, q: p * q + p)
    for _ in range(5):
        np.testing.assert_allclose(f(a, b).numpy(), x * y + x, rtol=1e-6)
    first = id(f(a, b))
    ids = next(buffer._ids)
    got = []
    calls = python_calls(lambda: got.append(f(a, b).numpy()))
    np.testing.assert_allclose(got[0], x * y + x, rtol=1e-6)
    assert next(buffer._ids) == ids + 1  # (no Buffer made between the two reads)
    jit_calls = {k: n for k, n in calls.items() if k.startswith("jit.py:")}
    assert jit_calls == {"jit.py:__call__": 1}, jit_calls
    assert calls["tensor.py:__init__"] == 0 and calls["uop.py:__new__"] == 0
    assert _env_reads(calls) == []
    got.clear()
    assert id(f(a, b)) == first  # the same Tensor, handed out again
    a.assign(Tensor(x * 2))  # in place: the same node, new values
    np.testing.assert_allclose(f(a, b).numpy(), x * 2 * y + x * 2, rtol=1e-6)
    assert f.replays == 6


@pytest.mark.parametrize("change", ["requires_grad", "grad", "weakref", "assign"])
def test_a_result_its_user_changed_is_never_handed_out_again(inputs, change):
    """A result Tensor its user marked for gradients, gave a gradient or refers to weakly is
    not handed out again once dropped: the next replay makes another Tensor, with no gradient
    and none required. One assigned in place and dropped may be: its values are this call's."""
    x, y, a, b = inputs
    f = rulegrad.jit(lambda p, q: p - q)
    for _ in range(4):
        f(a, b).numpy()
    t = f(a, b)
    held = weakref.ref(t) if change == "weakref" else None
    if change == "requires_grad":
        t.requires_grad = True
    elif change == "grad":
        t.grad = Tensor(np.ones(16, np.float32))
    elif change == "assign":
        t.assign(Tensor(x * 10))
        np.testing.assert_array_equal(t.numpy(), x * 10)
    t = None  # noqa: F841 - dropped
    u = f(a, b)
    assert held is None or held() is not u
    assert u.grad is None and not u.requires_grad
    np.testing.assert_allclose(u.numpy(), x - y, rtol=1e-6)
    assert f.replays == 3


# ---------------------------------------------------------------------- plain calls
def test_a_seen_program_reads_no_environment_and_takes_one_lock(inputs):
    """`(a + b).numpy()` again runs its plan: no environment variable read (the settings are
    read once after each write to os.environ), one lock, and numpy's values."""
    x, y, a, b = inputs
    for _ in range(3):
        np.testing.assert_array_equal((a + b).numpy(), x + y)
    hits = plans.stats["hits"]
    got = []
    calls = python_calls(lambda: got.append((a + b).numpy()))
    assert plans.stats["hits"] == hits + 1
    np.testing.assert_array_equal(got[0], x + y)
    assert _env_reads(calls) == []
    locks = {k: n for k, n in calls.items() if "lock" in k.lower() or "Lock" in k}
    assert locks == {"C:lock.acquire": 1, "C:lock.release": 1}, locks


def test_fresh_arrays_of_a_seen_program_build_no_graph_and_no_schedule(inputs):
    """`(Tensor(x) + Tensor(y)).numpy()` over new arrays each call runs the plan of its form
    (runtime/plans.py), keyed by the tensors' lazy records (runtime/lazy.py): no node built,
    no walk of a graph, no schedule-cache lookup, no schedule item, no environment read, one
    lock; numpy's values."""
    x, y, _, _ = inputs
    rng = np.random.default_rng(34)
    for _ in range(3):
        p, q = rng.standard_normal((2, 16)).astype(np.float32)
        np.testing.assert_array_equal((Tensor(p) + Tensor(q)).numpy(), p + q)
    hits = plans.stats["form_hits"]
    got = []
    calls = python_calls(lambda: got.append((Tensor(x) + Tensor(y)).numpy()))
    assert plans.stats["form_hits"] == hits + 1
    np.testing.assert_array_equal(got[0], x + y)
    assert calls["schedule_cache.py:graph_key"] == calls["lazy.py:materialize"] == 0
    assert calls["uop.py:__new__"] == 0
    assert calls["schedule_cache.py:cached_schedule"] == 0
    assert calls["schedule_item.py:__init__"] == calls["uop.py:toposort"] == 0
    assert _env_reads(calls) == []
    locks = {k: n for k, n in calls.items() if "lock" in k.lower() or "Lock" in k}
    assert locks == {"C:lock.acquire": 1, "C:lock.release": 1}, locks


@pytest.mark.parametrize("name, value", [("RULEGRAD_PLANS", "0"), ("DEBUG", "1"),
                                         ("RULEGRAD_SCHEDULER", "kernelize")])
def test_an_environment_change_takes_effect_at_the_next_call(inputs, monkeypatch, capfd,
                                                            name, value):
    """Writes to os.environ in the middle of a process are seen by the very next call: plans
    off, DEBUG watching the passes (no plan: the ordinary path prints), or another scheduler
    (another plan); and back again once the variable is removed."""
    x, y, a, b = inputs
    for _ in range(3):
        (a * b).numpy()
    hits = plans.stats["hits"]
    monkeypatch.setenv(name, value)
    np.testing.assert_array_equal((a * b).numpy(), x * y)
    assert plans.stats["hits"] == hits  # not served by the plan recorded under the old value
    if name == "DEBUG":
        assert "kernels in" in capfd.readouterr().err
    monkeypatch.delenv(name)
    np.testing.assert_array_equal((a * b).numpy(), x * y)
    assert plans.stats["hits"] == hits + 1  # the old settings again: the old plan


def test_a_bad_value_written_mid_process_is_an_error_every_call(inputs, monkeypatch):
    x, y, a, b = inputs
    for _ in range(3):
        (a - b).numpy()
    monkeypatch.setenv("RULEGRAD_PLANS", "maybe")
    for _ in range(2):  # (the settings are not kept while they are wrong)
        with pytest.raises(ValueError, match="RULEGRAD_PLANS"):
            (a - b).numpy()
    monkeypatch.setenv("RULEGRAD_PLANS", "1")
    np.testing.assert_array_equal((a - b).numpy(), x - y)


def test_os_environ_stays_a_mapping_of_the_process_environment(monkeypatch):
    """Counting the writes changes nothing a program sees of os.environ: a child process
    gets the variables written through it."""
    monkeypatch.setenv("RULEGRAD_LATENCY_PROBE", "33")
    out = subprocess.run([sys.executable, "-c", "import os; "
                          "print(os.environ['RULEGRAD_LATENCY_PROBE'])"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "33"
    assert isinstance(os.environ, os._Environ) and os.environ["RULEGRAD_LATENCY_PROBE"] == "33"


# ---------------------------------------------------------------------- host data
_NP_TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64"]


def test_tensors_of_host_data_of_every_dtype_and_byte_order_keep_numpys_values():
    """A Tensor made from an array reads its numpy dtype's DType (asked once per numpy dtype,
    then looked up): every dtype in both byte orders, made twice, holds numpy's values and
    dtype, computes as numpy does, and a dtype rulegrad has no type for is still refused."""
    for name in _NP_TYPES:
        for order in "<>":
            dt = np.dtype(name).newbyteorder(order)
            x = np.arange(7).astype(dt)
            for _ in range(2):
                t = Tensor(x)
                assert t.dtype.name == name
                got = t.numpy()
                assert got.dtype == np.dtype(name) and got.dtype.isnative
                np.testing.assert_array_equal(got, x)
                np.testing.assert_array_equal((t + t).numpy(), x + x)
    for bad in (np.dtype([("a", "f4")]), np.dtype("complex64"), [("a", "f4")]):
        with pytest.raises(ValueError, match="unsupported numpy dtype"):
            to_dtype(bad)


def _layouts() -> dict[str, np.ndarray]:
    base = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5
    return {"C": base.copy(), "Fortran": np.asfortranarray(base), "transposed": base.T,
            "strided": base[::2, ::-3], "0-d": np.array(2.5, np.float32), "1-d": base[1],
            "big-endian": base.astype(">f4"), "int64": base.astype(np.int64)}


@pytest.mark.parametrize("layout", list(_layouts()))
@pytest.mark.parametrize("dtype", [None, "float64", "int32"])
def test_a_tensor_of_host_data_is_a_copy_of_its_values_in_any_layout(layout, dtype):
    """`Tensor(array)` holds the array's values as they were when it was made, whatever the
    array's strides, byte order or dtype (numpy's cast when `dtype=` is given): a write into the
    array afterwards changes neither the tensor nor what it computes."""
    arr = _layouts()[layout]
    want = arr.astype(dtype) if dtype is not None else arr.astype(arr.dtype.newbyteorder("="))
    t = Tensor(arr, dtype=dtype)
    arr[...] = 99  # (views write through to their base: the tensor's copy must not see it)
    got = t.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal((t + t).numpy(), want + want)


def test_a_tensor_of_host_data_is_one_copy_and_no_weak_reference_yet_assigns_still_work():
    """`Tensor(array)` (each batch of a loop over fresh data) is its dtype's lookup, one flat
    copy, a Buffer and its node: no weak reference to the tensor for assign's reader scan (a
    tensor over a buffer is never such a reader). An assign into it is still seen by its views
    and not by a lazy value built from it before, and the array never changes it."""
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    made = [Tensor(x)]  # (numpy's dtype asked once; the tensors kept: no teardown counted)
    calls = python_calls(lambda: made.append(Tensor(x)))
    assert calls["C:set.add"] == 0 and calls["C:ndarray.flatten"] == 1, calls
    # __init__, the dtype's lookup, the Buffer, its node and the reshape's 5 (and the lambda)
    assert sum(n for k, n in calls.items() if not k.startswith("C:")) <= 10, calls
    t = Tensor(x)
    view, read, sliced = t.T, t * 2, t[1:]
    x[...] = -1  # (the tensor holds its own copy)
    t.assign(Tensor(np.full((4, 4), 7, np.float32)))
    want = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(read.numpy(), want * 2)  # built before: the old values
    np.testing.assert_array_equal(view.numpy(), np.full((4, 4), 7))  # a view: the new ones
    np.testing.assert_array_equal(sliced.numpy(), np.full((3, 4), 7))
    np.testing.assert_array_equal((t + 1).numpy(), np.full((4, 4), 8))


def test_a_buffers_address_is_numpys_for_every_kind_of_array():
    """The address a kernel is given (read through a ctypes view of the memory, or numpy's
    own way where that view cannot be made: read-only, empty) is numpy's address of the data,
    and a kernel over a read-only array from host data and over an empty one is right."""
    ro = np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), np.float32)
    kinds = [np.arange(6, dtype=np.float32), ro, np.zeros(0, np.float32), np.ones(5, bool),
             np.arange(12, dtype=np.int64)[::2], np.arange(4, dtype=np.float16)]
    for arr in kinds:
        assert buffer.address_of(arr) == arr.ctypes.data
        b = buffer.Buffer(arr.size, to_dtype(arr.dtype), arr)
        assert b.address() == b.data.ctypes.data
    t = Tensor(ro)
    np.testing.assert_array_equal((t * 2 + 1).numpy(), ro * 2 + 1)
    np.testing.assert_array_equal((Tensor(np.zeros(0, np.float32)) + 1).numpy(), np.zeros(0))



@pytest.mark.parametrize("layout", [*_layouts(), "1-d strided"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_a_buffer_of_any_array_holds_its_values_flat_in_c_order_and_its_dtype(layout, dtype):
    """A Buffer given an array (the copy of every `Tensor(array)`, the oracle's results) holds
    it as one C-ordered run of its own dtype, whatever the array's strides, byte order or
    dtype, with numpy's values in C order: a kernel reads it by address alone."""
    arr = _layouts()[layout] if layout != "1-d strided" else np.arange(12, dtype=dtype)[::3]
    b = buffer.Buffer(arr.size, to_dtype(dtype), arr)
    assert b.data.ndim == 1 and b.data.flags.c_contiguous and b.data.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(b.data, arr.astype(dtype).reshape(-1))
    assert b.address() == b.data.ctypes.data

# ---------------------------------------------------------------------- cold start
_HEAVY = ("z3", "lark", "jinja2", "rich", "hypothesis", "pygls", "rulegrad.dsl.ast",
          "rulegrad.dsl.check", "rulegrad.dsl.parser", "rulegrad.generator")


def _fresh_process(code: str, tmp_path) -> str:
    """What `code` prints, run in a fresh Python process with an empty compile cache."""
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env).stdout.strip()


def test_a_first_tensor_program_loads_no_rule_front_end_or_heavy_dependency(tmp_path):
    """A fresh process that runs a tensor program and compiles no rule file imports neither
    the rule language's front end (AST, checker, parser) nor the generator, z3, Lark, Jinja2,
    rich, hypothesis or pygls: each costs a cold start milliseconds it never uses."""
    code = ("import sys\nimport numpy as np\nfrom rulegrad import Tensor\n"
            "x = np.arange(16, dtype=np.float32)\n"
            "assert np.array_equal((Tensor(x) + Tensor(x * 2)).numpy(), x * 3)\n"
            f"print(sorted(m for m in sys.modules if m.startswith({_HEAVY!r})))\n")
    out = _fresh_process(code, tmp_path)
    assert out == "[]", out


def test_a_first_tensor_program_makes_no_dispatch_table_of_a_matcher_it_never_calls(tmp_path):
    """A first tiny add loads every rule set of each rules file it runs (dozens of matchers)
    and calls none through `RuleMatcher.rewrite` (the rewrite engine reads `table`): none
    makes its table of every op, each ~0.1 ms. A matcher so loaded, called later, still
    rewrites as the interpreted rules do (x + 0 -> x; x * 1 + 0 -> x; no rule for x + 1)."""
    code = ("import numpy as np\nfrom rulegrad import Tensor, UOp, dtypes\n"
            "from rulegrad.runtime import matcher\n"
            "made, tables, fast = [], [], matcher._fast_rewrite\n"
            "init = matcher.RuleMatcher.__init__\n"
            "def counted(s, *a, **k):\n    init(s, *a, **k)\n    made.append(s)\n"
            "matcher.RuleMatcher.__init__ = counted\n"
            "matcher._fast_rewrite = lambda t: (tables.append(t), fast(t))[1]\n"
            "x = np.arange(16, dtype=np.float32)\n"
            "assert np.array_equal((Tensor(x) + Tensor(x * 2)).numpy(), x * 3)\n"
            "print(len(made), len(tables))\n"
            "from rulegrad.rules import matcher as load\n"
            "from rulegrad.dsl import load as parse\n"
            "from rulegrad.generator.interp import interpret_file\n"
            "from rulegrad.generator.paths import PACKAGE_RULES_DIR\n"
            "oracle = interpret_file(parse(str(PACKAGE_RULES_DIR / 'symbolic.rules')))['sym']\n"
            "sym, r = load('symbolic', 'sym'), UOp.range(7, 0)\n"
            "zero, one = UOp.const(dtypes.index, 0), UOp.const(dtypes.index, 1)\n"
            "for n in (r + zero, r * one + zero, r + one):\n"
            "    print(sym.rewrite(n) is oracle.rewrite(n), sym.rewrite(n) is oracle.rewrite(n))\n"
            "print(len(tables), sym.rewrite(r + zero) is r, sym.rewrite(r + one) is None)\n")
    lines = _fresh_process(code, tmp_path).splitlines()
    loaded, built = map(int, lines[0].split())
    assert loaded >= 10 and built == 0, lines[0]
    assert lines[1:4] == ["True True"] * 3, lines
    # made once each, at its first call: sym's and the oracle's (itself a RuleMatcher)
    assert lines[4] == "2 True True", lines


# the dataclasses a first tensor program still makes (each compiles its methods as it is made,
# ~0.6 ms): the runtime's records are FrozenRecords (runtime/record.py); these are not yet
_STILL_DATACLASSES = {"rulegrad.runtime.pipeline.Pipeline"}


# modules a tiny add does not need: the rule checker's "did you mean" (difflib), the search
# (RULEGRAD_BEAM) and its stored winners (json), the host randomness of `Tensor.rand`
# (numpy.random, ~10 ms with the hashlib and secrets it imports), the printers of the flash and
# packed actions
_NOT_FOR_A_TINY_ADD = ("difflib", "json", "numpy.random", "rulegrad.backends.c.beam",
                       "rulegrad.backends.c.flash", "rulegrad.backends.c.gemm")


def test_a_first_tensor_program_makes_no_new_dataclass_and_loads_only_what_it_needs(tmp_path):
    """What a fresh process's first tiny add imports makes no dataclass but those listed, and
    loads none of the modules it does not need (each loaded on first use)."""
    code = ("import sys, dataclasses\nimport numpy as np\nfrom rulegrad import Tensor\n"
            "def made():\n"
            "    return {f'{m}.{k}' for m, mod in list(sys.modules.items())\n"
            "            if m.startswith('rulegrad') for k, v in vars(mod).items()\n"
            "            if isinstance(v, type) and dataclasses.is_dataclass(v)\n"
            "            and v.__module__ == m}\n"
            "before = made()\n"
            "x = np.arange(16, dtype=np.float32)\n"
            "assert np.array_equal((Tensor(x) + Tensor(x * 2)).numpy(), x * 3)\n"
            "print(sorted(made() - before), '|', [m for m in sys.modules\n"
            f"                                         if m in {_NOT_FOR_A_TINY_ADD!r}])\n")
    made, loaded = _fresh_process(code, tmp_path).split(" | ")
    assert set(ast.literal_eval(made)) <= _STILL_DATACLASSES, made
    assert ast.literal_eval(loaded) == [], loaded


def test_the_rule_front_end_still_loads_on_use():
    """Loaded on first use, the package still exports its phases, and `check` is the checker
    (the function), also after its submodule is imported."""
    import rulegrad.dsl as dsl
    from rulegrad.dsl.check import check_collect  # noqa: F401 - loads the submodule `check`

    assert callable(dsl.check) and dsl.check.__module__ == "rulegrad.dsl.check"
    assert dsl.check(dsl.parse("rules a = {\n  n: NEG(NEG(x)) -> x\n}\n", "t.rules"))
    with pytest.raises(dsl.RulesError, match="ADDD"):
        dsl.check(dsl.parse("rules a = {\n  n: ADDD(x, y) -> x\n}\n", "t.rules"))


def test_a_cli_start_loads_the_checker_and_generator_only_for_their_commands(tmp_path):
    """Every `rulegrad` command builds the whole parser, whose options' defaults are the
    checker's limits (generator/limits.py): that loads neither the matcher printer (Jinja2),
    the rule front end, z3 nor the checker, ~0.2 CPU-s of each of the suite's CLI children.
    `rulegrad gen` then still prints matchers (the generator's phases load on use), and
    `check`'s defaults are the checker's own."""
    code = ("import sys\nimport rulegrad.cli as cli\np = cli.build_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith(" f"{_HEAVY!r}" ")\n"
            "             and m not in ('rulegrad.generator', 'rulegrad.generator.limits')))\n")
    assert _fresh_process(code, tmp_path) == "[]"
    from rulegrad import cli
    from rulegrad.generator import compile_file, lower, soundness

    args = cli.build_parser().parse_args(["check"])
    assert (args.max_ulp, args.rlimit, args.hang_timeout) == (
        soundness.MAX_ULP, soundness.DEFAULT_RLIMIT, soundness.HANG_SECONDS)
    rules = tmp_path / "r.rules"
    rules.write_text("rules a = {\n  n: NEG(NEG(x)) -> x\n}\n")
    assert "NEG" in compile_file(rules) and callable(lower)


def _frames(calls: collections.Counter) -> int:
    """The Python functions a call entered, the measuring lambda left out."""
    return sum(n for k, n in calls.items() if not k.startswith("C:")) - 1


def test_a_tiny_program_enters_few_python_functions(inputs):
    """The tiny add of issue 33, each way a user calls it, counted in Python frames (each ~0.1
    us of a 2-4 us budget) with its values checked: over realized tensors (the add finds its
    node in one frame, the read asks no `buffer_of` of an ADD, the plan is found in one call
    whose settings, tracing and users' passes are one counter compared inline), from fresh
    arrays (a Tensor(array) is its copy and its record: no dtype or record constructor frame;
    the inputs' known addresses read in one call), through
    the jit from fresh Tensors (keyed by their records, no graph) and from the arrays
    themselves (copied into the replay's own buffers in place)."""
    x, y, a, b = inputs
    f = rulegrad.jit(lambda a, b: a + b)
    ways = {"realized": (lambda: (a + b).numpy(), 10),
            "fresh arrays": (lambda: (Tensor(x) + Tensor(y)).numpy(), 19),
            "jit of fresh Tensors": (lambda: f(a=Tensor(x), b=Tensor(y)).numpy(), 16),
            "jit of arrays": (lambda: f(a=x, b=y).numpy(), 5)}
    for way, (call, most) in ways.items():
        for _ in range(5):  # (planned, recorded)
            np.testing.assert_array_equal(call(), x + y)
        got = []
        calls = python_calls(lambda call=call, got=got: got.append(call()))
        np.testing.assert_array_equal(got[0], x + y)
        assert _frames(calls) - 1 <= most, (way, calls)  # (less the way's own lambda)
    assert f.replays > 0


def test_a_realize_walks_no_graph_for_bound_variables_until_one_is_made(tmp_path):
    """A realize asks its graph for bound variables (runtime/variable.py's `unbind`) only once
    the process has made one: before, a training step's realizes walk nothing for them (one
    walk of the whole graph per realize, ~5% of a step without rulegrad.jit); after a Variable
    is bound, a symbolic size is found and computed as numpy does, and a program over concrete
    sizes still is too. (A fresh process: the suite's processes have bound variables.)"""
    code = ("import numpy as np\nfrom rulegrad import Tensor, Variable\n"
            "from rulegrad.nn.optim import SGD\nfrom rulegrad.runtime import variable\n"
            "walks = [0]\ntopo = variable.toposort\n"
            "variable.toposort = lambda *a, **k: (walks.__setitem__(0, walks[0] + 1), "
            "topo(*a, **k))[1]\n"
            "rng = np.random.default_rng(7)\n"
            "x, w = rng.standard_normal((5, 3)).astype(np.float32), "
            "rng.standard_normal((3, 2)).astype(np.float32)\n"
            "p = Tensor(w.copy(), requires_grad=True).realize()\nopt = SGD([p], lr=0.5)\n"
            "for _ in range(3):\n    opt.zero_grad()\n    loss = (Tensor(x) @ p).relu().sum()\n"
            "    loss.backward()\n    opt.step(loss)\n    loss.item()\n"
            "want = w.copy()\n"
            "for _ in range(3):\n    want = want - 0.5 * (x.T @ ((x @ want) > 0))\n"
            "print(walks[0], np.allclose(p.numpy(), want, rtol=1e-5, atol=1e-6))\n"
            "a = np.arange(12, dtype=np.float32).reshape(6, 2)\n"
            "n = Variable('n', 1, 6).bind(4)\n"
            "got = (Tensor(a).shrink(((0, n), None)) * 2).sum(0).numpy()\n"
            "print(walks[0] > 0, np.array_equal(got, (a[:4] * 2).sum(0)), "
            "np.array_equal((Tensor(a) + 1).numpy(), a + 1))\n")
    out = _fresh_process(code, tmp_path).splitlines()
    assert out[0] == "0 True", out
    assert out[1] == "True True True", out  # (the bound variable's realize walked for it)
