"""The suite compiles its kernels into a temporary cache, never the user's.

The controller (or a run without xdist) makes one folder per session and puts it in
`RULEGRAD_CACHE` before any worker starts; xdist workers are started with the controller's
environment, so they share it (`RULEGRAD_TEST_SESSION_CACHE` marks it as ours), and only the
process that made it removes it. `RULEGRAD_TEST_CACHE=DIR` keeps a cache across runs instead.

The packed products' tiles are 256-bit (`RULEGRAD_VECTOR_BYTES=32`) unless a test asks for
512: their geometry (columns left over, panels) is the same on every machine, AVX-512 or not;
tests/test_wide_vectors.py runs the products in 512-bit tiles. The machine facts the
optimizer's sizes come from (runtime/target.py: cache sizes, threads) are pinned too, to this
project's machine's, so a test's kernels are the same on every machine; tests/test_machine.py
reads the machine itself. A library's kernels of one optimization level are one compiler run
(`RULEGRAD_BUILD_JOBS=1`: the workers keep both cores busy).

The rules check's verdicts are kept per session in a folder of the cache
(`RULEGRAD_TEST_VERDICTS`): a rule one worker checked is read by the other
(generator/verdicts.py).

The printed kernels' index (backends/c/kernel_index.py) is off (`RULEGRAD_KERNEL_INDEX=0`):
tests change the optimizer's and printer's module constants (`PARALLEL_MIN_WORK`, `SEGMENT`,
...) or count their work, which no key of a kernel can see; tests/test_kernel_index.py turns it
on over caches of its own.

Fixtures by name: `one_device` (the counted work of a program that never used a second device).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

_MARK = "RULEGRAD_TEST_SESSION_CACHE"
# `rulegrad check`'s verdicts, one per rule, shared by the run's workers (tests/test_soundness.py)
VERDICTS = "RULEGRAD_TEST_VERDICTS"
# where the run's processes keep their bytecode: "cache" (the session's) or "user" (`_bytecode_in`)
BYTECODE = "RULEGRAD_TEST_BYTECODE"
# the `pytester` fixture: tests of the pytest plugin run pytest in their own process;
# suite_costs: each test's CPU seconds and compiler runs, when RULEGRAD_TEST_COSTS names a file
pytest_plugins = ["pytester", "suite_costs"]


def pytest_configure(config) -> None:
    os.environ.setdefault("RULEGRAD_VECTOR_BYTES", "32")
    os.environ.setdefault("RULEGRAD_KERNEL_INDEX", "0")
    # one compiler run per optimization level of a library, never a level's kernels split over
    # both cores and linked (`build.partition`): the suite's two workers keep both cores busy,
    # so a split buys no time and costs a compiler start, the prelude again and a link
    # (test_assign_order_56: 134 -> 94 runs, 7.8 -> 7.0 CPU-s); test_cold_build and test_cache
    # set it to check the split builds
    os.environ.setdefault("RULEGRAD_BUILD_JOBS", "1")
    for name, value in (("RULEGRAD_L1_BYTES", "32K"), ("RULEGRAD_L2_BYTES", "1M"),
                        ("RULEGRAD_L3_BYTES", "32M"), ("RULEGRAD_THREADS", "2")):
        os.environ.setdefault(name, value)
    if os.environ.get(_MARK) and os.environ.get("RULEGRAD_CACHE") == os.environ[_MARK]:
        return  # an xdist worker: the controller chose the folder
    chosen = os.environ.get("RULEGRAD_TEST_CACHE")
    path = chosen or tempfile.mkdtemp(prefix="rulegrad-test-cache-")
    os.environ["RULEGRAD_CACHE"] = path
    os.environ[_MARK] = path
    _bytecode_in(path)
    # this run's rule verdicts (a folder of its own, even in a kept cache: a verdict that ran
    # kernels depends on all of rulegrad's code, which may change before the next run)
    os.environ[VERDICTS] = config._rulegrad_session_verdicts = tempfile.mkdtemp(
        prefix="verdicts-", dir=path)
    if not chosen:
        config._rulegrad_session_cache = path


def _bytecode_in(cache: str) -> None:
    """Where bytecode writing is off (`PYTHONDONTWRITEBYTECODE`, as on this project's
    machines), the run's processes keep it in a folder of the session's cache instead
    (`PYTHONPYCACHEPREFIX`), never beside the sources: otherwise every Python process the
    suite starts (xdist workers; `rulegrad` and `python -c` children, a few hundred) compiles
    each module it imports from source, and pytest rewrites every test module's assertions
    again in each worker. A user's own choice (writing on, or a prefix of theirs) is kept.
    `RULEGRAD_TEST_BYTECODE` says which it was ("cache" or "user")."""
    writes = not sys.dont_write_bytecode and not os.environ.get("PYTHONDONTWRITEBYTECODE")
    if writes or os.environ.get("PYTHONPYCACHEPREFIX"):
        os.environ[BYTECODE] = "user"
        return
    os.environ[BYTECODE] = "cache"
    prefix = os.path.join(cache, "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # (children and workers)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode, sys.pycache_prefix = False, prefix  # (this process)


def pytest_unconfigure(config) -> None:
    for name in ("_rulegrad_session_verdicts", "_rulegrad_session_cache"):
        path = getattr(config, name, None)
        if path:
            shutil.rmtree(path, ignore_errors=True)


def pytest_collection_modifyitems(items) -> None:
    """Tests marked `long` run first (the sort is stable: the rest keep their order). xdist hands
    tests out in this order, so the run's last tests are short ones and neither worker is left
    idle while the other finishes a long test."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture()
def fake_machine(monkeypatch):
    """`fake(nthreads, cost)`: fake the thread count and the parallel region's cost
    (`PARALLEL_MIN_WORK`); programs are built afresh (the program table keys programs by their
    kernels, not by these facts)."""
    from rulegrad.backends.c import run
    from rulegrad.runtime import target

    def fake(nthreads: int, cost: int) -> None:
        monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
        monkeypatch.setattr(target, "PARALLEL_MIN_WORK", cost)
        run._programs.clear()

    yield fake
    run._programs.clear()


@pytest.fixture()
def launched_teams(monkeypatch):
    """`watch()`: from now on, the team each of the C backend's launches is handed (build.py's
    `launched`, its 8th argument), in order, appended to the list it returns."""
    from rulegrad.backends.c import build

    def watch() -> list[int]:
        seen: list[int] = []
        real = build.launched

        def spy(*args, **kwargs):
            seen.append(args[7] if len(args) > 7 else kwargs.get("team", 0))
            return real(*args, **kwargs)

        monkeypatch.setattr(build, "launched", spy)
        return seen

    return watch


@pytest.fixture()
def one_device(monkeypatch) -> None:
    """A program's work as one that never used a second device sees it: an earlier test in the
    process may keep a value on another device alive (a plan holds its graph's buffers,
    runtime/plans.py), which keeps the device checks on (runtime/device_use.py; some 100 calls
    per training step). For tests that count calls or nodes."""
    from rulegrad.runtime import device

    monkeypatch.setitem(device.in_use, "devices", False)
    monkeypatch.setitem(device.in_use, "multi", False)


@pytest.fixture(params=["c-rangeify", "c-kernelize", "interp"])
def each_path(request, monkeypatch) -> None:
    """The test runs three times: C kernels from each scheduler, and the numpy interpreter."""
    if request.param == "interp":
        monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
    else:
        monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param.split("-")[1])
