"""Size checks before work (issue 11): a program too large to hold is refused where it is built,
and random and range tensors are made at their own dtype (no float64 array 3x the output)."""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.env import EnvError
from rulegrad.runtime.limits import SizeLimitError


def test_a_huge_pad_is_refused_before_any_work():
    from rulegrad.backends.c import build
    from rulegrad.runtime import schedule_cache

    compiles, misses = build.stats["compiles"], schedule_cache.stats["misses"]
    x = Tensor(np.ones(2))
    # 2**41 iterations of the sum's loop: refused as work (the pad allocates nothing)
    with pytest.raises(SizeLimitError, match=r"PAD would make a tensor of shape \(2199023255554,\) "
                                             r"float64: 2,199,023,255,554 elements, which a kernel "
                                             r"would loop over .* more than the limit of "
                                             r"1,099,511,627,776 iterations \(RULEGRAD_MAX_WORK\)"):
        x.pad(((2**40, 2**40),)).sum()
    assert (build.stats["compiles"], schedule_cache.stats["misses"]) == (compiles, misses)


def test_the_limit_is_configurable_and_counts_bytes(monkeypatch):
    # (this test refused x.expand(512, 513) itself, which allocates nothing: a view is counted
    # only when a buffer is made of it, issue 31 item 6)
    monkeypatch.setenv("RULEGRAD_MAX_BUFFER_BYTES", "1M")
    x = Tensor(np.ones((1, 1), np.float32))
    np.testing.assert_array_equal(x.expand(512, 512).sum().numpy(), np.float32(512 * 512))
    np.testing.assert_array_equal(x.expand(512, 513).sum().numpy(), np.float32(512 * 513))
    np.testing.assert_array_equal(x.expand(512, 512).contiguous().numpy(), np.ones((512, 512)))
    with pytest.raises(SizeLimitError, match=r"would allocate a buffer of 262,656 float32: "
                                             r"1\.0 MB, more than the limit of 1\.0 MB"):
        x.expand(512, 513).contiguous().numpy()  # 4 bytes over
    with pytest.raises(SizeLimitError, match="rand"):
        Tensor.rand(600, 600)
    with pytest.raises(SizeLimitError, match="arange"):
        Tensor.arange(300_000)
    assert isinstance(SizeLimitError("x"), MemoryError)  # caught as numpy's allocation failure


def test_a_bad_limit_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("RULEGRAD_MAX_BUFFER_BYTES", "lots")
    with pytest.raises(EnvError, match="RULEGRAD_MAX_BUFFER_BYTES='lots': expected a size"):
        Tensor(np.ones(1)).expand(1 << 20).contiguous().realize()  # 8 MB: past what is free
    monkeypatch.delenv("RULEGRAD_MAX_BUFFER_BYTES")
    monkeypatch.setenv("RULEGRAD_MAX_WORK", "many")
    with pytest.raises(EnvError, match="RULEGRAD_MAX_WORK"):
        Tensor(np.ones(1)).expand(1 << 21)  # 2M elements: past the size every limit allows


def _peak(make) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = make()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [
    lambda n: Tensor.rand(n),
    lambda n: Tensor.rand(n, dtype="float16"),
    lambda n: Tensor.arange(n),
    lambda n: Tensor.arange(0.0, n * 0.5, 0.5),
    lambda n: Tensor.arange(n, dtype="float64"),
])
def test_rand_and_arange_peak_near_their_output(make):
    n = 1 << 20
    t, peak = _peak(lambda: make(n))
    out = t.numpy().nbytes
    assert peak <= out * 1.3 + (1 << 20), f"peak {peak} bytes for a {out}-byte result"


def test_arange_is_numpys_bit_for_bit():
    for a, b, c in ((0, 1, 0.1), (-3.5, 7.25, 0.37), (0.1, 1000.3, 0.013), (5, -5, -1),
                    (0, 200_003, 1), (1e20, 1e20 + 1e6, 1e3)):
        for dt in (None, "float32", "float64", "float16") + (("int64",) if a < 1e9 else ()):
            t = Tensor.arange(a, b, c, dtype=dt) if dt else Tensor.arange(a, b, c)
            got = t.numpy()
            with np.errstate(all="ignore"):
                want = np.arange(a, b, c).astype(got.dtype)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


# ---------------------------------------------------------------------------- buffers per kernel
def _sum_of(n: int, seed: int = 0) -> tuple[Tensor, np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(16).astype(np.float32) for _ in range(n)]
    total, want = Tensor(arrays[0]), arrays[0]
    for a in arrays[1:]:
        total, want = total + Tensor(a), want + a
    return total, want


def test_a_sum_of_many_tensors_is_split_into_kernels_of_bounded_buffers(monkeypatch):
    monkeypatch.setenv("RULEGRAD_MAX_KERNEL_BUFFERS", "64")
    total, want = _sum_of(300)
    items = total.schedule()
    assert max(len(it.bufs) for it in items) <= 64
    # 300 inputs: 63 in the first kernel, then 62 new ones beside each partial sum
    assert len(items) == 5
    np.testing.assert_array_equal(total.numpy(), want)  # the additions keep numpy's order


def test_the_default_bound_splits_a_sum_of_2000_tensors():
    total, _ = _sum_of(2000, seed=1)
    items = total.schedule()
    assert max(len(it.bufs) for it in items) <= 128
    assert len(items) == 16  # 127 + 15 * 126 >= 2000 inputs


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("limit", [5, 6])
def test_reductions_realized_later_count_toward_the_bound(monkeypatch, scheduler, limit):
    # a cross-entropy loss over a log-softmax: its max and its sum of exps become buffers only
    # after the limit's pass ran; counted as their sources alone, one kernel loaded 8 buffers
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    monkeypatch.setenv("RULEGRAD_MAX_KERNEL_BUFFERS", str(limit))
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((16, 12), (12, 10), (10,)))
    onehot = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]
    logits = Tensor(x) @ Tensor(w) + Tensor(b)
    loss = -(logits.log_softmax(1) * Tensor(onehot)).sum() / 16
    assert max(len(it.bufs) for it in loss.schedule()) <= limit
    z = x.astype(np.float64) @ w + b
    logp = z - z.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(loss.numpy(), -(logp * onehot).sum() / 16, rtol=1e-5)


def test_the_bound_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("RULEGRAD_MAX_KERNEL_BUFFERS", "0")
    total, _ = _sum_of(300, seed=2)
    assert [len(it.bufs) for it in total.schedule()] == [301]


# ---------------------------------------------------------------------------- loaded libraries
def _mapped_libraries() -> set[str]:
    """The kernel libraries mapped into this process (/proc/self/maps: one line per mapping)."""
    import re

    with open("/proc/self/maps") as f:
        return set(re.findall(r"rg_[0-9a-f]+\.so", f.read()))


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_distinct_programs_keep_a_bounded_number_of_libraries_mapped(monkeypatch):
    from rulegrad.backends.c import build

    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_MAX_PROGRAMS", "3")
    before = _mapped_libraries()
    live0 = build.Library.live
    most = 0
    for n in range(1, 13):  # 12 distinct programs (a new shape each)
        a = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal((Tensor(a) * 3 + 1).numpy(), a * 3 + 1)
        most = max(most, len(_mapped_libraries() - before))
    assert most <= 4  # three kept by the table, one being loaded
    assert build.Library.live - live0 <= 3  # the others were dlclosed, not just forgotten


def test_a_bad_program_bound_is_a_clear_error(monkeypatch):
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_MAX_PROGRAMS", "0")
    with pytest.raises(EnvError, match="RULEGRAD_MAX_PROGRAMS=0: must be at least 1"):
        run.max_programs()


# ---------------------------------------------------------------------------- deep graphs
def _random_dag(seed: int, n: int = 400):
    import random

    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    rng = random.Random(seed)
    nodes = [UOp(Ops.DEFINE_VAR, dtypes.int32, (), (f"v{i}", 0, 9)) for i in range(4)]
    for _ in range(n):
        op, k = rng.choice([(Ops.NEG, 1), (Ops.ADD, 2), (Ops.WHERE, 3)])
        nodes.append(UOp(op, dtypes.int32, tuple(rng.choice(nodes[-20:]) for _ in range(k))))
    return UOp(Ops.SINK, dtypes.void, tuple(nodes[-8:]))


def _postorder(root, stop):
    # the definition (recursive: the graphs here are small): sources left to right, then the node
    out, seen = [], set()

    def visit(n):
        if n in seen or stop(n):
            return
        seen.add(n)
        for s in n.src:
            visit(s)
        out.append(n)

    visit(root)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_toposort_is_the_depth_first_postorder(seed):
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import toposort

    dag = _random_dag(seed)
    for stop in (lambda n: False, lambda n: n.op is Ops.WHERE, lambda n: n is dag.src[0]):
        assert toposort(dag, stop=stop) == _postorder(dag, stop)
    assert toposort(dag, stop=lambda n: n is dag) == []


def test_a_deep_walk_wakes_no_cyclic_collector():
    # a walk that keeps an object per node alive makes the collector rescan the whole heap
    # over and over (half a 100k-op chain's toposort time); counted, not timed
    import gc

    from rulegrad.runtime.uop import toposort

    x = Tensor(np.ones(4, np.float32))
    for _ in range(100_000):
        x = x + 1.0
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        order = toposort(x.uop)
    finally:
        gc.callbacks.remove(count)
    assert len(order) > 100_000 and runs == []


def test_scheduling_and_building_a_deep_chain_wake_no_cyclic_collector():
    # runtime/gc_pause.py: the collector's passes over a 1M-node heap cost as much as the work
    import gc

    a = np.arange(8, dtype=np.float32)
    (Tensor(a) + 1.0).numpy()  # the lazy imports of a first realize (they collect) done here
    x, ref = Tensor(a), a.copy()
    for i in range(20_000):
        x, ref = (x + 1.0, ref + np.float32(1.0)) if i % 2 else (x * 0.5, ref * np.float32(0.5))
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        x.schedule()
        out = x.numpy()
    finally:
        gc.callbacks.remove(count)
    # the young objects of each phase are collected as it ends, one young-generation pass
    # each (a few more when other tests' caches are warm: the small work between phases);
    # an unpaused phase over the 20,000-node chain makes dozens, and older generations' too
    assert len(runs) <= 4 and set(runs) <= {0} and gc.isenabled()
    np.testing.assert_array_equal(out, ref)


def test_gc_pauses_nest_and_keep_a_collector_the_user_turned_off():
    import gc

    from rulegrad.runtime.gc_pause import gc_paused

    assert gc.isenabled()
    with gc_paused(force=True):
        with gc_paused(force=True):
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer phase still runs
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused(force=True):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError), gc_paused(force=True):
        raise ValueError("a phase that fails")  # the collector comes back on all the same
    assert gc.isenabled()


def test_a_large_graph_being_built_leaves_the_collectors_full_passes(monkeypatch):
    # runtime/gc_pause.py: while a large graph is being built, what a full collection leaves is
    # frozen, so the next full passes walk only what was built since (building a 1.25M-op chain
    # spent a quarter of its time in them); once it stops growing, a full collection walks it
    # all again, and frees the cyclic garbage that waited
    import gc
    import weakref

    from rulegrad.runtime import gc_pause
    from rulegrad.runtime.uop import _cache

    class Cell:
        pass

    # "large": 2,000 nodes more than the process holds now (what was frozen for earlier tests'
    # graphs, which caches may keep, comes back at the first full collection)
    monkeypatch.setattr(gc_pause, "PAUSE_MIN_NODES", len(_cache) + 2_000)
    gc.collect()
    assert gc.get_freeze_count() == 0
    cycle = Cell()
    cycle.me = cycle  # cyclic garbage-to-be, alive while the graph is built
    dead = weakref.ref(cycle)
    x = Tensor(np.arange(8, dtype=np.float32))
    for i in range(8_000):
        x = x + 1.0 if i % 2 else x * 0.5
    gc.collect()
    walked = len(gc.get_objects())  # what a full collection walks now
    try:
        assert gc.get_freeze_count() > 5 * 8_000 and walked < 8_000
        del cycle
        gc.collect()  # the graph is kept, not growing: this one walks everything again
        assert gc.get_freeze_count() == 0 and dead() is None
        assert len(gc.get_objects()) > 5 * 8_000
    finally:
        gc.unfreeze()
        gc_pause._froze = False


def test_a_process_that_froze_objects_itself_is_left_alone(monkeypatch):
    import gc

    from rulegrad.runtime import gc_pause
    from rulegrad.runtime.uop import _cache

    monkeypatch.setattr(gc_pause, "PAUSE_MIN_NODES", len(_cache) + 2_000)
    # a first graph's lazy imports and caches, made before the freeze: objects frozen in the
    # middle of being made (a first test in its process) are freed later, which is not ours
    y = Tensor(np.arange(8, dtype=np.float32)) * 0.5 + 1.0
    del y
    gc.collect()
    assert gc.get_freeze_count() == 0
    gc.freeze()  # (as a server does before it forks)
    try:
        frozen = gc.get_freeze_count()
        x = Tensor(np.arange(8, dtype=np.float32))
        for i in range(8_000):
            x = x + 1.0 if i % 2 else x * 0.5
        gc.collect()
        assert gc.get_freeze_count() == frozen  # nothing of ours added
        del x
        gc.collect()
        assert gc.get_freeze_count() == frozen  # and nothing of theirs given back
    finally:
        gc.unfreeze()


def test_only_large_graphs_pause_the_collector(monkeypatch):
    # the pause is process-wide: a small program's realize leaves the collector on
    import gc

    from rulegrad.runtime import gc_pause, realize

    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    seen = []
    inner = realize.BACKENDS["c"]

    def watched(uops):
        seen.append(gc.isenabled())
        return inner(uops)

    monkeypatch.setitem(realize.BACKENDS, "c", watched)
    x = np.arange(4, dtype=np.float32)
    monkeypatch.setattr(gc_pause, "PAUSE_MIN_NODES", 10**9)
    np.testing.assert_array_equal((Tensor(x) * 2.0 + 3.0).numpy(), x * 2 + 3)
    monkeypatch.setattr(gc_pause, "PAUSE_MIN_NODES", 0)
    np.testing.assert_array_equal((Tensor(x) * 4.0 - 1.0).numpy(), x * 4 - 1)
    assert seen == [True, False] and gc.isenabled()


def test_a_repeated_scalar_operand_builds_no_new_nodes(monkeypatch):
    # a chain lifts the same constants at every op: CONST.reshape.expand is kept, only the op
    # itself is a new node (building the three was most of a 1.25M-op chain's graph time)
    from rulegrad.runtime import uop
    from rulegrad.runtime.uop import UOp

    y = Tensor(np.ones((4, 3), np.float32))
    for k in range(5000):  # a long session's constants, more than the cache keeps
        y = y * (k + 0.25)
    x = Tensor(np.ones((4, 3), np.float32))
    x = x * 0.5 + 1.0  # the constants' first use
    assert x.uop is not None  # (its graph built now: the array's node is made once, here)
    made = []
    new = UOp.__new__

    def counting(cls, *args, **kwargs):
        made.append(args[0])
        return new(cls, *args, **kwargs)

    # nodes are made through UOp(...) and, on the hot paths, through uop.new_uop(UOp, ...)
    monkeypatch.setattr(UOp, "__new__", counting)
    monkeypatch.setattr(uop, "new_uop", counting)
    for _ in range(50):
        x = x * 0.5 + 1.0
    monkeypatch.undo()
    assert len(made) == 100


def test_scalar_constants_keep_their_sign_of_zero():
    # numpy's -0.0 equals 0.0 (and hashes alike): a cache keyed by value once answered the
    # first one asked for both
    for first, second in ((np.float32(-0.0), np.float32(0.0)), (-0.0, 0.0), (0.0, -0.0)):
        for v in (first, second):
            got = Tensor.full((2,), v, dtype="float32").numpy()
            assert np.signbit(got).tolist() == [bool(np.signbit(v))] * 2, v
            got = (Tensor(np.ones(2, np.float32)) * v).numpy()
            assert np.signbit(got).tolist() == [bool(np.signbit(v))] * 2, v


def test_settings_read_from_the_raw_table_follow_the_environment(monkeypatch):
    # env_get reads os.environ's table directly (no KeyError per unset name): it must see
    # every change made through os.environ, and parse as os.environ.get would
    from rulegrad.runtime.env import env_flag, env_get, env_int

    monkeypatch.delenv("RULEGRAD_TEST_SETTING", raising=False)
    assert env_get("RULEGRAD_TEST_SETTING") is None
    assert env_int("RULEGRAD_TEST_SETTING", 7) == 7 and env_flag("RULEGRAD_TEST_SETTING", True)
    monkeypatch.setenv("RULEGRAD_TEST_SETTING", " 12 ")
    assert env_get("RULEGRAD_TEST_SETTING") == " 12 " and env_int("RULEGRAD_TEST_SETTING", 7) == 12
    monkeypatch.setenv("RULEGRAD_TEST_SETTING", "off")
    assert env_flag("RULEGRAD_TEST_SETTING", True) is False
    monkeypatch.setenv("RULEGRAD_TEST_SETTING", "x\u00e9")  # decoded as os.environ decodes
    assert env_get("RULEGRAD_TEST_SETTING") == os.environ["RULEGRAD_TEST_SETTING"]
    monkeypatch.delenv("RULEGRAD_TEST_SETTING")
    assert env_get("RULEGRAD_TEST_SETTING") is None


def test_a_raw_reader_follows_the_environment(monkeypatch):
    # the plans' cache key reads its settings through raw_reader: a change through os.environ
    # must change the key, and unset must differ from set
    from rulegrad.runtime.env import raw_reader

    read = raw_reader(("RULEGRAD_TEST_A", "RULEGRAD_TEST_B"))
    monkeypatch.delenv("RULEGRAD_TEST_A", raising=False)
    monkeypatch.delenv("RULEGRAD_TEST_B", raising=False)
    unset = read()
    assert unset == (None, None)
    monkeypatch.setenv("RULEGRAD_TEST_B", "1")
    one = read()
    assert one[0] is None and one[1] is not None and one != unset
    monkeypatch.setenv("RULEGRAD_TEST_B", "2")
    assert read() != one


def test_env_set_puts_each_variable_back_as_it_was_even_after_a_raise(monkeypatch):
    # env_set replaced four hand-written save/set/restore blocks (fuzz, passdiff): a variable
    # set before is set back to its value, one unset before is unset again
    from rulegrad.runtime.env import env_set

    monkeypatch.setenv("RULEGRAD_TEST_A", "before")
    monkeypatch.delenv("RULEGRAD_TEST_B", raising=False)
    with pytest.raises(KeyError):
        with env_set({"RULEGRAD_TEST_A": "in", "RULEGRAD_TEST_B": "in"}):
            assert os.environ["RULEGRAD_TEST_A"] == os.environ["RULEGRAD_TEST_B"] == "in"
            raise KeyError("inside")
    assert os.environ["RULEGRAD_TEST_A"] == "before"
    assert "RULEGRAD_TEST_B" not in os.environ


def test_a_bad_debug_level_in_the_backend_names_the_variable(monkeypatch):
    from rulegrad.backends.c.run import compile_program
    from rulegrad.runtime.env import EnvError

    sched = (Tensor(np.ones(3, np.float32)) + 1).schedule()
    monkeypatch.setenv("DEBUG", "abc")
    with pytest.raises(EnvError, match=r"DEBUG='abc': expected a whole number"):
        compile_program(sched)


# ---------------------------------------------------------------------------- views are not buffers
def test_ordinary_products_are_not_refused_for_their_broadcast(monkeypatch):
    # each holds a broadcast product of 4e9-9e9 elements (16-32 GB in float32) that no backend
    # allocates: they used to be refused as that much memory
    monkeypatch.setenv("RULEGRAD_MAX_BUFFER_BYTES", "4G")
    assert (Tensor.empty(2048, 2048) @ Tensor.empty(2048, 2048)).shape == (2048, 2048)
    assert (Tensor.empty(1600, 1600) @ Tensor.empty(1600, 1600)).shape == (1600, 1600)
    out = Tensor.empty(8, 64, 128, 128).conv2d(Tensor.empty(64, 64, 3, 3))
    assert out.shape == (8, 64, 126, 126)


def test_absurd_work_is_refused_as_work():
    a, b = Tensor.ones(1, 1).expand(2**14, 2**14), Tensor.ones(1, 1).expand(2**14, 2**13)
    with pytest.raises(SizeLimitError, match=r"2,199,023,255,552 elements, which a kernel would "
                                             r"loop over .* iterations \(RULEGRAD_MAX_WORK\)"):
        a @ b


@pytest.mark.parametrize("backend", ["c", "interp", "oracle"])
def test_a_product_costs_its_buffers_on_every_backend(monkeypatch, backend):
    # a matmul and a convolution whose broadcast products are 64 MB and 33 MB (float32), with a
    # memory limit of 4 MB: the buffers are small and the products are never made whole
    import torch

    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_MAX_BUFFER_BYTES", "4M")
    rng = np.random.default_rng(6)
    a, b = (rng.standard_normal((256, 256)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((4, 16, 32, 32)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    got, peak = _peak(lambda: (Tensor(a) @ Tensor(b)).numpy())
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    assert peak < 24 << 20, f"{backend}: peak {peak >> 20} MB for a matmul of 256 KB buffers"
    got, peak = _peak(lambda: Tensor(x).conv2d(Tensor(w)).numpy())
    want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert peak < 24 << 20, f"{backend}: peak {peak >> 20} MB for a conv of <1 MB buffers"


def test_a_planned_program_is_checked_again_under_a_lower_limit(monkeypatch):
    # the C backend's plans rerun a program without scheduling it: a lower memory limit set
    # in between must still refuse its 4 MB output
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    x = Tensor(np.ones(1 << 20, np.float32)).realize()
    y = x + 1
    np.testing.assert_array_equal(y.numpy(), np.full(1 << 20, 2, np.float32))
    monkeypatch.setenv("RULEGRAD_MAX_BUFFER_BYTES", "1M")
    with pytest.raises(SizeLimitError, match="would allocate a buffer of 1,048,576 float32"):
        (x + 1).numpy()


@pytest.mark.parametrize("backend", ["c", "interp", "oracle"])
def test_a_full_reduction_of_a_product_costs_no_product(monkeypatch, backend):
    # a sum and a max of an outer product of 16.7M elements (64 MB in float32) into one value:
    # no axis is kept, so the numpy backends reduce it in runs of a reduced axis
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    outer = a[:, None] * b[None, :]
    for reduce in (Tensor.sum, Tensor.max):
        def run(reduce=reduce):
            return reduce(Tensor(a).reshape(4096, 1) * Tensor(b).reshape(1, 4096)).numpy()
        run()  # built once untraced: a cold build's Python objects are not the product
        got, peak = _peak(run)
        want = outer.astype(np.float64).sum() if reduce is Tensor.sum else outer.max()
        np.testing.assert_allclose(got, want, rtol=1e-4)
        # a quarter of the product's 64 MB (the numpy backends peak near 6 MB)
        assert peak < 16 << 20, f"{backend}: peak {peak >> 20} MB for a {reduce.__name__}"
