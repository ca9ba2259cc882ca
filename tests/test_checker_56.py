"""`rulegrad check` on bit-level rules and narrow sums (issue 31, the checker's blind spots).

- Sound rules of AND, shifts and casts over uint32/int32 ran z3 out of its resource limit
  (`unknown`): sized integers were wrapped Ints that met bit operations through Int2BV/BV2Int.
  They are bit-vectors now where no index is mixed in (generator/smt.py, BitWorld).
- A rule wrong only when an int8, uint8 or int16 count or sum wraps had no instance drawn (a
  CAST of a REDUCE_AXIS root never kept a reduced axis of 1; a CAST's source was drawn in any
  dtype) or none that wrapped (reduced axes of at most 4, or 2**15 and 2**16 of random bools).

Every verdict is checked against numpy as well: a refuted rule's two sides differ somewhere on
numpy's values, a proved or passed one's agree on a sweep (all 65,536 16-bit values, edges and
random 32-bit ones).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from rulegrad.generator.soundness import check_paths

i8, u8, i16, u16, i32, u32 = np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32


def _check(tmp_path: Path, body: str, examples: int = 60) -> dict:
    f = tmp_path / "c56.rules"
    f.write_text(textwrap.dedent(body).lstrip("\n"))
    return {r.rule.name: r for r in check_paths([str(f)], examples=examples).rules}


def _values(dt: type) -> np.ndarray:
    """A sweep of dt: every value of a 16-bit or narrower type; else its edges, small values,
    powers of two and their neighbours, and random values."""
    info = np.iinfo(dt)
    if info.bits <= 16:
        return np.arange(info.min, info.max + 1, dtype=np.int64).astype(dt)
    rng = np.random.default_rng(56)
    p2 = [s * (1 << k) + d for k in range(info.bits) for s in (1, -1) for d in (-1, 0, 1)]
    v = np.array([info.min, info.max, *range(-300, 300), *p2], dtype=np.int64)
    v = v[(v >= info.min) & (v <= info.max)]
    return np.concatenate([v, rng.integers(info.min, info.max, 20000, endpoint=True)]).astype(dt)


def _shr(x: np.ndarray, n: int) -> np.ndarray:
    """runtime/semantics.py's SHR: a count at or past the width gives 0 or the sign."""
    bits = x.dtype.itemsize * 8
    if n < bits:
        return x >> x.dtype.type(n)
    return np.where(x < 0, -1, 0).astype(x.dtype)


def _shl(x: np.ndarray, n: int) -> np.ndarray:
    return (x << x.dtype.type(n)) if n < x.dtype.itemsize * 8 else np.zeros_like(x)


def _cdiv(x: np.ndarray, c: int) -> np.ndarray:
    return (np.fix(x.astype(np.float64) / c)).astype(x.dtype)  # C's truncation (exact < 2**53)


def _cmod(x: np.ndarray, c: int) -> np.ndarray:
    return np.fmod(x, x.dtype.type(c))


def _pair(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of a small sweep of x's dtype (edges, small values, random)."""
    v = _values(x.dtype.type)
    v = v[np.random.default_rng(5).choice(len(v), min(len(v), 400), replace=False)]
    info = np.iinfo(x.dtype)
    v = np.concatenate([v, np.array([info.min, info.max, 0, 1, -1 if info.min else 2],
                                    dtype=np.int64).astype(x.dtype)])
    a, b = np.meshgrid(v, v)
    return a.ravel(), b.ravel()


# name: (rule, dtype of x, numpy left side, numpy right side); y (when used) is x's dtype
FORMER_UNKNOWNS = {
    "mod_and": ("MOD(x:uint32, 8) -> AND(x, x.const_like(7))",
                u32, lambda x: x % u32(8), lambda x: x & u32(7)),
    "shr_mask": ("SHR(AND(x:uint32, 65280), 8) -> AND(SHR(x, x.const_like(8)), x.const_like(255))",
                 u32, lambda x: (x & u32(65280)) >> u32(8), lambda x: (x >> u32(8)) & u32(255)),
    "shr_shr": ("SHR(SHR(x:uint32, 3), 5) -> SHR(x, x.const_like(8))",
                u32, lambda x: (x >> u32(3)) >> u32(5), lambda x: x >> u32(8)),
    "sshr_shr": ("SHR(SHR(x:int32, 3), 5) -> SHR(x, x.const_like(8))",
                 i32, lambda x: (x >> i32(3)) >> i32(5), lambda x: x >> i32(8)),
    "cast_rt": ("CAST(CAST(x:uint32, dtype=dtypes.uint8), dtype=dtypes.uint32)"
                " -> AND(x, x.const_like(255))",
                u32, lambda x: x.astype(u8).astype(u32), lambda x: x & u32(255)),
    "cast_and": ("CAST(AND(x:int32, 255), dtype=dtypes.uint8) -> CAST(x, dtype=dtypes.uint8)",
                 i32, lambda x: (x & i32(255)).astype(u8), lambda x: x.astype(u8)),
}

# sound, written to look like the wrong ones below
SOUND = {
    "xor_xor": ("XOR(XOR(x:int32, y), y) -> x", i32, lambda x, y: (x ^ y) ^ y, lambda x, y: x),
    "and_or_add": ("ADD(AND(x:uint32, y), OR(x, y)) -> ADD(x, y)",
                   u32, lambda x, y: (x & y) + (x | y), lambda x, y: x + y),
    "xor_carry": ("ADD(XOR(x:int32, y), SHL(AND(x, y), 1)) -> ADD(x, y)",
                  i32, lambda x, y: (x ^ y) + ((x & y) << i32(1)), lambda x, y: x + y),
    "shr_wide": ("SHR(x:int32, 32) -> SHR(x, x.const_like(31))",
                 i32, lambda x: _shr(x, 32), lambda x: _shr(x, 31)),
    "shl_wide": ("SHL(x:uint16, 16) -> MUL(x, x.const_like(0))",
                 u16, lambda x: _shl(x, 16), lambda x: x * u16(0)),
    "narrow_rt": ("CAST(CAST(x:int8, dtype=dtypes.int32), dtype=dtypes.int8) -> x",
                  i8, lambda x: x.astype(i32).astype(i8), lambda x: x),
    "float_rt": ("CAST(CAST(x:int16, dtype=dtypes.float32), dtype=dtypes.int16) -> x",
                 i16, lambda x: x.astype(np.float32).astype(i16), lambda x: x),
    "not_sub": ("XOR(x:int32, -1) -> SUB(NEG(x), x.const_like(1))",
                i32, lambda x: x ^ i32(-1), lambda x: -x - i32(1)),
    "sign_one": ("AND(SHR(x:int32, 31), 1) -> CAST(CMPLT(x, x.const_like(0)), dtype=dtypes.int32)",
                 i32, lambda x: (x >> i32(31)) & i32(1), lambda x: (x < 0).astype(i32)),
    "clear_low": ("SUB(x:int32, AND(x, 7)) -> AND(x, x.const_like(-8))",
                  i32, lambda x: x - (x & i32(7)), lambda x: x & i32(-8)),
    "halves": ("OR(AND(x:uint16, 65280), AND(x, 255)) -> x",
               u16, lambda x: (x & u16(65280)) | (x & u16(255)), lambda x: x),
    "mul_shl": ("MUL(x:uint32, 8) -> SHL(x, x.const_like(3))",
                u32, lambda x: x * u32(8), lambda x: x << u32(3)),
}

# wrong for one sign, one width, a shift at or past the width, or a cast that loses the sign
WRONG = {
    "sdiv4": ("IDIV(x:int16, 4) -> SHR(x, x.const_like(2))",
              i16, lambda x: _cdiv(x, 4), lambda x: x >> i16(2)),
    "smod8": ("MOD(x:int32, 8) -> AND(x, x.const_like(7))",
              i32, lambda x: _cmod(x, 8), lambda x: x & i32(7)),
    "sshl_shr": ("SHR(SHL(x:int32, 8), 8) -> AND(x, x.const_like(16777215))",
                 i32, lambda x: (x << i32(8)) >> i32(8), lambda x: x & i32(16777215)),
    "shr_out": ("SHR(x:int32, 32) -> x.const_like(0)",
                i32, lambda x: _shr(x, 32), lambda x: np.zeros_like(x)),
    "shl_wrap": ("SHL(x:uint16, 16) -> x", u16, lambda x: _shl(x, 16), lambda x: x),
    "widen_sign": ("CAST(CAST(x:int8, dtype=dtypes.int32), dtype=dtypes.uint32)"
                   " -> CAST(CAST(x, dtype=dtypes.uint8), dtype=dtypes.uint32)",
                   i8, lambda x: x.astype(i32).astype(u32), lambda x: x.astype(u8).astype(u32)),
    "cmp_u": ("CMPLT(CAST(x:int32, dtype=dtypes.uint32), CAST(y:int32, dtype=dtypes.uint32))"
              " -> CMPLT(x, y)", i32, lambda x, y: x.astype(u32) < y.astype(u32),
              lambda x, y: x < y),
    "not_neg": ("XOR(x:int32, -1) -> NEG(x)", i32, lambda x: x ^ i32(-1), lambda x: -x),
    "low_byte": ("AND(x:int16, 255) -> CAST(CAST(x, dtype=dtypes.int8), dtype=dtypes.int16)",
                 i16, lambda x: x & i16(255), lambda x: x.astype(i8).astype(i16)),
    "half_sum": ("SHR(ADD(x:uint32, y), 1)"
                 " -> ADD(SHR(x, x.const_like(1)), SHR(y, x.const_like(1)))",
                 u32, lambda x, y: (x + y) >> u32(1), lambda x, y: (x >> u32(1)) + (y >> u32(1))),
    "avg_wrap": ("ADD(AND(x:uint32, y), SHR(XOR(x, y), 1)) -> SHR(ADD(x, y), x.const_like(1))",
                 u32, lambda x, y: (x & y) + ((x ^ y) >> u32(1)), lambda x, y: (x + y) >> u32(1)),
    "sign_bit": ("SHR(x:int32, 31) -> CAST(CMPLT(x, x.const_like(0)), dtype=dtypes.int32)",
                 i32, lambda x: x >> i32(31), lambda x: (x < 0).astype(i32)),
    "half_rt": ("CAST(CAST(x:uint16, dtype=dtypes.float16), dtype=dtypes.uint16) -> x",
                u16, lambda x: x.astype(np.float16).astype(u16), lambda x: x),
}


def _rules_file(table: dict) -> str:
    width = max(map(len, table)) + 1
    lines = [f"  {name + ':':<{width}} {rule}" for name, (rule, *_) in table.items()]
    return "rules r = {\n" + "\n".join(lines) + "\n}\n"


def _numpy_sides(entry: tuple) -> tuple[np.ndarray, np.ndarray]:
    _, dt, left, right = entry
    with np.errstate(over="ignore", invalid="ignore"):
        if left.__code__.co_argcount == 2:
            x, y = _pair(np.zeros(1, dt))
            return left(x, y), right(x, y)
        x = _values(dt)
        return left(x), right(x)


def _all_proved(tmp_path, rules: dict) -> None:
    """Every rule proved by the checker, and its two sides equal in numpy."""
    rep = _check(tmp_path, _rules_file(rules))
    for name, entry in rules.items():
        assert rep[name].verdict == "proved", rep[name].line()
        a, b = _numpy_sides(entry)
        assert np.array_equal(a, b), name


def test_the_former_unknowns_are_proved(tmp_path):
    """Six sound rules of AND, SHR and casts over uint32 and int32 that z3 left `unknown`."""
    _all_proved(tmp_path, FORMER_UNKNOWNS)


def test_sound_bit_rules_are_proved(tmp_path):
    _all_proved(tmp_path, SOUND)


def test_wrong_bit_rules_are_refuted_with_a_confirmed_counterexample(tmp_path):
    rep = _check(tmp_path, _rules_file(WRONG))
    for name, entry in WRONG.items():
        assert rep[name].verdict == "refuted", rep[name].line()
        assert "confirmed by the oracle" in rep[name].counterexample, rep[name].counterexample
        a, b = _numpy_sides(entry)
        assert not np.array_equal(a, b), name  # numpy's own view: the sides differ


NARROW = """
rules r = {
  count_i8:  CAST(REDUCE_AXIS(CAST(b:bool, dtype=dtypes.int8)) as r, dtype=dtypes.int32) \\
               if r.arg[0] is Ops.ADD -> REDUCE_AXIS(CAST(b, dtype=dtypes.int32), arg=r.arg)
  count_u8:  CAST(REDUCE_AXIS(CAST(b:bool, dtype=dtypes.uint8)) as r, dtype=dtypes.int32) \\
               if r.arg[0] is Ops.ADD -> REDUCE_AXIS(CAST(b, dtype=dtypes.int32), arg=r.arg)
  count_i16: CAST(REDUCE_AXIS(CAST(b:bool, dtype=dtypes.int16)) as r, dtype=dtypes.int32) \\
               if r.arg[0] is Ops.ADD -> REDUCE_AXIS(CAST(b, dtype=dtypes.int32), arg=r.arg)
  less_i8:   CAST(REDUCE_AXIS(CAST(CMPLT(x:int8, y), dtype=dtypes.int8)) as r, \\
               dtype=dtypes.int16) if r.arg[0] is Ops.ADD \\
               -> REDUCE_AXIS(CAST(CMPLT(x, y), dtype=dtypes.int16), arg=r.arg)
  sum_u8:    CAST(REDUCE_AXIS(x:uint8) as r, dtype=dtypes.uint16) if r.arg[0] is Ops.ADD \\
               -> REDUCE_AXIS(CAST(x, dtype=dtypes.uint16), arg=r.arg)
  count_ok:  CAST(REDUCE_AXIS(CAST(b:bool, dtype=dtypes.int8)) as r, dtype=dtypes.uint8) \\
               if r.arg[0] is Ops.ADD -> REDUCE_AXIS(CAST(b, dtype=dtypes.uint8), arg=r.arg)
  sum_ok:    CAST(REDUCE_AXIS(x:int16) as r, dtype=dtypes.int8) if r.arg[0] is Ops.ADD \\
               -> REDUCE_AXIS(CAST(x, dtype=dtypes.int8), arg=r.arg)
}
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_rules_wrong_only_when_a_narrow_sum_wraps_are_refuted(tmp_path, seed):
    """Each wrong rule is right until the narrow count or sum passes its dtype's maximum (128
    trues for int8, 256 for uint8, 32768 for int16); the sound twins wrap the same either way."""
    f = tmp_path / "narrow.rules"
    f.write_text(NARROW.lstrip("\n"))
    rep = {r.rule.name: r for r in check_paths([str(f)], examples=100, seed=seed).rules}
    for name in ("count_i8", "count_u8", "count_i16", "less_i8", "sum_u8"):
        assert rep[name].verdict == "refuted", rep[name].line()
    for name in ("count_ok", "sum_ok"):
        assert rep[name].verdict == "passed", rep[name].line()
    # numpy's view of each: the narrow sum wraps where the wide one does not
    with np.errstate(over="ignore"):
        for dt, n in ((i8, 128), (u8, 256), (i16, 32768)):
            ones = np.ones(n, dtype=dt)
            assert ones.sum(dtype=dt).astype(np.int32) != np.ones(n, np.int32).sum()
        x = np.full(2, 200, u8)
        assert x.sum(dtype=u8).astype(u16) != x.astype(u16).sum(dtype=u16)
        b = np.random.default_rng(seed).integers(0, 2, 300).astype(bool)
        assert (b.astype(i8).sum(dtype=i8).astype(u8) == b.astype(u8).sum(dtype=u8))
        w = np.random.default_rng(seed).integers(-32768, 32767, 300).astype(i16)
        assert w.sum(dtype=i16).astype(i8) == w.astype(i8).sum(dtype=i8)
