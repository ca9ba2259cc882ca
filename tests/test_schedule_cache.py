"""The schedule cache (runtime/schedule_cache.py): a replayed schedule computes what numpy does,
on the replaying call's own buffers, and never confuses two programs that differ."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime import schedule_cache
from rulegrad.runtime.rewrite import tracing


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("RULEGRAD_SCHEDULE_CACHE", raising=False)
    schedule_cache.clear()
    yield
    schedule_cache.clear()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_replay_runs_on_the_new_inputs_and_writes_new_outputs() -> None:
    rng = np.random.default_rng(0)
    results, arrays = [], []
    for _ in range(3):
        x = rng.standard_normal((8, 16)).astype(np.float32)
        arrays.append(x)
        results.append(Tensor(x).softmax().realize())
    assert len(schedule_cache._cache) == 1  # the same form three times: scheduled once
    for x, out in zip(arrays, results):  # every earlier result is still its own
        np.testing.assert_allclose(out.numpy(), _softmax(x), rtol=1e-5, atol=1e-6)


def test_one_buffer_read_twice_is_not_two_inputs() -> None:
    a = np.arange(6, dtype=np.float32)
    b = np.arange(6, dtype=np.float32)[::-1].copy()
    ta, tb = Tensor(a).realize(), Tensor(b).realize()
    np.testing.assert_array_equal((ta * tb).numpy(), a * b)
    # the same graph shape with one buffer in both slots is another program
    np.testing.assert_array_equal((ta * ta).numpy(), a * a)
    np.testing.assert_array_equal((tb * tb).numpy(), b * b)


def test_constants_that_compare_equal_are_different_programs() -> None:
    x = Tensor(np.ones(4, np.float32)).realize()
    np.testing.assert_array_equal((1 / (x * 0.0)).numpy(), np.full(4, np.inf, np.float32))
    np.testing.assert_array_equal((1 / (x * -0.0)).numpy(), np.full(4, -np.inf, np.float32))
    y = Tensor(np.array([3, 4], np.int32)).realize()
    assert (y + 1).numpy().dtype == np.int32
    assert (y + 1.0).numpy().dtype == np.float64


def test_assign_replayed_writes_into_its_own_target() -> None:
    targets = [Tensor(np.zeros(5, np.float32)).realize() for _ in range(2)]
    for k, t in enumerate(targets):
        t.assign(t + (k + 1)).realize()
    np.testing.assert_array_equal(targets[0].numpy(), np.full(5, 1, np.float32))
    np.testing.assert_array_equal(targets[1].numpy(), np.full(5, 2, np.float32))


def test_switched_off_and_bypassed_while_traced(monkeypatch: pytest.MonkeyPatch) -> None:
    x = Tensor(np.ones((4, 4), np.float32)).realize()
    monkeypatch.setenv("RULEGRAD_SCHEDULE_CACHE", "0")
    x.sum(axis=0).realize()
    assert not schedule_cache._cache
    monkeypatch.delenv("RULEGRAD_SCHEDULE_CACHE")
    x.sum(axis=0).realize()
    assert len(schedule_cache._cache) == 1
    with tracing() as t:  # a traced run schedules for real, so the firings are there
        np.testing.assert_array_equal(x.sum(axis=0).numpy(), np.full(4, 4, np.float32))
    assert t.firings


def test_threads_realizing_one_program_share_the_entry() -> None:
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((16, 8)).astype(np.float32) for _ in range(16)]

    def run(x: np.ndarray) -> np.ndarray:
        return (Tensor(x) @ Tensor(x.T.copy())).relu().numpy()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, arrays))
    for x, got in zip(arrays, results):
        np.testing.assert_allclose(got, np.maximum(x @ x.T, 0), rtol=1e-5, atol=1e-5)
    assert len(schedule_cache._cache) == 1


def test_a_form_scheduled_under_other_threads_is_scheduled_again(monkeypatch) -> None:
    # narrow_reduce gives each thread its share of a short-rowed sum's rows (RULEGRAD_THREADS
    # may change between programs): a schedule made for three threads, replayed on one,
    # would keep three shares of partials a fresh schedule on one thread does not make
    x = np.random.default_rng(3).standard_normal((65521, 13)).astype(np.float32)

    def sizes(threads: str) -> list[list[int]]:
        monkeypatch.setenv("RULEGRAD_THREADS", threads)
        t = Tensor(x).sum(axis=0)
        return [[b.size for b in item.bufs] for item in t.schedule()]

    fresh = {}
    for threads in ("1", "3"):
        schedule_cache.clear()
        fresh[threads] = sizes(threads)
    assert fresh["1"] != fresh["3"]  # the program's schedule depends on the threads
    schedule_cache.clear()
    sizes("3")
    assert sizes("1") == fresh["1"]
    np.testing.assert_allclose(Tensor(x).sum(axis=0).numpy(), x.sum(axis=0, dtype=np.float64),
                               rtol=1e-5, atol=1e-6 * np.abs(x).sum(axis=0).max())


class _CountedHash:
    """A salt part that counts how often the key holding it is hashed."""

    hashes = 0

    def __hash__(self) -> int:
        _CountedHash.hashes += 1
        return 7


@pytest.mark.parametrize("lr", [None, 0.25])
def test_a_hit_hashes_the_graph_key_once(lr) -> None:
    """A lookup hashes the graph's key once (a tuple's hash is not kept: a training step's key
    of 122 entries cost ~25 us a hash, and a hit hashed it three times: get, `in`,
    move_to_end), with lifted floats (lr) or without; the replay computes what numpy does."""
    from rulegrad.backends.c import run_schedule
    from rulegrad.runtime.realize import buffer_of
    from rulegrad.runtime.schedule import schedule_rangeify

    salt = (_CountedHash(),)
    rng = np.random.default_rng(4)
    for i in range(3):
        a = rng.standard_normal((5, 7)).astype(np.float32)
        x = Tensor(a).realize()
        y = (x * 2 + 1).sum(1) if lr is None else (x - lr * x.exp()).max(0)
        want = (a * 2 + 1).sum(1) if lr is None else (a - lr * np.exp(a)).max(0)
        _CountedHash.hashes = 0
        items, outs = schedule_cache.cached_schedule([y.uop], schedule_rangeify, salt=salt)
        if i:  # (a hit: the first call scheduled it)
            assert _CountedHash.hashes == 1, _CountedHash.hashes
        run_schedule(items, var_vals={})
        got = buffer_of(outs[0]).data.reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert schedule_cache.stats["hits"] >= 2
