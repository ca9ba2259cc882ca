"""float16 kernels need a compiler with `_Float16` on the target: clang 14 on x86-64 has none, and
its error was the compiler's raw output (11 errors, 14 warnings). It is now a `NoFloat16` that
names the compiler and what to use instead (backends/c/errors.py). A compiler that has it
computes numpy's values."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.errors import CompileError, NoFloat16


def test_the_message_names_the_compiler_and_what_to_use():
    err = NoFloat16("x.c:1:1: warning: unknown attribute\nx.c:9:3: error: _Float16 is not "
                    "supported on this target\n", "/tmp/x.c", ["clang-14", "-O2"])
    text = str(err)
    assert isinstance(err, CompileError)
    assert text.startswith("clang-14 cannot compile float16 kernels")
    assert "RULEGRAD_CC=gcc" in text and "clang 15" in text and "float32" in text
    assert "x.c:9:3: error: _Float16" in text and "/tmp/x.c" in text


@pytest.mark.skipif(shutil.which("clang") is None, reason="no clang on this machine")
def test_clang_computes_float16_or_says_what_to_use_instead(monkeypatch):
    monkeypatch.setenv("RULEGRAD_CC", "clang")
    x = np.linspace(-3, 3, 37).astype(np.float16)
    try:
        got = (Tensor(x) * 2 + 1).exp().numpy()
    except NoFloat16 as e:  # (clang before 15 on x86-64)
        assert str(e).startswith("clang cannot compile float16 kernels") and "RULEGRAD_CC=gcc" \
            in str(e)
        return
    want = np.exp((x * np.float16(2) + np.float16(1)).astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3)
