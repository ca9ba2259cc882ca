"""The C backend on hand-built kernel ASTs (backends/KERNEL_AST.md), checked against numpy.

Each test builds a kernel the way the scheduler would (RANGE, INDEX, LOAD, STORE, REDUCE),
builds it into a shared library and compares the buffers it writes with numpy computed directly.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from rulegrad.runtime.dtype import DTYPES, DType, dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

f32, idx = dtypes.float32, dtypes.index


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    # one cache for the module, set before the module-scoped programs below are built: tests
    # share built libraries, and never touch the user's cache
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RULEGRAD_CACHE", str(tmp_path_factory.mktemp("rgcache")))
        yield


def compile_program(*a, **k):
    from rulegrad.backends.c import compile_program as cp

    return cp(*a, **k)


# ---------------------------------------------------------------------------- AST builders
def glob(i: int, dt: DType) -> UOp:
    return UOp(Ops.DEFINE_GLOBAL, dt, (), i)


def load(buf: UOp, off: UOp, valid: UOp | None = None) -> UOp:
    src = (buf, off) if valid is None else (buf, off, valid)
    return UOp(Ops.LOAD, buf.dtype, (UOp(Ops.INDEX, buf.dtype, src),))


def store(buf: UOp, off: UOp, value: UOp, *ranges: UOp) -> UOp:
    return UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, buf.dtype, (buf, off)), value, *ranges))


def reduce(value: UOp, op: Ops, *ranges: UOp) -> UOp:
    return UOp(Ops.REDUCE, value.dtype, (value, *ranges), op)


def alu(op: Ops, *src: UOp, dtype: DType | None = None) -> UOp:
    if dtype is None:
        dtype = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else src[-1].dtype
    return UOp(op, dtype, tuple(src))


def run1(ast: UOp, out: np.ndarray, *inputs: np.ndarray, name: str = "k") -> np.ndarray:
    prog = compile_program([(name, ast)])
    prog.kernels[0](out, *[np.ascontiguousarray(x).reshape(-1) for x in inputs])
    return out


# ---------------------------------------------------------------------------- elementwise
@pytest.mark.parametrize("n", [1000, 1 << 21])  # the large one crosses the OpenMP threshold
def test_fused_elementwise_1d(n):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    r = UOp.range(n, 0)
    x = load(glob(1, f32), r) * load(glob(2, f32), r) + load(glob(3, f32), r)
    ast = UOp.sink(store(glob(0, f32), r, x.maximum(0.0), r))
    out = run1(ast, np.empty(n, np.float32), a, b, c)
    np.testing.assert_array_equal(out, np.maximum(a * b + c, 0))


def test_elementwise_2d_transposed_read():
    rng = np.random.default_rng(1)
    a, b = rng.random((6, 5)).astype(np.float32), rng.random((5, 6)).astype(np.float32)
    r0, r1 = UOp.range(5, 0), UOp.range(6, 1)
    v = load(glob(1, f32), r1 * 5 + r0) - load(glob(2, f32), r0 * 6 + r1)
    ast = UOp.sink(store(glob(0, f32), r0 * 6 + r1, v, r0, r1))
    out = run1(ast, np.empty(30, np.float32), a, b)
    np.testing.assert_array_equal(out.reshape(5, 6), a.T - b)


def test_two_stores_share_loops():
    a = np.arange(10, dtype=np.float32)
    r = UOp.range(10, 0)
    x = load(glob(2, f32), r)
    ast = UOp.sink(store(glob(0, f32), r, x * 2.0, r), store(glob(1, f32), r, x + 1.0, r))
    prog = compile_program([("two", ast)])
    o0, o1 = np.empty(10, np.float32), np.empty(10, np.float32)
    prog.kernels[0](o0, o1, a)
    np.testing.assert_array_equal(o0, a * 2)
    np.testing.assert_array_equal(o1, a + 1)


# ---------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("op,ref", [(Ops.ADD, np.sum), (Ops.MAX, np.max), (Ops.MIN, np.min),
                                    (Ops.MUL, np.prod)])
def test_row_reduce(op, ref):
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 1.5, (64, 33)).astype(np.float32)
    a[3, 7] = np.nan  # numpy's max/min/sum propagate NaN
    r0, k = UOp.range(64, 0), UOp.range(33, 1, "reduce")
    ast = UOp.sink(store(glob(0, f32), r0, reduce(load(glob(1, f32), r0 * 33 + k), op, k), r0))
    out = run1(ast, np.empty(64, np.float32), a)
    np.testing.assert_allclose(out, ref(a, axis=1), rtol=1e-5)


@pytest.mark.parametrize("op", [Ops.ADD, Ops.MAX, Ops.MIN])
def test_full_reduce_parallel(op):
    n = 1 << 21  # big enough to split across threads (omp parallel for reduction)
    a = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    k = UOp.range(n, 0, "reduce")
    ast = UOp.sink(store(glob(0, f32), UOp.const(idx, 0), reduce(load(glob(1, f32), k), op, k)))
    ref = {Ops.ADD: np.sum, Ops.MAX: np.max, Ops.MIN: np.min}[op]
    out = run1(ast, np.empty(1, np.float32), a)
    np.testing.assert_allclose(out[0], ref(a.astype(np.float64)), rtol=1e-4, atol=1e-2)
    a[n // 3] = np.nan  # a NaN in one thread's share still reaches the result
    out = run1(ast, np.empty(1, np.float32), a)
    if op is not Ops.ADD:
        assert np.isnan(out[0])


def test_reduce_hoisted_out_of_inner_loop():
    # softmax-like: out[i, j] = exp(x[i, j] - max_k x[i, k]); the max is per row, not per j
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 40)).astype(np.float32)
    i, j, k = UOp.range(16, 0), UOp.range(40, 1), UOp.range(40, 2, "reduce")
    m = reduce(load(glob(1, f32), i * 40 + k), Ops.MAX, k)
    v = UOp(Ops.EXP, f32, (load(glob(1, f32), i * 40 + j) - m,))
    ast = UOp.sink(store(glob(0, f32), i * 40 + j, v, i, j))
    prog = compile_program([("sm", ast)])
    src = prog.source
    assert src.index("acc") < src.index("for (int64_t r1")  # max computed before the j loop
    out = np.empty(640, np.float32)
    prog.kernels[0](out, x.reshape(-1))
    np.testing.assert_allclose(out.reshape(16, 40), np.exp(x - x.max(1, keepdims=True)),
                               rtol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3, 5), (64, 48, 80), (130, 70, 129)])
def test_matmul(shape):
    n, kk, m = shape
    rng = np.random.default_rng(5)
    a, b = rng.random((n, kk)).astype(np.float32), rng.random((kk, m)).astype(np.float32)
    i, j, k = UOp.range(n, 0), UOp.range(m, 1), UOp.range(kk, 2, "reduce")
    prod = load(glob(1, f32), i * kk + k) * load(glob(2, f32), k * m + j)
    ast = UOp.sink(store(glob(0, f32), i * m + j, reduce(prod, Ops.ADD, k), i, j))
    out = run1(ast, np.empty(n * m, np.float32), a, b)
    np.testing.assert_allclose(out.reshape(n, m), a @ b, rtol=1e-5)


def test_matmul_with_epilogue_and_transposed_b():
    # relu(a @ b.T + 1): b read along k is contiguous, so no interchange; epilogue after REDUCE
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((9, 7)).astype(np.float32), rng.standard_normal((11, 7))
    b = b.astype(np.float32)
    i, j, k = UOp.range(9, 0), UOp.range(11, 1), UOp.range(7, 2, "reduce")
    prod = load(glob(1, f32), i * 7 + k) * load(glob(2, f32), j * 7 + k)
    v = (reduce(prod, Ops.ADD, k) + 1.0).maximum(0.0)
    ast = UOp.sink(store(glob(0, f32), i * 11 + j, v, i, j))
    out = run1(ast, np.empty(99, np.float32), a, b)
    np.testing.assert_allclose(out.reshape(9, 11), np.maximum(a @ b.T + 1, 0), rtol=1e-5,
                               atol=1e-6)


# ---------------------------------------------------------------------------- padding
def test_padded_load_with_valid_mask():
    # out[i] = a[i-2] for 2 <= i < 2+n, else 0: the pad of a 1-D tensor by (2, 3)
    n = 10
    a = np.arange(1, n + 1, dtype=np.float32)
    r = UOp.range(n + 5, 0)
    lo, hi = alu(Ops.CMPLT, UOp.const(idx, 1), r), alu(Ops.CMPLT, r, UOp.const(idx, n + 2))
    valid = alu(Ops.AND, lo, hi)
    ast = UOp.sink(store(glob(0, f32), r, load(glob(1, f32), r - 2, valid), r))
    out = run1(ast, np.full(n + 5, -1, np.float32), a)
    np.testing.assert_array_equal(out, np.pad(a, (2, 3)))


# ---------------------------------------------------------------------------- dtypes
_NP_BIN = {Ops.ADD: np.add, Ops.SUB: np.subtract, Ops.MUL: np.multiply, Ops.MAX: np.maximum,
           Ops.MIN: np.minimum, Ops.CMPLT: np.less, Ops.CMPNE: np.not_equal,
           Ops.CMPEQ: np.equal}


def _values(dt: np.dtype, n: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edge = np.array([info.min, info.max, 0, 1, info.max // 2], dtype=dt)
        return np.concatenate([edge, rng.integers(info.min, info.max, n - 5, dtype=dt,
                                                  endpoint=True)])
    vals = rng.standard_normal(n).astype(dt) * 10
    vals[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return vals


def _binary_kernel(op: Ops, dt: DType, n: int) -> UOp:
    r = UOp.range(n, 0)
    out_dt = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else dt
    v = alu(op, load(glob(1, dt), r), load(glob(2, dt), r), dtype=out_dt)
    return UOp.sink(store(glob(0, out_dt), r, v, r))


def _binary_ops(dt: DType) -> list[Ops]:
    return [o for o in _NP_BIN if not (dt.is_bool and o is Ops.SUB)]


@pytest.fixture(scope="module")
def binary_program():
    # per dtype one kernel with a STORE per op (outputs 0..k-1, inputs k, k+1), all in one
    # library: one compiler run, and the several-outputs-per-kernel path exercised
    r = UOp.range(64, 0)
    kernels = []
    for dt in DTYPES:
        ops = _binary_ops(dt)
        a, b = load(glob(len(ops), dt), r), load(glob(len(ops) + 1, dt), r)
        stores = []
        for i, op in enumerate(ops):
            out_dt = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else dt
            stores.append(store(glob(i, out_dt), r, alu(op, a, b, dtype=out_dt), r))
        kernels.append((dt.name, UOp.sink(*stores)))
    return {k.name: k for k in compile_program(kernels).kernels}


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_binary_ops_every_dtype(dt, binary_program):
    n = 64
    a, b = _values(dt.np, n), np.roll(_values(dt.np, n), 3)
    ops = _binary_ops(dt)
    with np.errstate(all="ignore"):
        refs = [_NP_BIN[op](a, b) for op in ops]
    outs = [np.empty(n, ref.dtype) for ref in refs]
    binary_program[dt.name](*outs, a, b)
    for op, out, ref in zip(ops, outs, refs):
        np.testing.assert_array_equal(out, ref, err_msg=f"{op.name} {dt.name}")


def _trunc_div(a: int, b: int, bits: int, signed: bool) -> tuple[int, int]:
    """C-truncating division as the IR defines it (x/0 = 0, MIN/-1 wraps), as Python ints."""
    if b == 0:
        return 0, 0
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    r = a - q * b
    mod = 1 << bits
    q %= mod
    if signed and q >= mod // 2:
        q -= mod
    return q, r


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.is_int], ids=lambda d: d.name)
def test_idiv_mod_truncate(dt):
    n = 64
    a, b = _values(dt.np, n), np.roll(_values(dt.np, n), 3)
    b[5:9] = [0, 1, 2, 3] if dt.is_unsigned else [0, -1, 2, -3]
    a[5:9] = a[0]  # MIN / 0, MIN / -1 ...
    prog = compile_program([(op.name, _binary_kernel(op, dt, n)) for op in (Ops.IDIV, Ops.MOD)])
    q, m = np.empty(n, dt.np), np.empty(n, dt.np)
    prog.kernels[0](q, a, b)
    prog.kernels[1](m, a, b)
    signed = dt.kind == "i"
    ref = [_trunc_div(int(x), int(y), dt.itemsize * 8, signed) for x, y in zip(a, b)]
    assert q.tolist() == [x for x, _ in ref]
    assert m.tolist() == [y for _, y in ref]


def test_signed_overflow_wraps():
    a = np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min, 7], np.int32)
    r = UOp.range(3, 0)
    x = load(glob(1, dtypes.int32), r)
    ast = UOp.sink(store(glob(0, dtypes.int32), r, (x + 1) * 3, r))
    out = run1(ast, np.empty(3, np.int32), a)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, (a + np.int32(1)) * np.int32(3))


@pytest.fixture(scope="module")
def cast_program():
    # per source dtype one kernel casting to every dtype (output i is DTYPES[i])
    r = UOp.range(101, 0)
    kernels = []
    for src in DTYPES:
        x = load(glob(len(DTYPES), src), r)
        stores = [store(glob(i, dt), r, UOp(Ops.CAST, dt, (x,)), r) for i, dt in enumerate(DTYPES)]
        kernels.append((src.name, UOp.sink(*stores)))
    return {k.name: k for k in compile_program(kernels).kernels}


@pytest.mark.parametrize("src_dt", DTYPES, ids=lambda d: d.name)
def test_casts_in_range(src_dt, cast_program):
    # values every dtype can hold: 0..100 (and True/False), so casts are exact in numpy
    n = 101
    a = (np.arange(n) % 2).astype(bool) if src_dt.is_bool else np.arange(n).astype(src_dt.np)
    if src_dt.is_float:
        a = a + np.asarray(0.75, src_dt.np)  # fractions: float -> int truncates
    outs = [np.empty(n, dt.np) for dt in DTYPES]
    cast_program[src_dt.name](*outs, a)
    for dt, out in zip(DTYPES, outs):
        np.testing.assert_array_equal(out, a.astype(dt.np), err_msg=f"{src_dt.name}->{dt.name}")


_UNARY = [(Ops.EXP, np.exp), (Ops.LOG, np.log), (Ops.SQRT, np.sqrt), (Ops.SIN, np.sin),
          (Ops.COS, np.cos), (Ops.RECIPROCAL, np.reciprocal), (Ops.EXP2, np.exp2),
          (Ops.LOG2, np.log2), (Ops.TRUNC, np.trunc), (Ops.NEG, np.negative)]
_FLOATS = [dtypes.float16, dtypes.float32, dtypes.float64]


@pytest.fixture(scope="module")
def unary_program():
    r = UOp.range(50, 0)
    kernels = [(f"{dt.name}_{op.name}",
                UOp.sink(store(glob(0, dt), r, UOp(op, dt, (load(glob(1, dt), r),)), r)))
               for dt in _FLOATS for op, _ in _UNARY]
    return {k.name: k for k in compile_program(kernels).kernels}


@pytest.mark.parametrize("op,ref", _UNARY, ids=lambda x: getattr(x, "name", ""))
@pytest.mark.parametrize("dt", _FLOATS, ids=lambda d: d.name)
def test_unary_float(op, ref, dt, unary_program):
    n = 50
    a = np.linspace(-3, 5, n).astype(dt.np)
    a[:3] = [np.nan, np.inf, 0.0]
    out = np.empty(n, dt.np)
    unary_program[f"{dt.name}_{op.name}"](out, a)
    with np.errstate(all="ignore"):
        expect = ref(a)
    tol = {"float16": 1e-3, "float32": 2e-6, "float64": 1e-14}[dt.name]
    np.testing.assert_allclose(out, expect, rtol=tol, atol=tol)


def test_float16_rounds_each_op_like_numpy():
    a = np.random.default_rng(8).standard_normal(256).astype(np.float16)
    r = UOp.range(256, 0)
    h = dtypes.float16
    x = load(glob(1, h), r)
    v = (x * x + x) / (x.maximum(UOp.const(h, 0.5)))
    ast = UOp.sink(store(glob(0, h), r, v, r))
    out = run1(ast, np.empty(256, np.float16), a)
    np.testing.assert_array_equal(out, (a * a + a) / np.maximum(a, np.float16(0.5)))


# ---------------------------------------------------------------------------- constants
_CONSTANTS = [
    (dtypes.float32, float("nan")), (dtypes.float32, float("inf")), (dtypes.float32, -np.inf),
    (dtypes.float32, -0.0), (dtypes.float32, 0.1), (dtypes.float64, 0.1),
    (dtypes.float64, 5e-324), (dtypes.float64, -1.7976931348623157e308),
    (dtypes.float16, 65504.0), (dtypes.float16, float("nan")), (dtypes.float16, 0.1),
    (dtypes.int64, -(2**63)), (dtypes.int64, 2**63 - 1), (dtypes.uint64, 2**64 - 1),
    (dtypes.int32, -(2**31)), (dtypes.int8, -128), (dtypes.uint8, 255), (dtypes.bool, True),
]


@pytest.fixture(scope="module")
def const_program():
    r = UOp.range(2, 0)
    kernels = [(f"c{i}", UOp.sink(store(glob(0, dt), r, UOp.const(dt, value), r)))
               for i, (dt, value) in enumerate(_CONSTANTS)]
    return compile_program(kernels).kernels


@pytest.mark.parametrize("i", range(len(_CONSTANTS)),
                         ids=[f"{d.name}:{v!r}" for d, v in _CONSTANTS])
def test_constants_render_exactly(i, const_program):
    dt, value = _CONSTANTS[i]
    out = np.zeros(2, dt.np)
    const_program[i](out)
    expect = np.full(2, value, dtype=dt.np)
    assert out.tobytes() == expect.tobytes(), (out, expect)


# ---------------------------------------------------------------------------- depth, names
def test_deep_chain_100k():
    # 100,000 dependent ops in one loop body: temporaries, split into functions
    n, depth = 256, 100_000
    a = np.random.default_rng(9).random(n).astype(np.float32)
    r = UOp.range(n, 0)
    v = load(glob(1, f32), r)
    ref = a.copy()
    for i in range(depth):
        if i % 2 == 0:
            v = v + 1.0
            ref = ref + np.float32(1.0)
        else:
            v = v * 0.5
            ref = ref * np.float32(0.5)
    ast = UOp.sink(store(glob(0, f32), r, v, r))
    out = run1(ast, np.empty(n, np.float32), a)
    np.testing.assert_array_equal(out, ref)


def test_kernel_names_never_reach_c_verbatim():
    r = UOp.range(4, 0)
    ast = UOp.sink(store(glob(0, f32), r, load(glob(1, f32), r) + 1.0, r))
    evil = "x(); } int main(){ /* */ #include <stdio.h>"
    prog = compile_program([(evil, ast)])
    assert evil not in prog.source and "main" not in prog.source.replace(
        prog.kernels[0].cname, "")
    out = np.empty(4, np.float32)
    prog.kernels[0](out, np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(out, np.arange(4) + 1)


# ---------------------------------------------------------------------------- errors
def test_compile_error_carries_message_and_source(monkeypatch):
    from rulegrad.backends.c import CompileError

    # (an allowed flag the compiler refuses: an unknown one is refused before it runs)
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -march=no-such-cpu-for-rulegrad")
    r = UOp.range(3, 0)
    ast = UOp.sink(store(glob(0, f32), r, load(glob(1, f32), r) * 3.0, r))
    with pytest.raises(CompileError) as info:
        compile_program([("bad", ast)])
    err = info.value
    assert "no-such-cpu-for-rulegrad" in err.message
    assert os.path.exists(err.source_path)
    assert "k0_bad" in open(err.source_path).read()


def test_compile_error_from_bad_source(monkeypatch):
    from rulegrad.backends.c import CompileError, build
    from rulegrad.backends.c.render import RenderedKernel

    bad = RenderedKernel("k_bad", "void k_bad(void) { this is not C; }\n", 0, ())
    with pytest.raises(CompileError) as info:
        build.build_library([bad])
    assert "error" in info.value.message and os.path.exists(info.value.source_path)


def test_realizing_again_costs_no_compile():
    from rulegrad.backends.c import build

    r = UOp.range(5, 0)
    ast = UOp.sink(store(glob(0, f32), r, load(glob(1, f32), r) - 2.0, r))
    p1 = compile_program([("again", ast)])
    before = dict(build.stats)
    p2 = compile_program([("again", ast)])
    assert p2 is p1 and build.stats == before


def test_batched_matmul_tiled():
    # out[b, i, j] = sum_k a[b, i, k] * w[k, j]: the 4x16 register tile inside a batch loop
    nb, n, kk, m = 3, 8, 20, 32
    rng = np.random.default_rng(10)
    a, w = rng.random((nb, n, kk)).astype(np.float32), rng.random((kk, m)).astype(np.float32)
    b, i, j, k = UOp.range(nb, 0), UOp.range(n, 1), UOp.range(m, 2), UOp.range(kk, 3, "reduce")
    prod = load(glob(1, f32), b * (n * kk) + i * kk + k) * load(glob(2, f32), k * m + j)
    ast = UOp.sink(store(glob(0, f32), b * (n * m) + i * m + j, reduce(prod, Ops.ADD, k), b, i, j))
    prog = compile_program([("bmm", ast)])
    assert "GCC unroll 16" in prog.source  # the tiled form was chosen
    out = np.empty(nb * n * m, np.float32)
    prog.kernels[0](out, a.reshape(-1), w.reshape(-1))
    np.testing.assert_allclose(out.reshape(nb, n, m), a @ w, rtol=1e-5)


def test_two_reduces_interchanged():
    # conv-like: out[c, x] = sum_k in[k, x] * w[c, k] + sum_k in[k, x + 1] * w[c, k + 4]
    nc, nx, nk = 5, 12, 4
    rng = np.random.default_rng(11)
    inp, w = rng.random((nk, nx + 1)).astype(np.float32), rng.random((nc, 2 * nk))
    w = w.astype(np.float32)
    c, x = UOp.range(nc, 0), UOp.range(nx, 1)
    k1, k2 = UOp.range(nk, 2, "reduce"), UOp.range(nk, 3, "reduce")
    t1 = load(glob(1, f32), k1 * (nx + 1) + x) * load(glob(2, f32), c * (2 * nk) + k1)
    t2 = load(glob(1, f32), k2 * (nx + 1) + x + 1) * load(glob(2, f32), c * (2 * nk) + k2 + nk)
    v = reduce(t1, Ops.ADD, k1) + reduce(t2, Ops.ADD, k2)
    ast = UOp.sink(store(glob(0, f32), c * nx + x, v, c, x))
    out = run1(ast, np.empty(nc * nx, np.float32), inp, w)
    ref = w[:, :nk] @ inp[:, :nx] + w[:, nk:] @ inp[:, 1:]
    np.testing.assert_allclose(out.reshape(nc, nx), ref, rtol=1e-5)


# ---------------------------------------------------------------------------- through realize
def test_chain_realized_through_c(monkeypatch):
    # the scheduler's kernel for a deep elementwise chain of UOps, built and run by the C
    # backend (tests/test_reliability.py realizes a 125,000-op chain through the Tensor API)
    depth = 3000
    from rulegrad.runtime.buffer import Buffer
    from rulegrad.runtime.realize import realize

    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    a = np.random.default_rng(12).random(64).astype(np.float32)
    x = UOp(Ops.BUFFER, f32, (), Buffer(64, f32, a))
    one, half = x.const_like(1.0), x.const_like(0.5)
    ref = a.copy()
    for i in range(depth):
        if i % 2 == 0:
            x, ref = x + one, ref + np.float32(1.0)
        else:
            x, ref = x * half, ref * np.float32(0.5)
    (buf,) = realize([x])
    np.testing.assert_array_equal(buf.data, ref)


def test_tensor_program_through_c(monkeypatch):
    from rulegrad import Tensor

    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    rng = np.random.default_rng(13)
    a, b = rng.standard_normal((16, 24)).astype(np.float32), rng.standard_normal((24, 8))
    b = b.astype(np.float32)
    out = ((Tensor(a) @ Tensor(b)).relu().softmax() * 2).numpy()
    e = np.exp(np.maximum(a @ b, 0) - np.maximum(a @ b, 0).max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True) * 2, rtol=1e-5, atol=1e-6)


def test_fuzzer_programs_through_c_match_the_oracle():
    # a bounded run of the scheduler's differential fuzzer (tools/fuzz.py) on the C path:
    # random tensor programs, scheduled, compiled and run, against the numpy oracle
    from rulegrad.tools.fuzz import generate, run

    n = int(os.environ.get("RULEGRAD_C_FUZZ", "12"))
    for seed in range(300_000, 300_000 + n):
        prog = generate(seed)
        want, got = run(prog, "oracle"), run(prog, "c")
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.shape == w.shape, (seed, k)
            assert np.allclose(g, w, rtol=1e-4, atol=1e-4, equal_nan=True), (seed, k,
                                                                             prog.source())
