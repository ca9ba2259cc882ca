"""Every block-library function a kernel calls is declared in its prelude.

An undeclared call compiles with a warning before gcc 14 and is an error from gcc 14 on
(`-Werror=implicit-function-declaration` by default): grouped panel copies
(`rg_pack_*_group`) were called by few-row products and declared nowhere. Each library's whole
source (prelude and kernels, as the build compiles it) must pass `-fsyntax-only` with that
error switched on.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build, compile_program, run

CC = shutil.which("gcc") or shutil.which("cc")
rng = np.random.default_rng(3)


def _t(*shape, dtype=np.float32):
    return Tensor(rng.standard_normal(shape).astype(dtype))


PROGRAMS = {
    "panels copied a row at a time (8x1024x4096)": lambda: _t(8, 1024) @ _t(1024, 4096),
    "y streamed (2x1024x4096 + bias, gelu)":
        lambda: (_t(2, 1024) @ _t(1024, 4096) + _t(4096)).gelu(),
    "tiles (96x160x144)": lambda: _t(96, 160) @ _t(160, 144),
    "float64 tiles": lambda: _t(40, 70, dtype=np.float64) @ _t(70, 50, dtype=np.float64),
    "attention": lambda: (_t(2, 64, 32) @ _t(2, 48, 32).transpose(1, 2)).softmax(-1)
        @ _t(2, 48, 16),
    "conv2d": lambda: _t(2, 8, 12, 12).conv2d(_t(16, 8, 3, 3)),
    "row max and sum": lambda: _t(33, 8192).max(1) + _t(257, 1031).sum(1)[:33],
}


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_called_helper_is_declared(name, monkeypatch):
    # each library's whole source as the build compiles it: its prelude is made from what its
    # kernels recorded they use (RenderedKernel.uses), not read from their text
    sources, full_source = [], build.full_source
    monkeypatch.setattr(build, "full_source", lambda ks: sources.append(full_source(ks))
                        or sources[-1])
    run._programs.clear()  # (a program already compiled in this process is not built again)
    compile_program(PROGRAMS[name]().schedule())
    assert sources
    for source in sources:
        got = subprocess.run([CC, "-fsyntax-only", "-fopenmp", "-march=native",
                              "-Werror=implicit-function-declaration", "-x", "c", "-"],
                             input=source, text=True, capture_output=True)
        assert got.returncode == 0, got.stderr[-2000:]
