"""Cold builds: what a first realize makes the C compiler do, counted (never timed).

The prelude every library starts with includes no system header (the compiler would parse
3,400 lines of them on every build); with gcc the library is linked against the libraries the
kernels call and nothing else (no start files, no libc linker script). What is checked is the
work: the preprocessed size of a build, the command line, and that the libraries so built load
and compute what numpy computes.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build
from rulegrad.backends.c.render import PRELUDE


def _is_gcc() -> bool:
    return "clang" not in build.compiler_version(tuple(build.compiler())).lower()


def test_prelude_preprocesses_to_itself():
    # preprocessed, the prelude is its own lines and a few the compiler adds: a system header
    # included again would bring back thousands (math.h alone is ~1,000)
    cmd = [*build.compiler(), *build.cflags(), "-DRG_MVEC", "-E", "-P", "-x", "c", "-"]
    out = subprocess.run(cmd, input=PRELUDE, capture_output=True, text=True, check=True).stdout
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) < 150, f"the preprocessed prelude has {len(lines)} lines"
    assert "#include" not in PRELUDE


@pytest.mark.skipif(not _is_gcc(), reason="the explicit link is gcc's")
def test_gcc_link_names_the_kernel_libraries_only():
    cmd = build.compile_command(build.compiler(), build.cflags(), "k.c", "k.so")
    assert "-nostdlib" in cmd
    assert "-lgomp" in cmd  # the default flags have -fopenmp
    assert "-lmvec" in cmd or "-lm" in cmd
    assert "-lc" not in cmd  # libc comes with libgomp / libm (its linker script costs 5 ms)
    no_omp = build.compile_command(build.compiler(), ["-O2"], "k.c", "k.so")
    assert "-lgomp" not in no_omp


def test_libraries_so_linked_load_and_compute(tmp_path, monkeypatch):
    """Kernels that need each linked library: OpenMP threads (libgomp), vector exp (libmvec /
    libm), heap scratch panels (libc's aligned_alloc through the prelude's own declaration),
    float16 conversions (libgcc), all in a fresh cache, against numpy."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    run._programs.clear()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 21).astype(np.float32)  # past PARALLEL_MIN_WORK: threads
    np.testing.assert_allclose((Tensor(x).exp() + 1).numpy(), np.exp(x) + 1, rtol=2e-6)
    a = rng.standard_normal((4, 3000)).astype(np.float32)  # K > 2048: panels on the heap
    b = rng.standard_normal((3000, 16)).astype(np.float32)
    np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, rtol=1e-4, atol=1e-3)
    h = rng.standard_normal(100).astype(np.float16)
    np.testing.assert_array_equal((Tensor(h) * 3).numpy(), h * np.float16(3))
    assert build.stats["compiles"] >= 3
