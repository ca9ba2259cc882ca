"""adv50's hunt (issue 31): what it found in last round's code and its bad inputs.

gcc 12.2 miscompiles a gated read (`g ? p[i] : 0`) whose gate holds for a whole short inner
loop, once -fno-thread-jumps keeps the loop from being split on the gate: the vectorizer runs
the outer loop with the inner loop's reads as one group of masked loads and gives each vector
of the group the first vector's mask (by all signs gcc PR 114375).
`Tensor(int32 3x4x5).cumsum(1)` gave its input back (the window's earlier rows all masked
off). A kernel with a gated read is now compiled with jump threading (backends/c/flags.py).
The oracle is numpy, and, for the C text itself, the sums the loop writes out.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build
from rulegrad.backends.c.ctext import RenderedKernel


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 4, 5), (4, 3, 6), (2, 7, 3), (5, 3)])
def test_scans_and_shifted_sums_along_every_axis(shape, dtype):
    a = (np.arange(int(np.prod(shape))) % 7 + 1).reshape(shape).astype(dtype)
    t = Tensor(a)
    for ax in range(len(shape)):
        np.testing.assert_array_equal(t.cumsum(ax).numpy(), np.cumsum(a, ax))
        np.testing.assert_array_equal(t.flip(ax).cumsum(ax).numpy(),
                                      np.cumsum(np.flip(a, ax), ax))
        np.testing.assert_array_equal(t.cummax(ax)[0].numpy(), np.maximum.accumulate(a, ax))
        pads = [(0, 0)] * len(shape)
        pads[ax] = (1, 0)
        keep = tuple(slice(0, -1) if i == ax else slice(None) for i in range(len(shape)))
        np.testing.assert_array_equal((t.pad(tuple(pads))[keep] + t).numpy(),
                                      np.pad(a, pads)[keep] + a)


# a row's gate holds for its whole inner loop of 5 (unrolled by hand, as the UNROLL action
# prints it): out row r = in row r + in row r - 1 (none before row 0)
_SHIFTED = """
void k(float *restrict p0, const float *restrict p1)
{
  for (long r1 = 0; r1 < 8; r1++) {
    const _Bool t1 = 2 < r1 + 2;
""" + "".join(f"    p0[r1 * 5 + {j}] = (t1 ? p1[(r1 - 1) * 5 + {j}] : 0) + p1[r1 * 5 + {j}];\n"
              for j in range(5)) + "  }\n}\n"


def test_a_kernel_with_a_gated_read_is_compiled_right(tmp_path):
    rk = RenderedKernel("k", _SHIFTED, 2, (), gated=True)
    cc = build.compiler()
    if not build.is_gcc(cc):
        pytest.skip("the flags at stake are gcc's")
    flags = [f for f in build.cflags(rk.kind, gated=rk.gated) if f != "-fopenmp"]
    (tmp_path / "k.c").write_text(_SHIFTED)
    run = subprocess.run(build.compile_command(cc, flags, "k.c", "k.so"), cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lib = ctypes.CDLL(str(tmp_path / "k.so"))
    a = (np.arange(40) % 7 + 1).astype(np.float32)
    out = np.zeros(40, np.float32)
    lib.k(out.ctypes.data_as(ctypes.c_void_p), a.ctypes.data_as(ctypes.c_void_p))
    want = a.copy()
    want[5:] += a[:-5]
    np.testing.assert_array_equal(out, want)


# `rulegrad demo` (and every command that realizes a tensor) ended in a traceback when a
# RULEGRAD_* variable held a value it does not take: the CLI reported only a missing compiler
# or stale matchers in words. Each is now one line naming the variable, exit 1.
@pytest.mark.parametrize("name, value, words", [
    ("RULEGRAD_THREADS", "0", "RULEGRAD_THREADS=0: must be at least 1"),
    ("RULEGRAD_BACKEND", "cuda", "RULEGRAD_BACKEND='cuda' is not a backend"),
    ("RULEGRAD_CACHE_MAX", "-1", "RULEGRAD_CACHE_MAX='-1' is not a size"),
    ("RULEGRAD_CFLAGS", "-ffast-math", "RULEGRAD_CFLAGS: -ffast-math would change results"),
    ("RULEGRAD_VECTOR_BYTES", "3", "RULEGRAD_VECTOR_BYTES='3': expected 32"),
])
def test_a_bad_environment_variable_is_one_worded_line(tmp_path, name, value, words):
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path / "cache"), name: value}
    run = subprocess.run([sys.executable, "-m", "rulegrad", "demo"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith(f"rulegrad demo: {words}")
