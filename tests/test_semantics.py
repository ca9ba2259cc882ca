"""The semantics sweep: every op x dtype x special value through all five executors.

runtime/semantics.py is the table. For every op, every dtype its operands may have (the table's
DOMAIN) and every pair (or single, or triple) of special values of that dtype (+-0, +-inf, NaN,
subnormals, INT_MIN, -1, 0, 1, max, ...), these must give identical bits (any NaN equals any
NaN; -0.0 is not +0.0):

- the table itself, and numpy's own ufunc wherever numpy defines the result;
- the numpy oracle (a tensor-level graph) and the kernel interpreter (a kernel AST);
- the C backend, on the vectorized path (one kernel per (op, dtype) over arrays of all the
  value pairs: the loop gcc vectorizes, plus its scalar tail) and on a scalar path (a kernel of
  one element, called once per pair); all kernels are built into one library;
- the constant folder (`fold_alu`, `cast_value`), wherever it folds (ints and bools);
- z3's term for the op (`generator/smt.py`'s `World.alu`) on constants, simplified to a value.

Libm functions (EXP, LOG, SIN, POW, ...) are compared within LIBM_ULPS (C uses glibc and its
vector library, numpy its own SIMD code), exactly where the result is 0, inf or NaN.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
import z3

from rulegrad.backends import kernel_interp, oracle
from rulegrad.generator import smt
from rulegrad.rules.symbolic_helpers import cast_value, fold_alu
from rulegrad.runtime import semantics
from rulegrad.runtime.dtype import DTYPES, DType, dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.tensor import Tensor
from rulegrad.runtime.uop import UOp

LIBM_ULPS = 4
SWEEP_DTYPES = DTYPES + (dtypes.index,)
UNARY = [Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.SQRT,
         Ops.RECIPROCAL, Ops.TRUNC]
BINARY = [Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW,
          Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR]
TERNARY = [Ops.WHERE, Ops.MULACC]
COMPARE = (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ)


# ---------------------------------------------------------------------------- special values
def specials(dt: DType) -> np.ndarray:
    npd = dt.np
    if dt.is_bool:
        return np.array([False, True])
    if dt.is_int:
        info = np.iinfo(npd)
        vals = [0, 1, -1, 2, -2, 3, 7, 8, 31, 32, 63, 64, info.min, info.min + 1, info.max,
                info.max - 1, info.max // 2, info.max // 2 + 1]
        return np.array(sorted({v for v in vals if info.min <= v <= info.max}), dtype=npd)
    fi = np.finfo(npd)
    tiny_sub = np.nextafter(np.zeros((), npd), np.ones((), npd))
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, tiny_sub, -tiny_sub, fi.max, -fi.max,
            fi.tiny, 0.1, 0.5, 2.5, -2.5, 3.0, -7.0, 300.7, -200.3, 2.0**31, 2.0**63, -(2.0**63),
            2.0**64, 1.5e19]
    with np.errstate(all="ignore"):
        arr = np.array(vals, dtype=np.float64).astype(npd)
    # distinct bit patterns only (float16 turns the large ones into inf)
    _, first = np.unique(arr.view(f"u{npd.itemsize}"), return_index=True)
    return arr[np.sort(first)]


def operands(op: Ops, dt: DType) -> list[np.ndarray]:
    """The operand arrays of one (op, dtype) cell: every combination of special values."""
    v = specials(dt)
    if op is Ops.WHERE:
        grid = list(itertools.product([False, True], v, v))
        return [np.array([g[0] for g in grid]), *(np.array([g[i] for g in grid], dtype=dt.np)
                                                  for i in (1, 2))]
    if op is Ops.MULACC:
        v = v[:10]
        grid = list(itertools.product(v, v, v))
    elif op in UNARY or op is Ops.CAST:
        return [v]
    else:
        grid = list(itertools.product(v, v))
    return [np.array([g[i] for g in grid], dtype=dt.np) for i in range(len(grid[0]))]


def cells() -> list[tuple[Ops, DType, DType]]:
    """(op, operand dtype, result dtype) of every cell the table defines."""
    out = []
    for dt in SWEEP_DTYPES:
        kind = "i" if dt is dtypes.index else dt.np.kind
        for op in UNARY + BINARY + TERNARY:
            if semantics.defined(op, kind):
                out.append((op, dt, dtypes.bool if op in COMPARE else dt))
        out.extend((Ops.CAST, dt, to) for to in SWEEP_DTYPES if to is not dt)
    return out


CELLS = cells()


def cell_id(cell: tuple[Ops, DType, DType]) -> str:
    op, dt, out = cell
    return f"{op.name}-{dt.name}" + (f"-{out.name}" if op is Ops.CAST else "")


def reference(op: Ops, out: DType, xs: list[np.ndarray]) -> np.ndarray:
    if op is Ops.CAST:
        return semantics.cast(xs[0], out.np)
    return semantics.alu(op, out.np, *xs)


# ---------------------------------------------------------------------------- comparing bits
def mismatches(op: Ops, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """A bool mask of the elements where `got` is not `want` (NaN equals NaN, -0.0 != 0.0)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind != "f":
        return got != want
    ubits = f"u{want.dtype.itemsize}"
    same = (got.view(ubits) == want.view(ubits)) | (np.isnan(got) & np.isnan(want))
    if op in semantics.LIBM_OPS:
        special = ~np.isfinite(want) | (want == 0) | ~np.isfinite(got) | (got == 0)
        ints = np.where(np.signbit(want), -1, 1) * want.view(ubits).astype(np.float64)
        gots = np.where(np.signbit(got), -1, 1) * got.view(ubits).astype(np.float64)
        near = ~special & (np.abs(ints - gots) <= LIBM_ULPS)
        same |= near
    return ~same


def assert_same(what: str, cell: tuple, xs: list[np.ndarray], got: np.ndarray,
                want: np.ndarray) -> None:
    bad = mismatches(cell[0], got, want)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        args = ", ".join(repr(x[i]) for x in xs)
        pytest.fail(f"{what} {cell_id(cell)}: {int(bad.sum())} of {bad.size} cells differ; "
                    f"first: op({args}) = {got[i]!r}, expected {want[i]!r}")


# ---------------------------------------------------------------------------- kernels
def _glob(i: int, dt: DType) -> UOp:
    return UOp(Ops.DEFINE_GLOBAL, dt, (), i)


def _index(buf: UOp, r: UOp) -> UOp:
    return UOp(Ops.INDEX, buf.dtype, (buf, r))


def kernel(cell: tuple[Ops, DType, DType], n: int) -> UOp:
    """out[i] = op(in1[i], in2[i], ...) over one range of n; buffer 0 is the output."""
    op, dt, out = cell
    ins = operand_dtypes(cell)
    r = UOp.range(n, 0)
    loads = [UOp(Ops.LOAD, d, (_index(_glob(i + 1, d), r),)) for i, d in enumerate(ins)]
    value = UOp(op, out, tuple(loads))
    o = _glob(0, out)
    return UOp.sink(UOp(Ops.STORE, dtypes.void, (_index(o, r), value, r)))


def operand_dtypes(cell: tuple[Ops, DType, DType]) -> list[DType]:
    op, dt, _ = cell
    if op is Ops.WHERE:
        return [dtypes.bool, dt, dt]
    n = 1 if op in UNARY or op is Ops.CAST else 3 if op is Ops.MULACC else 2
    return [dt] * n


@pytest.fixture(scope="module")
def c_kernels(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    """Each selected cell's vector kernel (all pairs) and scalar kernel (one element), all in
    one library (one compiler run; the full sweep's takes a minute or two on a loaded machine)."""
    from rulegrad.backends.c import compile_program

    selected = [item.callspec.params["cell"] for item in request.session.items
                if item.originalname == "test_c_matches_table" and hasattr(item, "callspec")]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RULEGRAD_CACHE", str(tmp_path_factory.mktemp("rgcache")))
        pairs = []
        for cell in selected:
            n = len(operands(cell[0], cell[1])[0])
            pairs += [(cell_id(cell) + "_v", kernel(cell, n)),
                      (cell_id(cell) + "_s", kernel(cell, 1))]
        prog = compile_program(pairs)
    ks = prog.kernels
    return {cell_id(c): (ks[2 * i], ks[2 * i + 1]) for i, c in enumerate(selected)}


# ---------------------------------------------------------------------------- the sweep
@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_c_matches_table(cell, c_kernels):
    op, dt, out = cell
    xs = operands(op, dt)
    want = reference(op, out, xs)
    vec, scalar = c_kernels[cell_id(cell)]
    got = np.empty_like(want)
    vec(got, *xs)
    assert_same("C (vectorized)", cell, xs, got, want)
    got = np.empty_like(want)
    for i in range(want.size):
        scalar(got[i:i + 1], *(x[i:i + 1] for x in xs))
    assert_same("C (scalar)", cell, xs, got, want)


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_interpreters_match_table(cell):
    op, dt, out = cell
    xs = operands(op, dt)
    want = reference(op, out, xs)
    got = np.empty_like(want)
    kernel_interp.run_kernel(kernel(cell, want.size), [got, *xs])
    assert_same("kernel interpreter", cell, xs, got, want)
    if dt is dtypes.index:
        return  # no tensor-level index buffers
    srcs = tuple(Tensor(x).uop for x in xs)
    assert_same("oracle", cell, xs, oracle.evaluate_one(UOp(op, out, srcs)), want)


@pytest.mark.parametrize("cell", [c for c in CELLS if not c[1].is_float], ids=cell_id)
def test_constant_folder_matches_table(cell):
    op, dt, out = cell
    xs = operands(op, dt)
    want = reference(op, out, xs)
    folded = 0
    for i in range(want.size):
        args = [x[i].item() for x in xs]
        if op is Ops.CAST:
            got = cast_value(out, dt, args[0])
        else:
            got = fold_alu(op, dt, *args)
        if got is None:
            continue
        folded += 1
        assert got == want[i].item(), f"fold {cell_id(cell)}{tuple(args)} = {got}, " \
                                      f"the table says {want[i].item()}"
    # the folder folds every integer/bool cell but POW and the ternary ops
    if op in (Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.CMPLT, Ops.SHL, Ops.CAST) and \
            not out.is_float:
        assert folded == want.size


# ---------------------------------------------------------------------------- z3
def _z3_value(term, dt: DType):
    term = z3.simplify(term)
    if dt.is_bool:
        assert z3.is_true(term) or z3.is_false(term), term
        return z3.is_true(term)
    if dt.is_int and z3.is_bv_value(term):  # smt.BitWorld's two's complement bits
        u, bits = term.as_long(), term.size()
        return u - (1 << bits) if not dt.is_unsigned and u >= 1 << (bits - 1) else u
    if dt.is_int:
        assert z3.is_int_value(term), term
        return term.as_long()
    if z3.is_true(z3.simplify(z3.fpIsNaN(term))):
        return np.array(np.nan, dt.np)
    bits = z3.simplify(z3.fpToIEEEBV(term))
    assert z3.is_bv_value(bits), term
    return np.array(bits.as_long(), f"u{dt.itemsize}").view(dt.np)


def _z3_const(world: smt.World, dt: DType, x) -> smt.Sym:
    if dt.is_float:
        val = z3.fpBVToFP(z3.BitVecVal(int(np.asarray(x).view(f"u{dt.itemsize}")), dt.itemsize * 8),
                          smt.fp_sort(dt))
    else:
        val = world.const_val(dt, x.item())
    return smt.Sym(Ops.CONST, dt, val, arg=x.item())


# what z3 leaves uninterpreted (a proof through it holds for any function; its values are the
# evaluation checks'): the C library's float functions, and integer POW. Every other cell of
# the table is stated exactly (tests/test_op_domain.py: and drawn)
Z3_UNMODELLED = semantics.LIBM_OPS


def _z3_world() -> smt.World:
    world = smt.World()
    # wrap by `%` (z3.simplify evaluates it on constants), not by the solver-friendly fresh
    # multiple of 2**bits, which only the solver's facts pin down
    world.wrap = smt.wrap
    return world


def _z3_models(cell: tuple[Ops, DType, DType]) -> bool:
    """Whether z3 states the op exactly on this dtype (no uninterpreted function); what it
    does not is left to the evaluation checks, and only ops of Z3_UNMODELLED may be."""
    op, dt, out = cell
    w = _z3_world()
    syms = tuple(_z3_const(w, d, x[0]) for d, x in zip(operand_dtypes(cell), operands(op, dt)))
    w.alu(op, out, syms)  # a cell of the table z3 cannot state raises Untranslatable: a failure
    assert not w.used_uf or op in Z3_UNMODELLED, cell
    return not w.used_uf


# index is unbounded in z3 today (generator/smt.py's model of index is not this table's)
Z3_CELLS = [c for c in CELLS if dtypes.index not in c[1:] and _z3_models(c)]


@pytest.mark.parametrize("cell", Z3_CELLS, ids=cell_id)
def test_z3_matches_table(cell):
    op, dt, out = cell
    xs = operands(op, dt)
    want = reference(op, out, xs)
    got = np.empty_like(want)
    # each operand value's term built once: a binary cell's pairs repeat each value once per
    # partner, and building the terms was half the test's time. A value of its dtype is in range,
    # so its term leaves nothing in the world it was built in (const_val's `undefined`)
    terms: dict[tuple[str, bytes], smt.Sym] = {}
    for i in range(want.size):
        w = _z3_world()
        syms = tuple(_z3_term(terms, w, d, x[i]) for d, x in zip(operand_dtypes(cell), xs))
        got[i] = _z3_value(w.alu(op, out, syms), out)
    assert_same("z3", cell, xs, got, want)


def _z3_term(terms: dict, world: smt.World, dt: DType, x) -> smt.Sym:
    key = (dt.name, np.asarray(x).tobytes())
    if key not in terms:
        terms[key] = _z3_const(world, dt, x)
        assert not world.undefined, (dt, x)  # (so the term serves every world of the cell)
    return terms[key]


def _sized_cell(cell: tuple[Ops, DType, DType]) -> bool:
    return any(d.is_int for d in (*operand_dtypes(cell), cell[2]))


@pytest.mark.parametrize("cell", [c for c in Z3_CELLS if _sized_cell(c)], ids=cell_id)
def test_z3_bits_match_table(cell):
    """smt.BitWorld states sized integers as bit-vectors (for rules of bit operations): the
    same table, cell by cell, as the Int encoding above."""
    op, dt, out = cell
    xs = operands(op, dt)
    want = reference(op, out, xs)
    got = np.empty_like(want)
    for i in range(want.size):
        w = smt.BitWorld()
        syms = tuple(_z3_const(w, d, x[i]) for d, x in zip(operand_dtypes(cell), xs))
        got[i] = _z3_value(w.alu(op, out, syms), out)
    assert_same("z3 bits", cell, xs, got, want)


# ---------------------------------------------------------------------------- numpy itself
_NUMPY: dict[Ops, Callable] = {
    Ops.ADD: np.add, Ops.MUL: np.multiply, Ops.FDIV: np.true_divide, Ops.MAX: np.maximum,
    Ops.MIN: np.minimum, Ops.CMPLT: np.less, Ops.CMPNE: np.not_equal, Ops.CMPEQ: np.equal,
    Ops.AND: np.bitwise_and, Ops.OR: np.bitwise_or, Ops.XOR: np.bitwise_xor,
    Ops.SHL: np.left_shift, Ops.SHR: np.right_shift, Ops.SQRT: np.sqrt, Ops.TRUNC: np.trunc,
    Ops.RECIPROCAL: np.reciprocal, Ops.EXP: np.exp, Ops.LOG: np.log, Ops.EXP2: np.exp2,
    Ops.LOG2: np.log2, Ops.SIN: np.sin, Ops.COS: np.cos, Ops.SUB: np.subtract,
    Ops.NEG: np.negative,
}


def _numpy_defines(cell: tuple[Ops, DType, DType]) -> bool:
    """Whether numpy has an op of the table's meaning for this cell (bool SUB and NEG, and
    WHERE, MULACC, integer IDIV and the like, it has not)."""
    op, dt, _ = cell
    if op in _NUMPY:
        return not (dt.is_bool and op in (Ops.SUB, Ops.NEG))
    return (op in (Ops.MOD, Ops.CAST) or (op is Ops.IDIV and dt.is_float)
            or (op is Ops.POW and not dt.is_bool))


@pytest.mark.parametrize("cell", [c for c in CELLS if c[1] is not dtypes.index
                                  and _numpy_defines(c)], ids=cell_id)
def test_table_is_numpy_where_numpy_defines_it(cell):
    op, dt, out = cell
    xs = operands(op, dt)
    want = reference(op, out, xs)
    keep = np.ones(want.shape, bool)
    with np.errstate(all="ignore"):
        if op in _NUMPY and not (dt.is_bool and op in (Ops.SUB, Ops.NEG)):
            ref = np.asarray(_NUMPY[op](*xs)).astype(out.np)
            if op in (Ops.MAX, Ops.MIN) and dt.is_float:
                keep = xs[0] != xs[1]  # numpy returns its second operand on +-0.0 ties
        elif op is Ops.MOD:
            ref = np.fmod(*xs)
        elif op is Ops.IDIV and dt.is_float:  # float16 through float32
            ref = np.trunc(np.true_divide(*(x.astype(np.float32) if dt is dtypes.float16
                                            else x for x in xs))).astype(out.np)
        elif op is Ops.POW and not dt.is_bool:
            keep = xs[1] >= 0 if not dt.is_float else keep  # numpy raises for int x ** -n
            ref = np.power(xs[0], np.where(keep, xs[1], 0).astype(dt.np))
        elif op is Ops.CAST and not (dt.is_float and out.is_int):
            ref = xs[0].astype(out.np)
        elif op is Ops.CAST:
            t = np.trunc(xs[0].astype(np.float64))
            # numpy defines the values in range (max + 1 and min are powers of two: exact)
            keep = np.isfinite(t) & (t >= float(out.min)) & (t < float(out.max) + 1)
            ref = np.where(keep, xs[0], 0).astype(out.np)
        else:
            raise AssertionError(f"_numpy_defines and this test disagree on {cell_id(cell)}")
    assert_same("numpy", cell, [x[keep] for x in xs], want[keep], ref[keep])


def test_sweep_size():
    """The sweep's size, printed for the record (`pytest -s`), and a floor it must not fall
    below (a table that silently lost ops would shrink it)."""
    total = sum(len(operands(op, dt)[0]) for op, dt, _ in CELLS)
    print(f"\nsemantics sweep: {len(CELLS)} (op, dtype) cells, {total} value cells, "
          f"x 5 executors")
    assert len(CELLS) > 300 and total > 50_000


# ---------------------------------------------------------------------------- Tensor // % abs
@pytest.mark.parametrize("backend", ["oracle", "interp", "c"])
@pytest.mark.parametrize("dt", [dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8,
                                dtypes.int64, dtypes.uint32], ids=lambda d: d.name)
def test_tensor_floor_div_mod_abs_are_numpys_bits(dt, backend, monkeypatch, tmp_path):
    """The Tensor API's `//`, `%` and abs, built on the IR's ops, give numpy's bits on every
    pair of special values and on random ones (`1.0 // 0.1` is 9.0, `0.0 % -inf` is -0.0,
    `abs(-0.0)` is +0.0)."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    v = specials(dt)
    rng = np.random.default_rng(0)
    if dt.is_float:
        extra = [rng.standard_normal(500) * 10.0 ** rng.integers(-3, 4, 500) for _ in range(2)]
        extra[0][:2], extra[1][:2] = [1.0, 0.0], [0.1, -np.inf]
    else:
        extra = [rng.integers(dt.min, dt.max, 500, endpoint=True) for _ in range(2)]
    a = np.concatenate([np.repeat(v, len(v)), extra[0].astype(dt.np)])
    b = np.concatenate([np.tile(v, len(v)), extra[1].astype(dt.np)])
    with np.errstate(all="ignore"):
        wants = {"//": a // b, "%": a % b, "abs": np.abs(a)}
    gots = {"//": (Tensor(a) // Tensor(b)).numpy(), "%": (Tensor(a) % Tensor(b)).numpy(),
            "abs": Tensor(a).abs().numpy()}
    for name, want in wants.items():
        assert_same(f"Tensor {name} ({backend})", (Ops.IDIV, dt, dt), [a, b], gots[name], want)
