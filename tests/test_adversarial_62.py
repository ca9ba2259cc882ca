"""hunt62: issue 31's open items, each at its cause, and the held-out adversary's finds.

1. A float CONST keeps the value its dtype holds: `UOp.const(float32, 3e-154).arg` was
   3e-154 while every kernel computed with 0.0, so a user's sound guard `c.arg > 0` was
   refuted by the checker (the constant "was" positive and multiplied as zero).
2. `rulegrad cache clear` and eviction deleted any file named `rg_<40 hex>.so` (or .sha256, .c,
   .beam, .rk): one forged under the cache's name pattern went too. A file is deleted only when
   its content names its entry (a library through its sidecar's hash of its bytes).
3. (not fixed; measured in bench/prod_float32_orders.c) numpy's float32 prod overflows where a
   left-to-right float32 prefix does; that is an order, and no associative reduction has it.
"""

# ruff: noqa: E501 (rule texts are kept on one line each, as a user writes them)
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from rulegrad.generator.soundness import check_paths
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.uop import UOp


def _check(tmp_path: Path, text: str, examples: int = 20) -> dict:
    path = tmp_path / "user.rules"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return {r.rule.name: r for r in check_paths([str(path)], examples=examples).rules}


# ---------------------------------------------------------------------- 1. constants' values
@pytest.mark.parametrize("dt, npt", [(dtypes.float32, np.float32), (dtypes.float16, np.float16)])
def test_a_float_constant_holds_its_dtypes_value(dt, npt):
    vals = [3e-154, 1e-46, 7e-46, 0.1, 1 / 3, 65519.99, 65520.0, 3.4028235677973366e38, 1e39,
            -1e39, -3e-154, 1e-8, 3e-8, float("inf"), -0.0]
    with np.errstate(over="ignore"):
        for v in vals:
            arg = UOp.const(dt, v).arg
            want = float(npt(v))
            assert arg == want and np.signbit(arg) == np.signbit(want), (v, arg, want)
    assert np.isnan(UOp.const(dt, float("nan")).arg)
    # float64 keeps every double; the same value is the same node
    assert UOp.const(dtypes.float64, 3e-154).arg == 3e-154
    assert UOp.const(dtypes.float32, 3e-154) is UOp.const(dtypes.float32, 0.0)


def test_a_sound_guard_on_a_rounded_constant_is_not_refuted(tmp_path):
    """c.arg > 0 on a float32 CONST: its value is a positive float32, and max(x c, y c) is
    max(x, y) c for every finite positive c (rounding is monotone); was refuted with c.arg =
    1e-50 whose value is 0. No float32 lies in (0, 1e-45): `none` holds of no constant."""
    rep = _check(tmp_path, """
        rules r = {
          pos:    MAX(MUL(x:float32, c:CONST), MUL(y, c)) if c.arg > 0.0 and c.arg < 1e30 -> MUL(MAX(x, y), c)
          pos16:  MIN(MUL(x:float16, c:CONST), MUL(y, c)) if c.arg > 0 and c.arg < 60000 -> MUL(MIN(x, y), c)
          none:   MUL(x:float32, c:CONST) if c.arg > 0 and c.arg < 1e-45 -> x
          nonneg: MAX(MUL(x:float32, c:CONST), MUL(y, c)) if c.arg >= 0.0 and c.arg < 1e30 -> MUL(MAX(x, y), c)
          flip:   MAX(MUL(x:float32, c:CONST), MUL(y, c)) if c.arg > -1e-30 and c.arg < 1e30 -> MUL(MAX(x, y), c)
          small:  MUL(x:float32, c:CONST) if c.arg < 1e-46 and c.arg > -1e-46 and c.arg == c.arg -> MUL(x, x.const_like(0.0))
        }
        """)
    for name in ("pos", "pos16", "none"):
        assert rep[name].verdict == "proved", rep[name].line()
    # unsound ones stay refuted: c = 0 makes NaN of -inf * 0 on the left only; a float32
    # constant below 1e-46 is +-0.0, yet x * -0.0 is not x * 0.0
    for name in ("nonneg", "flip", "small"):
        assert rep[name].verdict == "refuted", rep[name].line()
    with np.errstate(invalid="ignore"):
        c = np.float32(0.0)
        assert np.isnan(np.maximum(np.float32(-np.inf) * c, np.float32(1) * c))
        assert np.maximum(np.float32(-np.inf), np.float32(1)) * c == 0


# ---------------------------------------------------------------------- 2. the cache's own files
def _forged(folder: Path) -> dict[Path, bytes]:
    """Files a user (or another tool) left under the cache's exact name pattern, old enough that
    eviction takes them first if it takes them at all."""
    import json
    import marshal
    import os
    import time

    k = [f"{i:x}" * 40 for i in range(1, 8)]
    files = {
        folder / f"rg_{k[0]}.so": b"\x7fELF not a library the cache built",
        folder / f"rg_{k[1]}.so": b"a library whose sidecar names other bytes",
        folder / f"rg_{k[2]}.sha256": b"my checksums\n",
        folder / f"rg_{k[3]}.c": b"int main(void) { return 0; }\n",
        folder / f"rg_{k[4]}.beam": json.dumps({"key": k[0]}).encode(),
        folder / f"rg_{k[5]}.rk": marshal.dumps(("someone", ())),
        folder / f"rg_{k[6]}.rk": b"\x00\x01 results",
    }
    folder.mkdir(mode=0o700, exist_ok=True)
    # a sidecar in our form naming other bytes than its library's: the library is not ours
    # (the sidecar, in form the cache's, may go)
    (folder / f"rg_{k[1]}.sha256").write_text(f"{k[1]} {'0' * 64}\n")
    old = time.time() - 30 * 86400
    for path, data in files.items():
        path.write_bytes(data)
        os.utime(path, (old, old))
    return files


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    from rulegrad.backends.c import build, run

    folder = tmp_path / "project"
    monkeypatch.setenv("RULEGRAD_CACHE", str(folder))
    monkeypatch.delenv("RULEGRAD_CACHE_MAX", raising=False)
    build.clear_memory_cache()
    run._programs.clear()
    yield folder
    build.clear_memory_cache()
    run._programs.clear()


def _run(scale: float) -> None:
    from rulegrad import Tensor

    a = np.arange(7, dtype=np.float32)
    np.testing.assert_array_equal((Tensor(a) * scale + 1).numpy(), a * np.float32(scale) + 1)


def test_clear_and_eviction_leave_files_forged_under_the_caches_names(cache, monkeypatch, capsys):
    from rulegrad.backends.c import build, run
    from rulegrad.cli import main

    files = _forged(cache)
    _run(3.0)
    made = {p for p in cache.iterdir() if p not in files}
    assert any(p.suffix == ".so" for p in made), made
    monkeypatch.setenv("RULEGRAD_CACHE_MAX", "1")  # evicts all but the entry just built
    build.clear_memory_cache()
    run._programs.clear()
    _run(5.0)
    for path, data in files.items():
        assert path.read_bytes() == data, path
    assert main(["cache", "clear"]) == 0
    assert "removed 1 libraries" in capsys.readouterr().out
    for path, data in files.items():
        assert path.read_bytes() == data, path
    assert not [p for p in cache.iterdir() if p not in files and p.name.startswith("rg_")]


def test_a_kept_source_names_its_entry_and_is_cleared(cache):
    from rulegrad.backends.c import build
    from rulegrad.backends.c import cache as disk

    cache.mkdir(mode=0o700)
    key = "9" * 40
    path = Path(build._keep_source(key, "int f(void) { return 1; }\n"))
    assert path.read_bytes().startswith(b"int f(void) { return 1; }\n")
    assert disk.clear()[:2] == (1, 0)
    assert not path.exists()


@pytest.mark.parametrize("dt, lit", [("float32", "0.1"), ("float16", "0.99"), ("float16", "1e-8")])
def test_a_pattern_literal_matches_the_constant_written_with_it(tmp_path, dt, lit):
    """A constant holds its dtype's value, so a literal the dtype rounds (0.1 in float32) is
    compared as the CONST's dtype holds it: `x * 0.1` still meets `MUL(x, 0.1)`. The rule is
    wrong on purpose (run with allow_refuted) so that its firing shows in the values."""
    from rulegrad import Tensor
    from rulegrad.generator.user import add_rules

    path = tmp_path / "lit.rules"
    path.write_text(f"rules r = {{\n  twice: MUL(x:{dt}, {lit}) -> ADD(x, x)\n}}\n")
    a = np.array([1.0, -2.0, 3.5], dt)
    with pytest.warns(RuntimeWarning, match="refuted"):
        ctx = add_rules(path, "r", after="pm_rangeify", allow_refuted=True)
    with ctx:
        got = (Tensor(a) * float(lit)).numpy()
    np.testing.assert_array_equal(got, a + a)
    np.testing.assert_array_equal((Tensor(a) * float(lit)).numpy(), a * a.dtype.type(float(lit)))
