"""The printed kernels' index (backends/c/kernel_index.py): a new process that finds a kernel an
earlier one printed skips lowering, optimizing and printing it, and computes numpy's values.

Work is counted (the printer's calls), never timed: over a sweep of programs (tiny, prime,
batch 1, tall, skinny, a product, a softmax, a gradient) a second "process" (this one, with its
programs, libraries, plans and schedules forgotten) prints no kernel; a changed setting, machine
or rulegrad code, a damaged entry or another kernel's entry, and anything watching the passes
print them again; the cache's own commands list and clear the entries.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build, kernel_index, run
from rulegrad.backends.c import cache as disk
from rulegrad.runtime import plans, schedule_cache
from rulegrad.runtime.env import EnvError

RNG = np.random.default_rng(53)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _relu_grad(x: Tensor, w: Tensor) -> np.ndarray:
    w.requires_grad = True
    (x @ w).relu().sum().backward()
    return w.grad.numpy()


# name: (inputs, rulegrad's program of Tensors, numpy's of the arrays)
PROGRAMS = {
    "add tiny": ((_f32(3), _f32(3)), lambda a, b: (a + b).numpy(), lambda a, b: a + b),
    "exp chain prime": ((_f32(127, 31),), lambda a: ((a * 2).exp() + a).relu().numpy(),
                        lambda a: np.maximum(np.exp(a * 2) + a, 0)),
    "row sums batch 1": ((_f32(1, 1000),), lambda a: a.sum(1).numpy(), lambda a: a.sum(1)),
    "column sums tall": ((_f32(4099, 3),), lambda a: a.sum(0).numpy(), lambda a: a.sum(0)),
    "softmax skinny": ((_f32(2, 257),), lambda a: a.softmax(1).numpy(), _softmax),
    "matmul prime": ((_f32(37, 129), _f32(129, 53)), lambda a, b: (a @ b).numpy(),
                     lambda a, b: a.astype(np.float64) @ b),
    "matmul large": ((_f32(256, 512), _f32(512, 256)), lambda a, b: (a @ b).numpy(),
                     lambda a, b: a.astype(np.float64) @ b),
    "relu gradient": ((_f32(64, 33), _f32(33, 10)), _relu_grad,
                      lambda x, w: x.T.astype(np.float64) @ (x @ w > 0)),
}


def new_process() -> None:
    """What a new process sharing the cache would not have: programs, loaded libraries, plans,
    schedules."""
    run._programs.clear()
    build.clear_memory_cache()
    plans.clear()
    schedule_cache.clear()


@pytest.fixture
def indexed(monkeypatch, tmp_path):
    """The index on, over a cache of this test's own, in a process that has compiled nothing;
    yields the list the printer's calls are counted in (one kernel name each)."""
    monkeypatch.setenv("RULEGRAD_KERNEL_INDEX", "1")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    printed: list[str] = []
    real = run.render_kernel
    monkeypatch.setattr(run, "render_kernel",
                        lambda opt, cname, **kw: printed.append(cname) or real(opt, cname, **kw))
    new_process()
    yield printed
    new_process()


def _check(name: str) -> None:
    inputs, rg, want = PROGRAMS[name]
    got = rg(*(Tensor(x) for x in inputs))
    # (float32 sums of up to 512 products: a few units in the last place of their magnitude)
    np.testing.assert_allclose(got, want(*inputs), rtol=1e-4, atol=1e-4, err_msg=name)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_new_process_prints_none_of_the_kernels_an_earlier_one_printed(indexed, name):
    _check(name)
    first = list(indexed)
    assert first, "the first process prints its kernels"
    new_process()
    indexed.clear()
    _check(name)
    assert indexed == [], f"{name}: printed again {indexed} (first printed {first})"


@pytest.mark.parametrize("change", ["RULEGRAD_OPT=0", "RULEGRAD_THREADS=1",
                                    "RULEGRAD_BLOCK_LIBRARY=0", "machine", "code"])
def test_a_changed_setting_machine_or_code_prints_the_kernels_anew(indexed, monkeypatch,
                                                                    change):
    """What the optimizer and printer read is in the key: the same kernels under another
    setting, on another machine or after rulegrad's code changed are printed again (and then
    found again under the new key)."""
    name = "matmul large"  # (threaded, packed, the block library's calls: every setting shows)
    _check(name)
    if "=" in change:
        var, value = change.split("=")
        monkeypatch.setenv(var, value)
    elif change == "machine":
        monkeypatch.setattr(kernel_index, "machine_id", lambda: "another machine")
    else:
        monkeypatch.setattr(kernel_index, "_code", ["another rulegrad"])
    new_process()
    indexed.clear()
    _check(name)
    assert indexed, f"{change}: a kernel printed under other settings was reused"
    new_process()
    indexed.clear()
    _check(name)
    assert indexed == []


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "another key's",
                                    "a folder"])
def test_a_damaged_or_foreign_entry_is_printed_again_and_healed(indexed, tmp_path, damage):
    """An entry that does not decode, or that is another kernel's (it names its own key), is a
    miss: the kernel is printed again, computes numpy's values, and its entry is rewritten."""
    _check("exp chain prime")
    _check("softmax skinny")
    entries = sorted((tmp_path / "cache").glob("rg_*.rk"))
    assert len(entries) >= 2
    mine, other = entries[0], entries[1]
    data = mine.read_bytes()
    if damage == "truncated":
        mine.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        mine.write_bytes(b"\x00not marshal\xff" * 10)
    elif damage == "empty":
        mine.write_bytes(b"")
    elif damage == "another key's":
        mine.write_bytes(other.read_bytes())
    else:
        mine.unlink()
        mine.mkdir()
    for healed in (False, True):
        new_process()
        indexed.clear()
        _check("exp chain prime")
        _check("softmax skinny")
        assert len(indexed) == (0 if healed else 1), (healed, indexed)  # the damaged one


@pytest.mark.parametrize("watcher", ["DEBUG=2", "RULEGRAD_MATCH_STATS=1", "RULEGRAD_SPEC=1",
                                     "RULEGRAD_KERNEL_INDEX=0", "tracing"])
def test_what_watches_the_passes_sees_every_kernel_printed(indexed, monkeypatch, capfd,
                                                           watcher):
    """Under DEBUG, match statistics, spec checks, a tracing block or the index off, every
    kernel is lowered, optimized and printed (DEBUG=2 names the actions), nothing is read from
    or written to the index."""
    from rulegrad.runtime.rewrite import tracing

    _check("matmul prime")
    new_process()
    indexed.clear()
    if watcher == "tracing":
        with tracing():
            _check("matmul prime")
    else:
        var, value = watcher.split("=")
        monkeypatch.setenv(var, value)
        _check("matmul prime")
    assert indexed, watcher
    if watcher == "DEBUG=2":
        assert "actions:" in capfd.readouterr().err


def test_a_bad_setting_is_an_error_naming_it(indexed, monkeypatch):
    monkeypatch.setenv("RULEGRAD_KERNEL_INDEX", "maybe")
    with pytest.raises(EnvError, match="RULEGRAD_KERNEL_INDEX"):
        _check("add tiny")


def test_the_cache_lists_and_clears_printed_kernels(indexed, tmp_path):
    """`rulegrad cache info|clear` count and remove the index's entries with the libraries."""
    _check("softmax skinny")
    folder = tmp_path / "cache"
    stored = list(folder.glob("rg_*.rk"))
    assert stored
    listed = {p for e in disk.entries(folder) for p in e.files}
    assert set(stored) <= listed
    disk.clear()
    assert not list(folder.glob("rg_*.rk"))
    new_process()
    indexed.clear()
    _check("softmax skinny")
    assert indexed  # printed again after the clear
