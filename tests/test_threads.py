"""`RULEGRAD_THREADS` sets how many threads the kernels run (backends/c/threads.py): counted as
the shares a launch makes (backends/c/launch.py) and as OpenMP's own count, never timed."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import threads
from rulegrad.backends.c.build import build_library
from rulegrad.backends.c.render import RenderedKernel
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.env import EnvError

# a launched kernel that counts the calls it gets: one per thread's share of the iterations
COUNT = r"""
void rg_count_shares(void *const *args, int64_t lo, int64_t hi)
{
  __atomic_add_fetch((int64_t *)args[0], 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch((int64_t *)args[0] + 1, hi - lo, __ATOMIC_SEQ_CST);
}
"""
ITERATIONS = 1000


@pytest.fixture(scope="module")
def count_shares():
    lib = build_library([RenderedKernel("rg_count_shares", COUNT, 1, (dtypes.int64,))])
    fn = lib.function("rg_count_shares", 1, launch=ITERATIONS)

    def shares() -> int:
        counter = np.zeros(2, dtype=np.int64)
        fn(counter.ctypes.data)
        assert counter[1] == ITERATIONS  # every iteration run once, whatever the split
        return int(counter[0])

    shares.lib = lib  # (kept loaded)
    return shares


X = np.arange(1 << 21, dtype=np.float32)  # past PARALLEL_MIN_WORK: a threaded loop


def _realize() -> None:
    """A threaded program run through the ordinary path (which applies the setting before a
    program with threads runs; one without needs none). On one thread no loop takes threads
    (parallel_helpers: a region no second thread shares pays for nothing), so no program
    applies the setting: applied here as the first threaded one would."""
    np.testing.assert_array_equal((Tensor(X) * 2).numpy(), X * 2)
    if threads.threads() == 1:
        threads.apply_threads()


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_a_launch_makes_one_share_per_thread(monkeypatch, count_shares, n):
    monkeypatch.setenv("RULEGRAD_THREADS", str(n))
    _realize()
    assert threads.max_threads() == n
    assert count_shares() == n


def test_the_setting_follows_each_change_and_each_python_thread(monkeypatch, count_shares):
    monkeypatch.setenv("RULEGRAD_THREADS", "3")
    _realize()
    assert count_shares() == 3
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    _realize()
    assert count_shares() == 1
    seen = []

    def other() -> None:  # OpenMP's count is per calling thread: a new one applies it too
        _realize()
        seen.append(count_shares())

    monkeypatch.setenv("RULEGRAD_THREADS", "4")
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [4]


def test_default_is_the_usable_cores(monkeypatch, count_shares):
    import os

    monkeypatch.delenv("RULEGRAD_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    _realize()
    assert count_shares() == len(os.sched_getaffinity(0))


def test_a_bad_count_is_an_error_naming_the_variable(monkeypatch):
    monkeypatch.setenv("RULEGRAD_THREADS", "0")
    with pytest.raises(EnvError, match="RULEGRAD_THREADS"):
        _realize()


def test_a_fresh_process_applies_it_from_its_first_program(tmp_path):
    """The first program of a process loads OpenMP while it compiles, before it runs: its own
    run already has the setting's threads."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from rulegrad import Tensor\n"
            "from rulegrad.backends.c import threads\n"
            "x = np.ones(1 << 21, dtype=np.float32)\n"
            "assert float((Tensor(x) * 2).sum().numpy()) == 2.0 * x.size\n"
            "print(threads.max_threads())\n")
    env = dict(os.environ, RULEGRAD_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3"]
