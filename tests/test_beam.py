"""RULEGRAD_BEAM (backends/c/beam.py): the optimizer's choices searched per kernel and machine.

Results under search against numpy / torch (matmul, convolution, reductions, elementwise, an
assign; tiny, prime and tall shapes), the stored winner reused with no timing by a process
that shares the cache, searched again on another machine, a candidate with a wrong result
rejected, a float sum's order allowed to change only within the reduction contract
(runtime/semantics.py), and a bad setting refused. Nothing here asserts a time: the search's
timer is counted, never read.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import beam, build, run
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.rules.choices import DEFAULT, Choices
from rulegrad.runtime.env import EnvError

RNG = np.random.default_rng(32)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture
def searching(monkeypatch, tmp_path):
    """RULEGRAD_BEAM=2 over a cache of this test's own, in a process that has searched and
    compiled nothing yet (as a new process sharing that cache)."""
    monkeypatch.setenv("RULEGRAD_BEAM", "2")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    fresh_process()
    yield tmp_path / "cache"
    fresh_process()


def fresh_process() -> None:
    """What a new process would not have: programs, loaded libraries, winners in memory."""
    run._programs.clear()
    build.clear_memory_cache()
    beam.forget()


def _count_timing(monkeypatch) -> list[int]:
    calls = [0]
    real = beam.time_kernel

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(beam, "time_kernel", counted)
    return calls


def _torch_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    import torch

    out = torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64)),
                                     torch.from_numpy(w.astype(np.float64)))
    return out.numpy()


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


# each: (name, inputs, rulegrad program, oracle, exact): `exact` where no float sum is taken
CASES = [
    ("matmul tiny", (_f32(3, 5), _f32(5, 4)), lambda a, b: a @ b, lambda a, b: a @ b, False),
    ("matmul prime", (_f32(37, 129), _f32(129, 53)), lambda a, b: (a @ b).relu(),
     lambda a, b: np.maximum(a.astype(np.float64) @ b, 0), False),
    ("matmul tall", (_f32(1031, 17), _f32(17, 9)), lambda a, b: a @ b,
     lambda a, b: a.astype(np.float64) @ b, False),
    ("conv", (_f32(2, 3, 13, 11), _f32(8, 3, 3, 3)), lambda x, w: x.conv2d(w), _torch_conv,
     False),
    ("column sum tall", (_f32(1031, 67),), lambda x: x.sum(axis=0),
     lambda x: x.astype(np.float64).sum(axis=0), False),
    ("row max prime", (_f32(257, 33),), lambda x: x.max(axis=1), lambda x: x.max(axis=1), True),
    ("full sum", (_f32(4099, 129),), lambda x: x.sum(), lambda x: x.astype(np.float64).sum(),
     False),
    ("attention prime", (_f32(2, 67, 16), _f32(2, 67, 16), _f32(2, 67, 16)),
     lambda q, k, v: q.scaled_dot_product_attention(k, v), _attention, False),
    ("elementwise tall", (_f32(4096, 7), _f32(4096, 7)), lambda a, b: (a * b + 1).relu(),
     lambda a, b: np.maximum(a * b + np.float32(1), np.float32(0)), True),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_searched_kernels_compute_what_numpy_does(searching, case):
    _, arrays, program, oracle, exact = case
    got = program(*[Tensor(a) for a in arrays]).numpy()
    want = oracle(*arrays)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_an_assign_runs_once_on_the_users_buffer_under_search(searching):
    # the search runs candidates on arrays of its own: the user's weights are updated once
    w0, g = _f32(64, 129), _f32(64, 129)
    w = Tensor(w0.copy())
    w.assign(w - Tensor(g) * 0.5).realize()
    np.testing.assert_array_equal(w.numpy(), w0 - g * np.float32(0.5))


def test_a_stored_winner_is_reused_with_no_timing_and_searched_again_elsewhere(searching,
                                                                            monkeypatch):
    a, b = _f32(37, 129), _f32(129, 53)
    timed = _count_timing(monkeypatch)
    searches = beam.stats["searches"]
    first = (Tensor(a) @ Tensor(b)).numpy()
    assert beam.stats["searches"] == searches + 1 and timed[0] > 0
    assert list(searching.glob("rg_*.beam")), "the winner is stored in the kernel cache"

    # a new process sharing the cache: the winner is read, nothing is timed or searched
    fresh_process()
    timed[0] = 0
    again = (Tensor(a) @ Tensor(b)).numpy()
    assert timed[0] == 0 and beam.stats["searches"] == searches + 1
    np.testing.assert_array_equal(again, first)

    # another machine (CPU model, flags or cores) times again
    fresh_process()
    monkeypatch.setattr(beam, "machine_id", lambda: "another-machine")
    (Tensor(a) @ Tensor(b)).numpy()
    assert timed[0] > 0 and beam.stats["searches"] == searches + 2


def test_without_beam_no_stored_winner_is_read(searching, monkeypatch):
    # a winner stored by a search changes nothing for a process without RULEGRAD_BEAM: it
    # reads no entry (as tinygrad's BEAM), and its kernels are the heuristic's
    x = _f32(1024, 67)
    Tensor(x).sum(axis=0).numpy()
    fresh_process()
    monkeypatch.delenv("RULEGRAD_BEAM")
    read = []
    monkeypatch.setattr(beam.disk, "lookup_choice", lambda key: read.append(key))
    np.testing.assert_allclose(Tensor(x).sum(axis=0).numpy(), x.astype(np.float64).sum(0),
                               rtol=1e-4, atol=1e-4)
    assert read == []


def test_debug_2_says_beam_and_the_choices(searching, monkeypatch, capsys):
    monkeypatch.setenv("DEBUG", "2")
    Tensor(_f32(257, 33)).max(axis=1).numpy()
    err = capsys.readouterr().err
    assert "BEAM r_" in err  # the search's progress line, one per kernel searched
    line = next(x for x in err.splitlines() if "actions:" in x)
    assert "BEAM " in line.split("actions:")[1]


def _candidates_changed(monkeypatch, change) -> None:
    """Every library the search builds after the first (the heuristic's kernel) has `change`
    applied to each kernel's outputs: candidates that compute something else."""
    real = beam.build
    builds = [0]

    def changed(asts, name, restrict):
        runners = real(asts, name, restrict)
        builds[0] += 1
        if builds[0] == 1:
            return runners

        def run(r):
            def go(arrays):
                out = r(arrays)
                change(out)
                return out
            return go
        return [run(r) for r in runners]

    monkeypatch.setattr(beam, "build", changed)


def test_a_candidate_with_a_wrong_result_is_rejected(searching, monkeypatch):
    # every candidate but the heuristic's kernel (the first built) adds 1 to its first output
    def wrong(out):
        out[0].reshape(-1)[0] += 1

    _candidates_changed(monkeypatch, wrong)
    rejected, tried = beam.stats["rejected"], beam.stats["candidates"]
    a, b = _f32(37, 129), _f32(129, 53)
    got = (Tensor(a) @ Tensor(b)).numpy()
    assert beam.stats["candidates"] > tried, "the product has candidates to try"
    assert beam.stats["rejected"] - rejected == beam.stats["candidates"] - tried
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    entry = next(searching.glob("rg_*.beam")).read_text()
    assert '"choices": {}' in entry, "only the heuristic's kernel is left to win"


def test_a_sum_may_change_order_only_within_the_reduction_contract():
    # a float sum's outputs may move by 2 (n - 1) eps sum|x| (both orders within the
    # contract's bound of the exact sum); one bit more is a candidate outside it
    ref = np.array([1.0, -3.0, np.nan, np.inf], np.float32)
    bound = np.full(4, 1e-6)
    assert beam.agrees(ref, ref + np.float32(1e-7) * np.array([1, 1, 0, 0], np.float32), bound)
    assert not beam.agrees(ref, ref + np.array([1e-5, 0, 0, 0], np.float32), bound)
    assert not beam.agrees(ref, np.array([1.0, -3.0, 0.0, np.inf], np.float32), bound)  # NaN
    assert not beam.agrees(ref, np.array([1.0, -3.0, np.nan, -np.inf], np.float32), bound)
    # with no float sum (max, min, ints, elementwise) only the same bits stand: -0.0 is not 0.0
    zeros = np.array([0.0, 2.0], np.float32)
    assert not beam.agrees(zeros, np.array([-0.0, 2.0], np.float32), None)
    assert not beam.agrees(zeros, np.nextafter(zeros, np.float32(3)), None)
    assert beam.agrees(np.array([np.nan], np.float32), np.array([-np.nan], np.float32), None)


def test_a_reordered_sum_outside_the_contract_is_never_kept(searching, monkeypatch):
    # candidates whose full sum is off by more than the contract allows, 2 (n - 1) eps sum|x|
    # (a sum that counted its terms' sizes twice) are rejected: the winner is the
    # heuristic's, and the result numpy's. (The bound grows with n: over 528K terms a float32
    # sum may move by 6% of sum|x|, so a skew of 0.1% would be an order the contract allows.)
    def skewed(out):
        out[0] += np.float32(np.abs(out[1]).sum())

    _candidates_changed(monkeypatch, skewed)
    rejected, tried = beam.stats["rejected"], beam.stats["candidates"]
    x = _f32(4099, 129)
    got = Tensor(x).sum().numpy()
    assert beam.stats["candidates"] > tried
    assert beam.stats["rejected"] - rejected == beam.stats["candidates"] - tried
    np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-4)


def test_the_heuristic_record_is_the_optimizer_without_search():
    # Choices() leaves every size to its helper's constant: the same kernel, node for node
    t = Tensor(_f32(37, 129)) @ Tensor(_f32(129, 53))
    (item,) = t.schedule()
    low = lower_only(item.ast)
    assert optimize_kernel(low, Choices()) is optimize_kernel(low)
    # and a choice moves the kernel: no threads at all, or packing switched off
    big = Tensor(_f32(512, 256)) @ Tensor(_f32(256, 256))
    (item,) = big.schedule()
    low = lower_only(item.ast)
    assert any("PARALLEL" in a for a in actions(optimize_kernel(low)))
    never = optimize_kernel(low, Choices(parallel_min_work=beam.NEVER))
    assert not any("PARALLEL" in a for a in actions(never))
    unpacked = optimize_kernel(low, Choices(pack_min_work=beam.NEVER))
    assert not any("PACK" in a for a in actions(unpacked))
    # an attention head's flash kernel reads the same threshold for its threads
    q, k, v = (Tensor(_f32(8, 256, 64)) for _ in range(3))
    (item,) = q.scaled_dot_product_attention(k, v).schedule()
    low = lower_only(item.ast)
    assert any("FLASH" in a and "PARALLEL" in a for a in actions(optimize_kernel(low)))
    never = optimize_kernel(low, Choices(parallel_min_work=beam.NEVER))
    assert not any("PARALLEL" in a for a in actions(never))


def test_every_neighbour_is_one_choice_away():
    for n in beam.neighbours(DEFAULT):
        assert len(n.set_fields()) == 1
    assert Choices.from_fields({"grab_tiles": 4}) == Choices(grab_tiles=4)
    assert Choices.from_fields({"no_such_choice": 4}) is None
    assert Choices.from_fields({"grab_tiles": "4"}) is None


@pytest.mark.parametrize("value", ["two", "-1", "1.5"])
def test_a_bad_beam_setting_is_refused(searching, monkeypatch, value):
    monkeypatch.setenv("RULEGRAD_BEAM", value)
    with pytest.raises(EnvError, match="RULEGRAD_BEAM"):
        Tensor(_f32(5, 3)).sum(axis=1).numpy()


def test_a_kernel_that_addresses_memory_by_a_loaded_value_is_not_searched():
    # random indices could read past a buffer: such a kernel keeps the heuristic's choices
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    out, idx, table = (UOp(Ops.DEFINE_GLOBAL, dt, (), i)
                       for i, dt in enumerate((dtypes.float32, dtypes.int32, dtypes.float32)))
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4),), (0, "loop"))
    at = UOp(Ops.LOAD, dtypes.int32, (UOp(Ops.INDEX, dtypes.int32, (idx, r)),))
    where = UOp(Ops.CAST, dtypes.index, (at,))
    value = UOp(Ops.LOAD, dtypes.float32, (UOp(Ops.INDEX, dtypes.float32, (table, where)),))
    plain = UOp(Ops.LOAD, dtypes.float32, (UOp(Ops.INDEX, dtypes.float32, (table, r)),))

    def kernel(v: UOp) -> UOp:
        st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, dtypes.float32, (out, r)), v, r))
        return UOp(Ops.SINK, dtypes.void, (st,))

    assert not beam.searchable(kernel(value), 3)
    assert beam.searchable(kernel(plain * at.cast(dtypes.float32)), 3)  # a value, not an address
    assert not beam.searchable(kernel(plain), 2)  # a buffer the search does not know


def test_the_winner_is_what_the_kernel_is_compiled_with(searching, monkeypatch, capsys):
    # a search that picks "no threads" for a product the heuristic threads: the program's
    # kernel has none, in this process and in the next one, which reads the stored winner
    never = Choices(parallel_min_work=beam.NEVER)
    monkeypatch.setattr(beam, "search", lambda *args: (never, "planted"))
    monkeypatch.setenv("DEBUG", "2")
    a, b = _f32(256, 128), _f32(128, 256)
    want = a.astype(np.float64) @ b
    for _ in range(2):
        np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), want, rtol=1e-4, atol=1e-4)
        line = next(x for x in capsys.readouterr().err.splitlines() if "actions:" in x)
        assert "PACK" in line and "PARALLEL" not in line
        assert f"BEAM parallel_min_work={beam.NEVER}" in line
        fresh_process()
        monkeypatch.setattr(beam, "search", None)  # the second time, nothing may search


def test_a_stored_winner_is_checked_on_read_and_cleared_with_the_cache(searching):
    from rulegrad.backends.c import cache

    key = "ab" * 20
    cache.install_choice(key, {"choices": {"grab_tiles": 4}})
    assert cache.lookup_choice(key)["choices"] == {"grab_tiles": 4}
    path = searching / f"rg_{key}.beam"
    for text in ('{"choices": {}, "key": "' + "cd" * 20 + '"}', "not json", "\xff"):
        path.write_text(text, encoding="latin-1")
        assert cache.lookup_choice(key) is None  # another key's entry, or not one: a miss
    path.unlink()
    path.symlink_to("/dev/zero")
    assert cache.lookup_choice(key) is None
    path.unlink()
    cache.install_choice(key, {"choices": {}})
    removed, failed, _ = cache.clear()
    assert removed >= 1 and failed == 0 and not path.exists()
