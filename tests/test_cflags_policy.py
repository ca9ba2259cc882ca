"""The compiler command takes only flags known not to change results (issue 31, item 8).

RULEGRAD_CFLAGS and RULEGRAD_CC's words are checked against an allow-list; the environment
variables the compiler reads (GCC_EXEC_PREFIX, CPATH, ...) are cleared for its runs. Values are
checked against numpy.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from fresh_c import fresh_c

from rulegrad import Tensor
from rulegrad.backends.c import build, flags
from rulegrad.backends.c.flags import CFlagsError


def _program() -> None:
    x = np.linspace(-3, 3, 37, dtype=np.float32)
    np.testing.assert_allclose((Tensor(x) * 3 + 1).exp().numpy(), np.exp(x * 3 + 1), rtol=1e-6)


@pytest.mark.parametrize("word", [
    "-specs=/tmp/rg.specs", "-Dexpf=exp2f", "-DRG_MVEC", "-UNDEBUG", "@/tmp/rg_flags",
    "-include", "-I/tmp", "-isystem/tmp", "-B/tmp", "-Wl,-z,now", "-Wa,--64", "-Wp,-DX=1",
    "-L/tmp", "-lm", "evil.o", "--no-such-flag", "-fno-such-thing", "-mfpmath=387",
    "-ffast-math", "-ffp-contract=fast", "-m32",
])
def test_a_flag_off_the_allow_list_is_refused_by_name(monkeypatch, tmp_path, word: str) -> None:
    fresh_c(monkeypatch, tmp_path)
    monkeypatch.setenv("RULEGRAD_CFLAGS", f"-O2 {word} -march=native")
    with pytest.raises(CFlagsError) as info:
        _program()
    text = str(info.value)
    assert f"RULEGRAD_CFLAGS: {word} " in text and "Allowed:" in text


@pytest.mark.parametrize("cc", ["{cc} -ffast-math", "{cc} -Dexpf=exp2f", "ccache {cc} -Ofast",
                                "{cc} -specs=/tmp/x.specs", "{cc} evil.o"])
def test_the_compiler_command_is_checked_too(monkeypatch, tmp_path, cc: str) -> None:
    fresh_c(monkeypatch, tmp_path)
    monkeypatch.setenv("RULEGRAD_CC", cc.format(cc=build.compiler()[0]))
    with pytest.raises(CFlagsError, match="RULEGRAD_CC: "):
        _program()


def test_allowed_tuning_builds_and_computes_what_numpy_does(monkeypatch, tmp_path) -> None:
    fresh_c(monkeypatch, tmp_path)
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -march=native -mtune=generic -funroll-loops "
                       "--param=max-unroll-times=4 -Wall -Wno-unused -g -fopenmp")
    monkeypatch.setenv("RULEGRAD_CC", f"{build.compiler()[0]} -O1")
    _program()


def test_every_default_flag_is_allowed() -> None:
    words = " ".join([*flags.LEVELS.values(), flags.DEFAULT_TUNING, *flags.SEMANTIC]).split()
    assert [w for w in words if not flags.allowed(w)] == []


def _gcc_subprogram_dir(cc: str) -> str | None:
    ask = [subprocess.run([cc, f], capture_output=True, text=True)
           for f in ("-dumpmachine", "-dumpversion")]
    if any(a.returncode for a in ask):
        return None
    return f"{ask[0].stdout.strip()}/{ask[1].stdout.strip()}"


def test_the_compilers_environment_is_not_read(monkeypatch, tmp_path) -> None:
    # GCC_EXEC_PREFIX makes gcc run the cc1 it names: a fake one here, which leaves a mark
    cc = build.compiler()[0]
    sub = _gcc_subprogram_dir(cc)
    assert sub is not None, f"{cc} does not answer -dumpmachine/-dumpversion"
    fake = tmp_path / "prefix" / sub
    fake.mkdir(parents=True)
    mark = tmp_path / "fake_cc1_ran"
    for prog in ("cc1", "as", "collect2"):
        (fake / prog).write_text(f"#!/bin/sh\ntouch {mark}\nexit 3\n")
        (fake / prog).chmod(0o755)
    fresh_c(monkeypatch, tmp_path)
    monkeypatch.setenv("GCC_EXEC_PREFIX", f"{tmp_path / 'prefix'}/")
    monkeypatch.setenv("COMPILER_PATH", str(fake))
    monkeypatch.setenv("CPATH", str(tmp_path))
    _program()
    assert not mark.exists()
    assert "GCC_EXEC_PREFIX" not in flags.compiler_env()
