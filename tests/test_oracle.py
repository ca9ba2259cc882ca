"""The numpy oracle on hand-built graphs: long chains, each movement op, each ALU op, effects."""

import sys

import numpy as np
import pytest

from rulegrad import Ops, UOp, dtypes
from rulegrad.backends.oracle import OracleError, evaluate, evaluate_one
from rulegrad.runtime.buffer import Buffer

X = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 3 - 20


def buf(arr: np.ndarray) -> UOp:
    dt = dtypes.from_np(arr.dtype)
    return UOp(Ops.BUFFER, dt, (), Buffer(arr.size, dt, arr.copy())).reshape(arr.shape)


def test_long_elementwise_chain_is_iterative():
    assert sys.getrecursionlimit() <= 10_000
    node = buf(np.array([1.0, 2.0], dtype=np.float64))
    half, scale = node.const_like(0.5), node.const_like(1.0001)
    ref = np.array([1.0, 2.0])
    for i in range(100_000):
        if i % 2:
            node, ref = UOp(Ops.MUL, dtypes.float64, (node, scale)), ref * 1.0001
        else:
            node, ref = UOp(Ops.ADD, dtypes.float64, (node, half)), ref + 0.5
    np.testing.assert_allclose(evaluate_one(node), ref, rtol=1e-12)


@pytest.mark.parametrize("build,ref", [
    (lambda u: u.reshape((4, 6)), lambda a: a.reshape(4, 6)),
    (lambda u: u.reshape((24,)).reshape((6, 1, 4)), lambda a: a.reshape(6, 1, 4)),
    (lambda u: u.permute((2, 0, 1)), lambda a: a.transpose(2, 0, 1)),
    (lambda u: u.reshape((2, 1, 3, 4)).expand((2, 5, 3, 4)),
     lambda a: np.broadcast_to(a.reshape(2, 1, 3, 4), (2, 5, 3, 4))),
    (lambda u: u.pad(((1, 0), (0, 2), (3, 1))), lambda a: np.pad(a, ((1, 0), (0, 2), (3, 1)))),
    (lambda u: u.shrink(((1, 2), (0, 2), (1, 4))), lambda a: a[1:2, 0:2, 1:4]),
    (lambda u: u.shrink(((0, 0), (0, 3), (0, 4))), lambda a: a[0:0]),
    (lambda u: u.flip((True, False, True)), lambda a: a[::-1, :, ::-1]),
    (lambda u: u.permute((1, 0, 2)).flip((False, True, False)).pad(((0, 1), (0, 0), (1, 1)))
     .shrink(((1, 4), (0, 2), (0, 3))),
     lambda a: np.pad(a.transpose(1, 0, 2)[:, ::-1], ((0, 1), (0, 0), (1, 1)))[1:4, 0:2, 0:3]),
])
def test_movement_ops(build, ref):
    got = evaluate_one(build(buf(X)))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref(X))


def test_const_and_expand():
    node = UOp.const(dtypes.float16, 1.5).reshape((1, 1)).expand((2, 3))
    got = evaluate_one(node)
    assert got.dtype == np.float16 and got.shape == (2, 3) and (got == 1.5).all()


def test_c_division_semantics():
    a = np.array([-7, 7, -7, 7, 5, -128], dtype=np.int8)
    b = np.array([2, -2, -2, 2, 0, -1], dtype=np.int8)
    np.testing.assert_array_equal(evaluate_one(buf(a).alu(Ops.IDIV, buf(b))),
                                  np.array([-3, -3, 3, 3, 0, -128], dtype=np.int8))
    np.testing.assert_array_equal(evaluate_one(buf(a).alu(Ops.MOD, buf(b))),
                                  np.array([-1, 1, -1, 1, 0, 0], dtype=np.int8))
    f = np.array([-7.5, 7.5], dtype=np.float32)
    np.testing.assert_array_equal(evaluate_one(buf(f).alu(Ops.IDIV, 2.0)), np.trunc(f / 2))
    np.testing.assert_array_equal(evaluate_one(buf(f).alu(Ops.MOD, 2.0)), np.fmod(f, 2))


def test_alu_ops_against_numpy():
    a = np.array([3, -2, 0, 7], dtype=np.int32)
    b = np.array([1, 5, -4, 2], dtype=np.int32)
    ua, ub = buf(a), buf(b)
    cases = {
        Ops.ADD: a + b, Ops.SUB: a - b, Ops.MUL: a * b, Ops.MAX: np.maximum(a, b),
        Ops.MIN: np.minimum(a, b), Ops.CMPLT: a < b, Ops.CMPNE: a != b, Ops.CMPEQ: a == b,
        Ops.AND: a & b, Ops.OR: a | b, Ops.XOR: a ^ b, Ops.SHL: a << 2, Ops.SHR: a >> 1,
    }
    for op, ref in cases.items():
        other = ub if op not in (Ops.SHL, Ops.SHR) else ua.const_like(2 if op is Ops.SHL else 1)
        got = evaluate_one(ua.alu(op, other))
        assert got.dtype == ref.dtype, op
        np.testing.assert_array_equal(got, ref, err_msg=str(op))
    np.testing.assert_array_equal(evaluate_one(ua.alu(Ops.NEG)), -a)
    np.testing.assert_array_equal(evaluate_one(ua.lt(0).where(ua, ub)), np.where(a < 0, a, b))
    np.testing.assert_array_equal(evaluate_one(UOp(Ops.MULACC, dtypes.int32, (ua, ub, ua))),
                                  a * b + a)
    big = np.array([2**31 - 1], dtype=np.int32)
    assert evaluate_one(buf(big) + 1)[0] == -(2**31)  # wraps


def test_float_ops_and_casts():
    x = np.array([0.25, 1.0, 4.0, 9.0], dtype=np.float32)
    u = buf(x)
    for op, fn in [(Ops.EXP, np.exp), (Ops.LOG, np.log), (Ops.SQRT, np.sqrt),
                   (Ops.SIN, np.sin), (Ops.COS, np.cos), (Ops.EXP2, np.exp2), (Ops.LOG2, np.log2),
                   (Ops.RECIPROCAL, np.reciprocal), (Ops.TRUNC, np.trunc)]:
        got = evaluate_one(u.alu(op))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, fn(x), rtol=1e-6, equal_nan=True)
    np.testing.assert_array_equal(evaluate_one(u.cast(dtypes.int16)), x.astype(np.int16))
    bits = evaluate_one(UOp(Ops.BITCAST, dtypes.uint32, (u,)))
    np.testing.assert_array_equal(bits, x.view(np.uint32))
    np.testing.assert_allclose(evaluate_one(u.alu(Ops.POW, 2.0)), x**2)


def test_reduce_axis_keeps_dims():
    u = buf(X)
    for op, fn in [(Ops.ADD, np.sum), (Ops.MUL, np.prod), (Ops.MAX, np.max), (Ops.MIN, np.min)]:
        got = evaluate_one(UOp(Ops.REDUCE_AXIS, dtypes.int32, (u,), (op, (0, 2))))
        np.testing.assert_array_equal(got, fn(X, axis=(0, 2), keepdims=True).astype(np.int32))
    empty = buf(np.zeros((0, 3), dtype=np.float32))
    got = evaluate_one(UOp(Ops.REDUCE_AXIS, dtypes.float32, (empty,), (Ops.MAX, (0,))))
    assert got.shape == (1, 3) and (got == -np.inf).all()


def test_markers_copy_assign_sink():
    data = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    target = buf(data)
    for op in (Ops.CONTIGUOUS, Ops.REALIZE, Ops.DETACH, Ops.FUSE, Ops.CONTIGUOUS_BACKWARD,
               Ops.NOOP):
        np.testing.assert_array_equal(evaluate_one(target.f(op)), data)
    device = UOp(Ops.DEVICE, dtypes.void, (), "CPU")
    copy = UOp(Ops.COPY, dtypes.float32, (target, device))
    assign = UOp(Ops.ASSIGN, dtypes.float32, (target, target * 2.0))
    sink_value, = evaluate([UOp.sink(assign)])
    np.testing.assert_array_equal(sink_value[0], data * 2)
    np.testing.assert_array_equal(target.base.arg.data, data * 2)  # written in place
    np.testing.assert_array_equal(evaluate_one(copy), data * 2)


def test_results_never_alias_buffers():
    data = np.arange(4, dtype=np.int64)
    node = buf(data)
    got = evaluate_one(node.f(Ops.CONTIGUOUS))
    got[0] = 99
    assert node.base.arg.data[0] == 0


def test_unknown_op_is_a_clear_error():
    with pytest.raises(OracleError, match="KERNEL"):
        evaluate_one(UOp(Ops.KERNEL, dtypes.void, ()))


# ---------------------------------------------------------------------- products under movement
def _product(m: int, n: int, k: int, seed: int) -> tuple[UOp, np.ndarray]:
    """The broadcast product of a matmul, (m, n, k) float32, as a graph and in numpy (float32,
    as the oracle computes it)."""
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, 1, k), (1, n, k)))
    node = UOp(Ops.MUL, dtypes.float32, (buf(a).expand((m, n, k)), buf(b).expand((m, n, k))))
    return node, a * b


def _reduce(x: UOp, op: Ops, axes: tuple[int, ...]) -> UOp:
    return UOp(Ops.REDUCE_AXIS, x.dtype, (x,), (op, axes))


def _peak(fn) -> tuple[np.ndarray, int]:
    import tracemalloc

    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


M = 256  # a 256^3 product: 64 MB in float32, its operands 256 KB
MOVED = [  # (movement ops between the product and its reduction, reduced axes, numpy of both)
    (lambda u: u.permute((2, 0, 1)), (0,), lambda p: p.transpose(2, 0, 1).sum(0, keepdims=True)),
    (lambda u: u.flip((False, True, False)), (2,), lambda p: p[:, ::-1].sum(2, keepdims=True)),
    (lambda u: u.shrink(((0, 200), (10, 250), (0, 256))), (2,),
     lambda p: p[:200, 10:250].sum(2, keepdims=True)),
    (lambda u: u.reshape((M, M, 16, 16)), (2, 3),
     lambda p: p.reshape(M, M, 16, 16).sum((2, 3), keepdims=True)),
    (lambda u: u.reshape((M * M, M)), (1,), lambda p: p.reshape(M * M, M).sum(1, keepdims=True)),
    (lambda u: u.reshape((M * M * M,)), (0,), lambda p: p.sum().reshape(1)),
    (lambda u: u.reshape((M, M * M)), (1,), lambda p: p.reshape(M, M * M).sum(1, keepdims=True)),
    (lambda u: u.permute((1, 0, 2)).reshape((M, M, 2, 128)).flip((True, False, False, True)),
     (1, 3), lambda p: p.transpose(1, 0, 2).reshape(M, M, 2, 128)[::-1, :, :, ::-1]
     .sum((1, 3), keepdims=True)),
]


@pytest.mark.parametrize("move,axes,ref", MOVED)
def test_a_product_under_movement_ops_is_reduced_without_making_it(move, axes, ref):
    """A permute, flip, shrink or reshape between a broadcast product and its sum: the oracle
    sums it in blocks (the product's operands moved as views), never the 64 MB product whole."""
    node, p = _product(M, M, M, 3)
    got, peak = _peak(lambda: evaluate_one(_reduce(move(node), Ops.ADD, axes)))
    want = ref(p.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == want.shape
    # the sums' float32 rounding, bounded by the reduction contract on the terms' magnitudes
    bound = 256 * np.finfo(np.float32).eps * ref(np.abs(p).astype(np.float64))
    assert (np.abs(got - want) <= bound).all()
    assert peak < 24 << 20, f"peak {peak >> 20} MB for a product of {p.nbytes >> 20} MB"


def test_a_max_under_a_flatten_is_exact_and_blocked():
    node, p = _product(M, M, M, 4)
    got, peak = _peak(lambda: evaluate_one(_reduce(node.reshape((M * M * M,)), Ops.MAX, (0,))))
    assert got.tolist() == [p.max()]
    assert peak < 24 << 20, f"peak {peak >> 20} MB"


def test_a_reshape_across_kept_and_reduced_axes_is_still_right():
    # (m*n*k / 2, 2) summed over its last axis mixes the product's axes: evaluated whole
    node, p = _product(128, 128, 128, 5)
    got = evaluate_one(_reduce(node.reshape((128 ** 3 // 2, 2)), Ops.ADD, (1,)))
    np.testing.assert_array_equal(got, p.reshape(-1, 2).sum(1, keepdims=True))
