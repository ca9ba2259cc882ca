"""Issue 31, the blind spots left after session 62 (helper hunt63), each test seen failing on the
code before its fix: `cache info` counting forged entries, guards no value can satisfy, shadowing
between rules whose patterns carry literals, integer constants out of their dtype's range."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest


# ====================================================================== cache info: ours only
@pytest.fixture
def project_cache(tmp_path, monkeypatch) -> Path:
    from rulegrad.backends.c import cache as disk

    path = tmp_path / "project"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("RULEGRAD_CACHE", str(path))
    monkeypatch.delenv("RULEGRAD_CACHE_MAX", raising=False)
    monkeypatch.setattr(disk, "_fallback", {})
    monkeypatch.setattr(disk, "_cleaned", set())
    return path


def test_cache_info_counts_only_what_clear_would_delete(project_cache):
    """A project folder holding files forged under entry names (a library with no sidecar, one
    with a sidecar for other bytes, a .beam naming another key): info counted them as libraries
    though clear leaves them; it must count what clear removes, and the same bytes."""
    from rulegrad.backends.c import cache as disk

    mine = [disk.key_of("kernel", str(i)) for i in range(3)]
    for key in mine:
        disk.install(key, b"\x7fELF library " + key.encode())
    forged = [disk.key_of("forged", str(i)) for i in range(4)]
    (project_cache / f"rg_{forged[0]}.so").write_bytes(b"\0" * 50_000)
    (project_cache / f"rg_{forged[1]}.so").write_bytes(b"\0" * 50_000)
    (project_cache / f"rg_{forged[1]}.sha256").write_bytes(
        f"{mine[1]} {'0' * 64}\n".encode())  # a sidecar naming another entry
    (project_cache / f"rg_{forged[2]}.beam").write_bytes(b'{"key": "%s"}' % mine[0].encode())
    (project_cache / f"rg_{forged[3]}.c").write_bytes(b"int main(void) { return 0; }\n")
    out = disk.info()
    assert "entries   3 libraries" in out, out
    size = sum(p.stat().st_size for p in project_cache.iterdir()
               if any(k in p.name for k in mine))
    assert f"{size} B" in out or f"{size / 1024:.1f} KB" in out, out
    removed, failed, _ = disk.clear()
    assert (removed, failed) == (3, 0)
    assert "entries   0 libraries" in disk.info()
    assert len(list(project_cache.iterdir())) == 5  # the forged files, left alone


def test_cache_info_on_2000_entries_reads_each_file_once(project_cache, monkeypatch):
    """The ownership test reads (and hashes) every library; info over 2,000 entries must do so
    once per file, not once per file per check (counted, not timed)."""
    from rulegrad.backends.c import cache as disk

    for i in range(2000):
        key = disk.key_of("many", str(i))
        so, side = disk.entry_paths(key, project_cache)
        data = b"lib" + key.encode()
        side.write_bytes(disk._sidecar_text(key, data))
        so.write_bytes(data)
    reads = []
    real = disk.read_regular
    monkeypatch.setattr(disk, "read_regular", lambda p, n: reads.append(p) or real(p, n))
    assert "entries   2000 libraries" in disk.info()
    assert len(reads) <= 2 * 2 * 2000  # each .so: itself and its sidecar; each sidecar: itself


# ====================================================================== guards that never hold
NEVER = """rules user = {
  tenth:    MUL(x:float32, c:CONST) if c.arg == 0.1 -> x
  rounded:  MUL(x:float32, c:CONST) if c.arg == c.const_like(0.1).arg -> MUL(x, c)
  exact64:  MUL(x:float64, c:CONST) if c.arg == 0.1 -> MUL(x, c)
  nottenth: MUL(x:float32, c:CONST) if c.arg != 0.1 -> MUL(x, c)
  big16:    ADD(x:float16, 2049) -> x
  half16:   ADD(x:float16, 0.1) -> ADD(x, x.const_like(0.1))
  small8:   ADD(x:int8, c:CONST) if c.arg > 200 -> x
  cmp8:     ADD(x:int8, c:CONST) if c.arg > 100 -> ADD(c, x)
  mixed:    MUL(x:int8, y:float32) -> y
}
"""


def test_check_warns_of_a_rule_that_can_never_fire(tmp_path, capsys):
    """`c.arg == 0.1` on a float32 constant (which holds 0.10000000149011612) never holds: the
    checker proved such a rule with no word. It now warns, at file:line:col, suggests the
    rounded comparison for a float literal, and exits 3 (--allow-unknown accepts it); a pattern
    literal no allowed dtype holds (2049 as float16), and an int guard past the dtype's range,
    warn too. Rules that can fire do not."""
    from rulegrad.generator.soundness import EXIT_OK, EXIT_UNKNOWN, check_paths, run_check

    f = tmp_path / "never.rules"
    f.write_text(NEVER)
    rep = {r.rule.name: r for r in check_paths([str(f)], examples=10).rules}
    warned = {name for name, r in rep.items() if r.warning}
    assert warned == {"tenth", "big16", "small8", "mixed"}, {k: v.warning for k, v in rep.items()}
    assert "matches no well-typed node" in rep["mixed"].warning
    assert all(r.verdict == "proved" for r in rep.values())
    w = rep["tenth"].warning
    assert "never.rules:2:3: warning: tenth can never fire" in w, w
    assert "c.arg == c.const_like(0.1).arg" in w
    assert "never.rules:6:3" in rep["big16"].warning
    assert run_check([str(f)], examples=10) == EXIT_UNKNOWN
    assert "tenth can never fire" in capsys.readouterr().out
    assert run_check([str(f)], examples=10, allow_unknown=True) == EXIT_OK


# ====================================================================== shadowing by literals
SHADOWED = {
    "zeros": ("ADD(x, 0) -> x", "ADD(x, 0.0) -> x"),  # 0 and 0.0 match the same constants
    "ones": ("MUL[x, 1] -> x", "MUL(1.0, x) -> x"),  # commutative, literal in the other order
    "half": ("MUL(x:float16, 0.1) -> x", "MUL(x:float16, 0.09999) -> x"),  # one float16
    "own_dtype": ("MUL(x, 0.1) -> x", "MUL(x, 0.09999:float16) -> x"),
    "true": ("AND(x:bool, True) -> x", "AND(x:bool, 1) -> x"),
    # a capture of a dtype covers a literal whose dtype its same-dtype op bounds
    "capture": ("ADD(x:float16, y:float16) -> x", "ADD(x:float16, 0.5) -> x"),
}
NOT_SHADOWED = {
    "f32": ("MUL(x:float32, 0.1) -> x", "MUL(x:float32, 0.09999) -> x"),  # float32 tells apart
    "untyped": ("MUL(x, 0.1) -> x", "MUL(x, 0.09999) -> x"),  # float32 and float64 do
    "half_int": ("MUL(x, 1) -> x", "MUL(x, 1.5) -> x"),
    "other_way": ("MUL(x:float16, 2049) -> x", "MUL(x:float16, 2048) -> x"),  # 2049: none
    "capture_wider": ("ADD(x:float16, y:float16) -> x", "ADD(x, 0.5) -> x"),
    "not_same_dtype": ("CMPLT(x:float16, y:float16) -> x", "CMPLT(x, 0.5:float32) -> x"),
}


def _errors(first: str, second: str) -> list[str]:
    from rulegrad.dsl.check import check_collect
    from rulegrad.dsl.parser import parse_collect

    text = f"rules s = {{\n  {first}\n  {second}\n}}\n"
    rf, diags = parse_collect(text, "s.rules")
    assert rf is not None, diags
    _, diags, _ = check_collect(rf, lambda p: text)
    return [d.message for d in diags]


@pytest.mark.parametrize("name", sorted(SHADOWED))
def test_shadowing_between_literal_patterns_is_found(name):
    """The earlier rule matches every constant the later one's literal matches (the matchers
    compare `arg == literal`, a float literal rounded to the constant's float dtype): the later
    rule can never fire. Subsumption compared literals by value and Python type, and missed it."""
    errors = _errors(*SHADOWED[name])
    assert any("can never fire" in e for e in errors), errors


@pytest.mark.parametrize("name", sorted(NOT_SHADOWED))
def test_literals_some_dtype_tells_apart_do_not_shadow(name):
    errors = _errors(*NOT_SHADOWED[name])
    assert not any("can never fire" in e for e in errors), errors


def test_literal_shadowing_agrees_with_the_matcher():
    """An independent oracle for the literal test: the interpreted matcher of the earlier rule
    run on constants of every dtype the later literal matches."""
    from rulegrad.dsl.parser import parse_collect
    from rulegrad.dsl.subsume import subsumes
    from rulegrad.generator.interp import const_eq
    from rulegrad.runtime.dtype import DTYPES
    from rulegrad.runtime.uop import const_value

    lits = [0, 0.0, -0.0, 1, 1.0, True, False, 0.1, 0.09999, 2049, 2048, 1.5, 300, -1,
            float("inf"), float("nan"), 65504.0, 65520.0, 16777217]
    for a in lits:
        for b in lits:
            rf, _ = parse_collect(f"rules s = {{\n  MUL(x, {a!r}) -> x\n  MUL(x, {b!r}) -> x\n}}\n",
                                  "s.rules")
            if rf is None:
                continue
            r1, r2 = rf.rulesets[0].terms[0].rules
            if not subsumes(r1.pattern, r2.pattern):
                continue
            for dt in DTYPES:  # every constant b matches, a matches
                vals = [v for v in lits if dt.is_float or (math.isfinite(v) and v == int(v))]
                for arg in {const_value(dt, v) for v in vals if not dt.is_bool or v in (0, 1)}:
                    if const_eq(arg, b, dt) and not (dt.is_int and not dt.min <= arg <= dt.max):
                        assert const_eq(arg, a, dt), (a, b, dt, arg)


# ====================================================================== ints past their dtype


_INT_OPS = {"add": lambda a, s: a + s, "radd": lambda a, s: s + a, "sub": lambda a, s: a - s,
            "rsub": lambda a, s: s - a, "mul": lambda a, s: a * s, "floordiv": lambda a, s: a // s,
            "rfloordiv": lambda a, s: s // a, "mod": lambda a, s: a % s,
            "and": lambda a, s: a & s, "or": lambda a, s: a | s, "xor": lambda a, s: a ^ s}


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32"])
def test_a_python_int_past_the_dtype_wraps_as_torch_computes(each_path, dt):
    """`Tensor([1, 2], dtype=int8) + 300`: numpy 2 raises, rulegrad raised numpy's
    OverflowError; torch keeps the tensor's dtype and wraps the int to its bits (44). Every
    arithmetic and bitwise op, both orders, the int both past the top and the bottom, through
    both schedulers and the interpreter, against torch; constants folded by the rules too
    ((a * 1000) * 1000)."""
    torch = pytest.importorskip("torch")
    from rulegrad import Tensor

    info = np.iinfo(dt)
    a = np.array([1, 2, 3, 100, 7, 5], dt) if info.min == 0 else np.array([1, -2, 3, 100, -7, 5],
                                                                              dt)
    for s in (int(info.max) + 45, int(info.min) - 1000, 300 * (int(info.max) + 1) + 3,
              -(2**40) - 7):
        for name, f in _INT_OPS.items():
            want = f(torch.from_numpy(a), s).numpy()
            got = f(Tensor(a), s).numpy()
            assert got.dtype == want.dtype and np.array_equal(got, want), (name, s, got, want)
    want = ((torch.from_numpy(a) * 1000) * 1000).numpy()
    assert np.array_equal(((Tensor(a) * 1000) * 1000).numpy(), want)


def test_ints_no_op_can_wrap_are_refused_with_the_dtype_named():
    """A constant made on its own (`full`, `Tensor(300, int8)`), a power whose exponent would
    wrap (3 ** 300 is not 3 ** 44), and a clamp bound that clips every value to a number the
    dtype cannot hold are refused, as torch refuses them, never a wrapped or out-of-range value."""
    from rulegrad import Tensor, dtypes

    a = Tensor(np.array([3, 2, 100], np.int8))
    with pytest.raises(OverflowError, match="uint8"):
        Tensor.full((3,), 300, dtype=dtypes.uint8)
    with pytest.raises(OverflowError, match="int8"):
        Tensor([300, 1], dtype=dtypes.int8)
    with pytest.raises(ValueError, match="exponent 300 is outside int8"):
        a ** 300
    with pytest.raises(OverflowError, match="clamp bound -129 is outside int8"):
        a.clip(None, -129)
    with pytest.raises(OverflowError, match="clamp bound 128 is outside int8"):
        a.clip(128, None)
    assert np.array_equal(a.clip(-1000, 1000).numpy(), [3, 2, 100])  # clips nothing (numpy)
