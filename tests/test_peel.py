"""opt.rules' peel action (rules/peel_helpers.py): a loop whose reads are gated by padding runs
its border apart from its interior, whose reads are then plain loads that upcast_store
vectorizes. The values are torch's and numpy's, bit for bit (the peel moves iterations between
loop nests, it computes each as before), and the interior nest is vectorized with no gate left."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_kernel
from rulegrad.rules.opt_helpers import UNROLL_MAX
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort


def _nests(t: Tensor) -> list[tuple[bool, bool]]:
    """Per STORE of t's kernels after the optimizer: (its innermost loop vectorized, a gated
    read left in it)."""
    out = []
    for item in t.schedule():
        for st in lower_kernel(item.ast).src:
            nodes = toposort(st)
            vector = st.src[2:] and st.src[-1].arg[1] in ("upcast", "vector", "simd")
            out.append((bool(vector), any(n.op is Ops.LOAD and len(n.src) == 3 for n in nodes)))
    return out


def _peeled(t: Tensor) -> bool:
    nests = _nests(t)
    return len(nests) > 1 and any(vec and not gated for vec, gated in nests)


# (shape, kernel, stride, padding): 2-d windows of prime sizes, batch 1, tall and skinny images,
# a border wider than one window
POOLS = [((2, 3, 19, 23), 3, 2, 1), ((1, 1, 37, 41), 3, 1, 1), ((1, 4, 11, 61), 5, 2, 2),
         ((3, 2, 13, 97), (3, 5), (2, 1), (1, 2)), ((1, 1, 40, 40), 2, 2, 1)]


def _data(shape, seed=0, dtype=np.float32) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    a.flat[::7] = a.flat[::11]  # ties across windows
    a.flat[5] = np.nan
    return a


@pytest.mark.parametrize("shape,k,s,p", POOLS)
def test_padded_max_pool_is_torchs_and_its_interior_vectorized(shape, k, s, p):
    a = _data(shape)
    x = Tensor(a, requires_grad=True)
    y = x.max_pool2d(k, stride=s, padding=p)
    assert _peeled(y)
    xt = torch.tensor(a, requires_grad=True)
    yt = F.max_pool2d(xt, k, stride=s, padding=p)
    # (halves of small integers: every sum of them is exact, in any order)
    g = np.random.default_rng(1).integers(-8, 9, yt.shape).astype(np.float32) / 2
    (y * Tensor(g)).sum().backward()
    (yt * torch.tensor(g)).sum().backward()
    assert _peeled(x.grad)
    np.testing.assert_array_equal(y.numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32])
def test_a_padded_sum_of_shifts_is_numpys(dtype):
    a = (np.random.default_rng(2).standard_normal((5, 43)) * 8).astype(dtype)
    x = Tensor(a)
    padded = x.pad(((0, 0), (2, 3)))
    y = padded[:, :-4] + padded[:, 1:-3] * 2 + padded[:, 4:]
    assert _peeled(y)
    ap = np.pad(a, ((0, 0), (2, 3)))
    want = ap[:, :-4] + ap[:, 1:-3] * dtype(2) + ap[:, 4:]
    np.testing.assert_array_equal(y.numpy(), want)


def test_one_and_three_spatial_axes():
    a = _data((2, 3, 9, 10, 12))
    want = F.max_pool3d(torch.tensor(a), 3, stride=2, padding=1).numpy()
    y = Tensor(a).max_pool2d((3, 3, 3), stride=2, padding=1)
    np.testing.assert_array_equal(y.numpy(), want)
    b = _data((4, 5, 67))
    want = F.max_pool1d(torch.tensor(b), 4, stride=3, padding=2).numpy()
    y = Tensor(b).max_pool2d((4,), stride=3, padding=2)
    assert _peeled(y)
    np.testing.assert_array_equal(y.numpy(), want)


def test_a_mask_wider_than_a_border_is_left_whole():
    # a triangle's mask along each row (rows of 81 read as rows of 80: row i's gate holds for
    # j >= i) is no padding's border and decided over no run of j: its loop stays one nest
    a = np.random.default_rng(3).standard_normal((40, 40)).astype(np.float32)
    y = Tensor(a).pad(((0, 0), (0, 41))).reshape(-1)[:40 * 80].reshape(40, 80)[:, :40] * 3
    assert len(_nests(y)) == 1
    want = np.pad(a, ((0, 0), (0, 41))).reshape(-1)[:40 * 80].reshape(40, 80)[:, :40] * 3
    np.testing.assert_array_equal(y.numpy(), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_a_row_shifted_by_a_wide_pad_is_a_run_of_pad_and_a_plain_run(dtype):
    # the same gate in every row (j >= 20): the row is cut there, two nests with no gate
    a = (np.random.default_rng(3).standard_normal((40, 40)) * 8).astype(dtype)
    y = Tensor(a).pad(((0, 0), (20, 0)))[:, :40] * 3
    nests = _nests(y)
    assert len(nests) == 2 and all(vec and not gated for vec, gated in nests)
    np.testing.assert_array_equal(y.numpy(), np.pad(a, ((0, 0), (20, 0)))[:, :40] * 3)


def test_a_constant_incoming_gradient_is_not_stored():
    # a loss (y * 1.5).sum() sends 1.5 to every window: recomputed where read, not a kernel
    # of its own writing it out (each kernel reads the input or a window's kept offsets)
    a = _data((2, 3, 19, 23))
    x = Tensor(a, requires_grad=True)
    (x.max_pool2d(3, stride=2, padding=1) * 1.5).sum().backward()
    assert all(any(b.size > 1 for b in item.bufs[1:]) for item in x.grad.schedule())
    xt = torch.tensor(a, requires_grad=True)
    (F.max_pool2d(xt, 3, stride=2, padding=1) * 1.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("lo,hi,k", [(0, 12, 1), (-7, 9, 1), (-9, -2, 2), (3, 3, 3), (-100, 257, 4),
                                     (0, 1, 0)])
def test_a_shift_right_by_a_constant_is_bounded_by_its_operand_s_ends(lo, hi, k):
    """The peel action decides a gate such as (r+1)>>1 < n by the bounds of the shift
    (runtime/uop.py): they are the tightest, the shifts of the operand's ends, as every value
    of the operand shifted (Python's >>: numpy's right_shift on int64) says."""
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.uop import UOp

    x = UOp.variable("x", lo, hi)
    shifted = UOp(Ops.SHR, dtypes.index, (x, UOp.const(dtypes.index, k)))
    values = np.right_shift(np.arange(lo, hi + 1, dtype=np.int64), k)
    assert (shifted.vmin, shifted.vmax) == (values.min(), values.max())


# (pieces' lengths along the middle axis, rows, columns): tiny, prime, batch 1, tall, skinny
CATS = [((1, 2, 1), 2, 9), ((97, 98, 194), 3, 65), ((4093, 1, 7), 1, 31), ((5, 3, 8), 1021, 8),
        ((1, 1, 1, 1), 7, 1000)]


@pytest.mark.parametrize("lengths,rows,cols", CATS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_a_cat_along_a_middle_axis_is_one_plain_nest_per_piece(lengths, rows, cols, dtype):
    # the pieces' masks along the middle loop are no padding's border: that loop is cut where
    # each mask changes, so each nest reads one piece with no gate and is vectorized
    rng = np.random.default_rng(4)
    parts = [(rng.standard_normal((rows, n, cols)) * 8).astype(dtype) for n in lengths]
    parts[0].flat[0] = -0.0 if dtype is not np.int32 else 0
    y = Tensor(parts[0]).cat(*map(Tensor, parts[1:]), dim=1)
    nests = _nests(y)  # (1-wide pieces: a stack, whose middle loop is unrolled, one nest)
    assert len(nests) <= len(lengths) and all(vec and not gated for vec, gated in nests)
    want = np.concatenate(parts, axis=1)
    got = y.numpy()
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # (-0.0 kept)


# (pieces' widths along the last axis, rows): batch 1, tall, skinny, prime, a 1-wide piece
LAST_CATS = [((100003, 7), 1), ((33, 31, 64), 1021), ((1021, 509), 4), ((9, 1, 17), 3)]


@pytest.mark.parametrize("widths,rows", LAST_CATS)
def test_a_cat_along_the_last_axis_is_one_plain_run_per_piece(widths, rows):
    # each piece's mask along the row changes once or twice: the row is cut there, one nest
    # per piece, each a contiguous copy (before: one nest of gated scalar reads)
    rng = np.random.default_rng(6)
    parts = [rng.standard_normal((rows, w)).astype(np.float32) for w in widths]
    y = Tensor(parts[0]).cat(*map(Tensor, parts[1:]), dim=-1)
    nests = _nests(y)
    assert len(nests) == len(widths) and not any(gated for _, gated in nests)
    assert all(vec for (vec, _), w in zip(nests, widths) if w >= 8)
    np.testing.assert_array_equal(y.numpy(), np.concatenate(parts, axis=-1))


def test_a_wide_pad_of_a_middle_axis_stores_its_pad_apart():
    # pad 12 before and 9 after along a middle axis: three runs, two of them the pad value
    a = np.random.default_rng(5).standard_normal((3, 40, 33)).astype(np.float32)
    y = Tensor(a).pad(((0, 0), (12, 9), (0, 0)), value=-1.5) * 2
    nests = _nests(y)
    assert len(nests) == 3 and all(vec and not gated for vec, gated in nests)
    np.testing.assert_array_equal(y.numpy(), np.pad(a, ((0, 0), (12, 9), (0, 0)),
                                                     constant_values=-1.5) * 2)


# a running max's (min's, sum's) double gradient over n <= UNROLL_MAX: its windows are unrolled
# into n reads shifted by 0..n-1, each gated, so the output loop's gates change at every
# iteration. Cut there, each run of one iteration kept the whole unrolled body: (2, 13) printed
# ~68x its kernels' nodes (~190,000 nodes, 13 nests a kernel), (2, 9) and (9, 3) 34x in 9 nests.
# Left whole (PEEL_GROWTH), a kernel prints at most the unroll's copies of its nodes, in one
# nest a STORE. (n = 9, past a vector's 8 lanes: 13 and 16 cut the same way and cost 13-17
# CPU-s a test against 8, growing with n; test_review_54b's values are these programs' too)
@pytest.mark.parametrize("name, n, axis", [("cummax", 9, 1), ("cummin", 9, 0),
                                           ("cumsum", 9, 1)])
def test_a_short_running_max_s_double_gradient_prints_its_kernels_once(name, n, axis):
    shape = (2, n) if axis == 1 else (n, 3)
    rng = np.random.default_rng(n + axis)
    a = rng.integers(-3, 4, size=shape).astype(np.float32)  # (ties: segments longer than 1)
    w = rng.standard_normal(shape).astype(np.float32)

    x = Tensor(a, requires_grad=True)
    v = getattr(x, name)(axis)
    v = v if name == "cumsum" else v[0]
    gx, = (v * v * x * Tensor(w)).sum().gradient(x)
    gg, = (gx * gx).sum().gradient(x)
    for item in gg.schedule():
        stores = lower_kernel(item.ast).src
        assert len(stores) == 1, (item.ast.arg, len(stores))
        assert len(toposort(stores[0])) <= UNROLL_MAX * len(toposort(item.ast))
    tx = torch.tensor(a.astype(np.float64), requires_grad=True)
    tv = getattr(torch, name)(tx, axis)
    tv = tv if name == "cumsum" else tv[0]
    tgx, = torch.autograd.grad((tv * tv * tx * torch.tensor(w.astype(np.float64))).sum(), tx,
                               create_graph=True)
    tgg, = torch.autograd.grad((tgx * tgx).sum(), tx)
    np.testing.assert_allclose(gx.numpy(), tgx.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-4, atol=1e-4)
