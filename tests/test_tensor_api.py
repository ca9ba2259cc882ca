"""tinygrad's Tensor API beyond the core ops (runtime/tensor_ops.py, runtime/nn.py, indexing,
pad modes, rounding modes) against numpy: drawn shapes (0-d and 0-size included where the op
allows them) and a dtype sweep where the op is defined for several dtypes.

Every reference is written here in numpy, directly from the op's definition (loops over windows
for pooling and convolution, np.einsum, np.take_along_axis, np.pad's modes, ...), never taken
from our own output. `tests/test_tensor_api_interp.py` runs the same tests through the kernel
interpreter instead of C.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from test_tensor_ops import ALL, FLOATS, INTS, NUMERIC, SETTINGS, arrays, check, shapes

from rulegrad import Tensor, dtypes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
FEW = SETTINGS.__class__(SETTINGS, max_examples=10)
F32 = np.dtype("float32")


def floats(shape, dt=F32, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dt)


# ---------------------------------------------------------------------- pooling
def _windows(x, k, s, d):
    """Every window of the last two axes: (..., oh, ow, kh, kw), by explicit index loops."""
    h, w = x.shape[-2:]
    oh, ow = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1, (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.empty(x.shape[:-2] + (oh, ow) + tuple(k), x.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[0]):
                for b in range(k[1]):
                    out[..., i, j, a, b] = x[..., i * s[0] + a * d[0], j * s[1] + b * d[1]]
    return out


pool_cases = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
                       st.integers(1, 2), st.integers(0, 1))


@FEW
@given(st.data(), st.sampled_from(FLOATS + [np.dtype("int32"), np.dtype("uint8")]), pool_cases)
def test_max_pool2d(data, dt, case):
    k, s0, s1, d, p = case
    assume(p <= k // 2)
    h, w = data.draw(st.integers(d * (k - 1) + 1, 7)), data.draw(st.integers(d * (k - 1) + 1, 7))
    x = data.draw(arrays(dt, (2, data.draw(st.integers(0, 2)), h, w), small=True))
    fill = -np.inf if dt.kind == "f" else np.iinfo(dt).min
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    want = _windows(xp, (k, k), (s0, s1), (d, d)).max((-1, -2), initial=fill)
    check(Tensor(x).max_pool2d(k, (s0, s1), d, p), want.astype(dt))


@FEW
@given(st.data(), st.sampled_from([np.dtype("float32"), np.dtype("float64")]), pool_cases,
       st.booleans())
def test_avg_pool2d(data, dt, case, include_pad):
    k, s0, s1, _, p = case
    assume(p <= k // 2)
    h, w = data.draw(st.integers(k, 7)), data.draw(st.integers(k, 7))
    x = data.draw(arrays(dt, (1, 2, h, w), small=True))
    pads = ((0, 0), (0, 0), (p, p), (p, p))
    sums = _windows(np.pad(x, pads), (k, k), (s0, s1), (1, 1)).sum((-1, -2))
    ones = np.pad(np.ones_like(x), pads)
    counts = _windows(ones, (k, k), (s0, s1), (1, 1)).sum((-1, -2)) if not include_pad \
        else np.full_like(sums, k * k)
    check(Tensor(x).avg_pool2d(k, (s0, s1), padding=p, count_include_pad=include_pad),
          sums / counts)


def test_pooling_ceil_mode_and_indices():
    x = floats((1, 2, 5, 6))
    # ceil_mode: the last partial window is kept (3 windows of stride 2 over 5 and 6)
    got = Tensor(x).max_pool2d(2, 2, ceil_mode=True)
    xp = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 0)), constant_values=-np.inf)
    check(got, _windows(xp, (2, 2), (2, 2), (1, 1)).max((-1, -2)))
    vals, idx = Tensor(x).max_pool2d(2, return_indices=True)
    win = _windows(x, (2, 2), (2, 2), (1, 1)).reshape(1, 2, 2, 3, 4)
    flat_pos = _windows(np.arange(30).reshape(5, 6), (2, 2), (2, 2), (1, 1)).reshape(2, 3, 4)
    want_idx = np.take_along_axis(flat_pos[None, None], win.argmax(-1)[..., None], -1)[..., 0]
    check(vals, win.max(-1))
    check(idx, want_idx.astype(np.int32))  # tinygrad's index dtype


def test_pool_errors_are_clear():
    with pytest.raises(ValueError, match="larger than the input"):
        Tensor.ones(1, 1, 2, 2).max_pool2d(3)
    with pytest.raises(ValueError, match="padding must be"):
        Tensor.ones(1, 1, 4, 4).avg_pool2d(2, padding=(1, 1, 1))


# ---------------------------------------------------------------------- convolutions
def _conv_reference(x, w, groups, stride, dilation, pads):
    x = np.pad(x, ((0, 0), (0, 0)) + pads)
    n, cin = x.shape[:2]
    cout, cg, kh, kw = w.shape
    win = _windows(x, (kh, kw), stride, dilation)  # n, c, oh, ow, kh, kw
    out = []
    for g in range(groups):
        xs = win[:, g * cg:(g + 1) * cg]
        ws = w[g * (cout // groups):(g + 1) * (cout // groups)]
        out.append(np.einsum("ncyxij,ocij->noyx", xs, ws))
    return np.concatenate(out, 1)


@FEW
@given(st.data(), st.sampled_from([1, 2]), st.integers(1, 2), st.integers(1, 2),
       st.integers(0, 2))
def test_conv2d_groups_stride_dilation_padding(data, groups, stride, dilation, pad):
    cg, og = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    k = data.draw(st.integers(1, 3))
    span = dilation * (k - 1) + 1
    h, w = data.draw(st.integers(span, 6)), data.draw(st.integers(span, 6))
    x = floats((2, cg * groups, h, w), seed=1)
    wt = floats((og * groups, cg, k, k), seed=2)
    b = floats((og * groups,), seed=3)
    pads = ((pad, pad), (pad, pad))
    want = _conv_reference(x, wt, groups, (stride, stride), (dilation, dilation), pads)
    got = Tensor(x).conv2d(Tensor(wt), Tensor(b), groups=groups, stride=stride,
                           dilation=dilation, padding=pad)
    check(got, (want + b.reshape(1, -1, 1, 1)).astype(np.float32), rtol=1e-4, atol=1e-4)
    # a tuple per spatial axis, and torch-order pairs (negative pads cut)
    got = Tensor(x).conv2d(Tensor(wt), groups=groups, padding=(pad, 0))
    want = _conv_reference(x, wt, groups, (1, 1), (1, 1), ((pad, pad), (0, 0)))
    check(got, want.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_conv2d_negative_padding_cuts():
    x, w = floats((1, 1, 6, 6)), floats((1, 1, 2, 2), seed=1)
    got = Tensor(x).conv2d(Tensor(w), padding=(-1, 0, 1, -1))  # left, right, top, bottom
    xs = np.pad(x[:, :, :-1, 1:], ((0, 0), (0, 0), (1, 0), (0, 0)))
    check(got, _conv_reference(xs, w, 1, (1, 1), (1, 1), ((0, 0), (0, 0))), rtol=1e-4,
          atol=1e-4)


def _conv_transpose_reference(x, w, stride, pad, out_pad):
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    oh, ow = (h - 1) * stride + kh, (wd - 1) * stride + kw
    out = np.zeros((n, cout, oh + out_pad, ow + out_pad), np.float64)
    for i in range(h):
        for j in range(wd):
            out[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += \
                np.einsum("nc,coij->noij", x[:, :, i, j], w)
    return out[:, :, pad:oh + out_pad - pad, pad:ow + out_pad - pad]


@FEW
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(0, 1))
def test_conv_transpose2d(k, stride, pad, out_pad):
    assume(out_pad < stride and pad < k)
    x, w = floats((2, 3, 3, 4)), floats((3, 2, k, k), seed=1)
    got = Tensor(x).conv_transpose2d(Tensor(w), stride=stride, padding=pad,
                                     output_padding=out_pad)
    want = _conv_transpose_reference(x, w, stride, pad, out_pad)
    check(got, want.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_conv_errors_are_clear():
    with pytest.raises(ValueError, match="groups=2"):
        Tensor.ones(1, 3, 4, 4).conv2d(Tensor.ones(2, 2, 3, 3), groups=2)
    with pytest.raises(ValueError, match="one rank"):
        Tensor.ones(3, 4, 4).conv2d(Tensor.ones(2, 3, 3, 3))


# ---------------------------------------------------------------------- einsum
@FEW
@given(st.data(), st.sampled_from(["ij,jk->ik", "ij,jk", "bij,bjk->bik", "ii->i", "ii",
                                   "ij->", "i,j->ij", "...ij,...jk->...ik", "ijk->kji",
                                   "ij,ij->i", "bi,bi"]))
def test_einsum(data, formula):
    sizes = {c: data.draw(st.integers(0 if c == "b" else 1, 3)) for c in "ijkb"}
    ell = tuple(data.draw(st.lists(st.integers(1, 2), max_size=2)))
    lhs = formula.split("->")[0].split(",")
    arrs = [floats(ell * ("..." in s) + tuple(sizes[c] for c in s.replace("...", "")), seed=n)
            for n, s in enumerate(lhs)]
    check(Tensor.einsum(formula, *[Tensor(a) for a in arrs]), np.einsum(formula, *arrs),
          rtol=1e-4, atol=1e-5)


def test_einsum_errors_are_clear():
    with pytest.raises(ValueError, match="names 2 operands"):
        Tensor.einsum("ij,jk->ik", Tensor.ones(2, 2))
    with pytest.raises(ValueError, match="has sizes"):
        Tensor.einsum("ij,jk->ik", Tensor.ones(2, 3), Tensor.ones(2, 2))


# ---------------------------------------------------------------------- scans, arg-reductions
@SETTINGS
@given(st.data(), st.sampled_from(ALL), shapes(min_dims=0, max_dims=3))
def test_cumsum_cumprod(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    axis = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    ref_axis = axis if a.ndim else None
    check(Tensor(a).cumsum(axis), np.cumsum(a, ref_axis).reshape(a.shape))
    if dt.kind != "b":
        check(Tensor(a).cumprod(axis), np.cumprod(a, ref_axis).reshape(a.shape))


def _cum_arg(a, axis, better):
    """Running extreme and the last index where it was reached (torch's cummax/cummin)."""
    a = np.moveaxis(a, axis, -1)
    vals, idx = np.empty_like(a), np.zeros(a.shape, np.int32)
    for pos in np.ndindex(a.shape[:-1]):
        best, at = None, 0
        for i, v in enumerate(a[pos]):
            if best is None or better(v, best) or v == best:
                best, at = v, i
            vals[pos + (i,)], idx[pos + (i,)] = best, at
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


@SETTINGS
@given(st.data(), st.sampled_from(NUMERIC), shapes(min_dims=1, max_dims=3))
def test_cummax_cummin(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    for ours, better in ((Tensor(a).cummax(axis), np.greater), (Tensor(a).cummin(axis), np.less)):
        vals, idx = _cum_arg(a, axis, better)
        check(ours[0], vals)
        check(ours[1], idx)


@SETTINGS
@given(st.data(), st.sampled_from(ALL), shapes(min_dims=0, max_dims=3, min_side=1))
def test_argmax_argmin(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    i32 = np.int32  # tinygrad's index dtype (numpy's is int64)
    check(Tensor(a).argmax(), np.argmax(a).astype(i32))
    check(Tensor(a).argmin(), np.argmin(a).astype(i32))
    if a.ndim:
        axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
        check(Tensor(a).argmax(axis), np.argmax(a, axis).astype(i32))
        check(Tensor(a).argmin(axis, keepdim=True), np.argmin(a, axis, keepdims=True).astype(i32))
    else:  # an axis on a 0-d tensor is the tensor itself
        check(Tensor(a).argmax(0), np.int32(0))
        check(Tensor(a).sum(0), np.sum(a))
    with pytest.raises(ValueError):
        Tensor(np.zeros((0, 2), dt)).argmax(0)


@SETTINGS
@given(st.data(), st.sampled_from(FLOATS), shapes(min_dims=1, max_dims=3, min_side=1))
def test_logsumexp_std(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    x = a.astype(np.float64)
    m = x.max(axis, keepdims=True)
    want = (np.log(np.exp(x - m).sum(axis, keepdims=True)) + m).squeeze(axis)
    check(Tensor(a).logsumexp(axis), want.astype(dt), rtol=2e-2 if dt == np.float16 else None)
    assume(a.shape[axis] > 1)
    check(Tensor(a).std(axis), np.std(x, axis, ddof=1).astype(dt),
          rtol=2e-2 if dt == np.float16 else 1e-4, atol=2e-2 if dt == np.float16 else 1e-5)


# ---------------------------------------------------------------------- indexing by tensors
@SETTINGS
@given(st.data(), st.sampled_from(ALL), shapes(min_dims=1, max_dims=3, min_side=1))
def test_gather_and_tensor_index(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    axis = data.draw(st.integers(0, a.ndim - 1))
    ishape = tuple(data.draw(st.integers(0, s)) if i != axis else data.draw(st.integers(0, 4))
                   for i, s in enumerate(shape))
    idx = data.draw(arrays(np.dtype("int32"), ishape).map(lambda i: i % shape[axis]))
    check(Tensor(a).gather(axis, Tensor(idx)),
          np.take_along_axis(a[tuple(slice(0, s) if i != axis else slice(None)
                                     for i, s in enumerate(ishape))], idx, axis))
    flat = data.draw(arrays(np.dtype("int32"), (data.draw(st.integers(0, 3)),))
                     .map(lambda i: i % (2 * shape[0]) - shape[0]))  # negatives count back
    check(Tensor(a)[Tensor(flat)], a[flat])
    check(Tensor(a)[flat.tolist()], a[flat.tolist()])
    if a.ndim > 1:
        rows = (flat % shape[1]).tolist()
        check(Tensor(a)[:, Tensor(np.array(rows, np.int32))], a[:, rows])
        check(Tensor(a)[..., None, 0], a[..., None, 0])


def test_index_lists_of_ints_and_bools():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    # bools among ints are 0 and 1 (as in torch, whose tensor of such a list is int64)
    np.testing.assert_array_equal(Tensor(a)[[True, False, 2]].numpy(), a[[1, 0, 2]])
    np.testing.assert_array_equal(Tensor(a)[[[4, True]], 0].numpy(), a[[[4, 1]], 0])
    np.testing.assert_array_equal(Tensor(a)[[]].numpy(), a[np.array([], np.int64)])
    for mask in ([True, False], [[True], [False]]):  # bools only: a mask, not supported
        with pytest.raises(IndexError):
            Tensor(a)[mask]


@SETTINGS
@given(st.data(), st.sampled_from(NUMERIC), shapes(min_dims=1, max_dims=3, min_side=1))
def test_scatter(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    axis = data.draw(st.integers(0, a.ndim - 1))
    ishape = tuple(data.draw(st.integers(0, s)) for s in shape)
    idx = data.draw(arrays(np.dtype("int32"), ishape).map(lambda i: i % shape[axis]))
    src = data.draw(arrays(dt, ishape, small=True))
    want, added = a.copy(), a.copy()
    for pos in np.ndindex(ishape):  # in order, so the last write to a place wins
        tgt = list(pos)
        tgt[axis] = idx[pos]
        want[tuple(tgt)] = src[pos]
        added[tuple(tgt)] += src[pos]
    check(Tensor(a).scatter(axis, Tensor(idx), Tensor(src)), want)
    check(Tensor(a).scatter_reduce(axis, Tensor(idx), Tensor(src), "sum"), added)


@SETTINGS
@given(st.data(), shapes(max_dims=2), st.integers(1, 5))
def test_one_hot(data, shape, n):
    a = data.draw(arrays(np.dtype("int32"), shape).map(lambda i: i % n))
    check(Tensor(a).one_hot(n), np.eye(n, dtype=np.int32)[a])


# ---------------------------------------------------------------------- pad modes, cuts
@SETTINGS
@given(st.data(), st.sampled_from(ALL), shapes(min_dims=1, max_dims=3, min_side=1),
       st.sampled_from(["reflect", "replicate", "circular"]))
def test_pad_modes(data, dt, shape, mode):
    a = data.draw(arrays(dt, shape, small=True))
    limit = (lambda s: s - 1) if mode == "reflect" else (lambda s: s)
    pads = tuple((data.draw(st.integers(0, limit(s))), data.draw(st.integers(0, limit(s))))
                 for s in shape)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    check(Tensor(a).pad(pads, mode=mode), np.pad(a, pads, mode=np_mode))


@SETTINGS
@given(st.data(), st.sampled_from(ALL), shapes(min_dims=1, max_dims=3))
def test_negative_pad_cuts(data, dt, shape):
    a = data.draw(arrays(dt, shape))
    pads = tuple((data.draw(st.integers(-(s // 2), 2)), data.draw(st.integers(-(s // 2), 2)))
                 for s in shape)
    cut = a[tuple(slice(max(-b, 0), s - max(-e, 0)) for (b, e), s in zip(pads, shape))]
    check(Tensor(a).pad(pads), np.pad(cut, tuple((max(b, 0), max(e, 0)) for b, e in pads)))
    with pytest.raises(ValueError, match="reflect padding"):
        Tensor(a).pad(tuple((s, 0) for s in shape), mode="reflect")


# ---------------------------------------------------------------------- elementwise
@SETTINGS
@given(st.data(), st.sampled_from(INTS + FLOATS), shapes())
def test_div_rounding_modes(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True))
    b = data.draw(arrays(dt, shape, small=True))
    nz = b != 0
    a, b = np.where(nz, a, 0).astype(dt), np.where(nz, b, 1).astype(dt)
    if dt.kind == "f":
        check(Tensor(a).div(Tensor(b), rounding_mode="trunc"), np.trunc(a / b))
    else:
        q = (np.abs(a.astype(np.float64)) // np.abs(b.astype(np.float64))) * \
            np.sign(a.astype(np.float64)) * np.sign(b.astype(np.float64))
        check(Tensor(a).div(Tensor(b), rounding_mode="trunc"), q.astype(dt))
    check(Tensor(a).div(Tensor(b), rounding_mode="floor"), np.floor_divide(a, b))
    with pytest.raises(RuntimeError, match="rounding_mode"):
        Tensor(a).div(Tensor(b), rounding_mode="typo")


@SETTINGS
@given(st.data(), st.sampled_from(INTS), shapes())
def test_shifts(data, dt, shape):
    a = data.draw(arrays(dt, shape))
    bits = dt.itemsize * 8
    s = data.draw(arrays(dt, shape, small=True).map(lambda x: np.abs(x.astype(np.int64)) % bits)
                  ).astype(dt)
    k = data.draw(st.integers(0, bits - 1))
    check(Tensor(a) << Tensor(s), np.left_shift(a, s))
    check(Tensor(a) >> Tensor(s), np.right_shift(a, s))
    check(Tensor(a) << k, np.left_shift(a, k))
    check(Tensor(a) >> k, np.right_shift(a, k))
    with pytest.raises(TypeError, match="integer or bool operands, got float32 and int"):
        Tensor(a.astype(np.float32)) << 1  # (numpy's np.left_shift raises a TypeError too)


@SETTINGS
@given(st.data(), st.sampled_from(FLOATS), shapes())
def test_float_functions(data, dt, shape):
    a = data.draw(arrays(dt, shape, small=True)) / 4
    x = a.astype(np.float64)
    erf_of = np.vectorize(math.erf, otypes=[np.float64])
    erf = erf_of(x) if x.size else x
    tol = dict(rtol=2e-2, atol=2e-2) if dt == np.float16 else dict(rtol=1e-5, atol=1e-5)
    check(Tensor(a).erf(), erf.astype(dt), **tol)
    gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    check(Tensor(a).gelu(), gelu.astype(dt), **tol)
    exact = 0.5 * x * (1 + (erf_of(x / math.sqrt(2)) if x.size else x))
    check(Tensor(a).gelu(approximate="none"), exact.astype(dt), **tol)
    check(Tensor(a).floor(), np.floor(a))
    check(Tensor(a).ceil(), np.ceil(a))
    check(Tensor(a).round(), np.round(a))
    check(Tensor(a).cos(), np.cos(x).astype(dt), **tol)
    check(Tensor(a).clip(-1, 1), np.clip(a, -1, 1))
    check(Tensor(a).square(), np.square(a))


# ---------------------------------------------------------------------- creation
def test_arange_dtype_choice_and_overflow():
    check(Tensor.arange(2**31, 2**31 + 3), np.arange(2**31, 2**31 + 3, dtype=np.int64))
    check(Tensor.arange(-128, 128, dtype=dtypes.int8), np.arange(-128, 128, dtype=np.int8))
    check(Tensor.arange(127, -129, -1, dtype="int8"), np.arange(127, -129, -1, dtype=np.int8))
    for args, dt in [((129,), dtypes.int8), ((-129, 128), dtypes.int8),
                     ((128, 0, -1), dtypes.int8), ((2**33,), dtypes.int32)]:
        with pytest.raises(OverflowError):
            Tensor.arange(*args, dtype=dt)


def test_randn_is_seeded_standard_normal():
    Tensor.manual_seed(3)
    a = Tensor.randn(20000).numpy()
    Tensor.manual_seed(3)
    b = Tensor.randn(100, 200).numpy().reshape(-1)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    # a fixed seed: these are exact properties of this draw, with wide margins
    assert abs(a.mean()) < 0.03 and abs(a.std() - 1) < 0.03
    assert abs((np.abs(a) < 1).mean() - 0.6827) < 0.02
    assert Tensor.randn(0, 3).shape == (0, 3)


# ---------------------------------------------------------------------- nn functions
def _log_softmax(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


@FEW
@given(st.integers(1, 4), st.integers(1, 5), st.floats(0, 0.5))
def test_losses(n, c, smoothing):
    x = floats((n, c))
    y = np.random.default_rng(n).integers(0, c, n).astype(np.int32)
    lp = _log_softmax(x, 1)
    picked = lp[np.arange(n), y]
    check(Tensor(lp.astype(np.float32)).nll_loss(Tensor(y)), np.float32(-picked.mean()),
          rtol=1e-5, atol=1e-6)
    smooth = (1 - smoothing) * picked + smoothing * lp.mean(1)
    check(Tensor(x).cross_entropy(Tensor(y), label_smoothing=smoothing),
          np.float32(-smooth.mean()), rtol=1e-5, atol=1e-6)
    check(Tensor(x).sparse_categorical_crossentropy(Tensor(y), reduction="sum"),
          np.float32(-picked.sum()), rtol=1e-5, atol=1e-5)


def test_scaled_dot_product_attention():
    q, k, v = floats((2, 3, 4), seed=1), floats((2, 5, 4), seed=2), floats((2, 5, 4), seed=3)
    s = q.astype(np.float64) @ k.transpose(0, 2, 1) / 2.0
    for causal in (False, True):
        m = np.where(np.tril(np.ones((3, 5), bool)), s, -np.inf) if causal else s
        p = np.exp(m - m.max(-1, keepdims=True))
        want = (p / p.sum(-1, keepdims=True)) @ v
        got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=causal)
        check(got, want.astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear"])
def test_interpolate(mode):
    x = floats((1, 2, 3, 5))
    got = Tensor(x).interpolate((5, 3), mode=mode)
    want = x.astype(np.float64)
    for axis, size in ((2, 5), (3, 3)):
        n = want.shape[axis]
        out = np.arange(size)
        if mode == "linear":  # torch's half-pixel centres, clamped at the edges
            src = np.clip((out + 0.5) * n / size - 0.5, 0, n - 1)
            lo = np.floor(src).astype(int)
            hi = np.minimum(lo + 1, n - 1)
            f = (src - lo).reshape([-1 if i == axis else 1 for i in range(4)])
            want = np.take(want, lo, axis) * (1 - f) + np.take(want, hi, axis) * f
        else:
            src = (out + 0.5) * n / size if mode == "nearest-exact" else out * n / size
            want = np.take(want, np.minimum(np.floor(src).astype(int), n - 1), axis)
    check(got, want.astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,size", [((2, 3, 64, 64), (10, 10)), ((1, 2, 9, 7), (13, 4)),
                                        ((1, 1, 5, 5), (11, 11)), ((1, 3, 8, 6), (3, 17))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_uint8_is_torchs(shape, size, align_corners):
    # torch's uint8 bilinear is integer arithmetic of its own (fixed-point weights, a rounding
    # per axis): the reference here is torch itself, on the whole 0..255 range
    torch = pytest.importorskip("torch", reason="torch is not installed: uint8 interpolation "
                                "compared with torch skipped")
    x = np.random.default_rng(sum(shape)).integers(0, 256, shape).astype(np.uint8)
    want = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="bilinear",
                                           align_corners=align_corners).numpy()
    got = Tensor(x).interpolate(size, mode="linear", align_corners=align_corners).numpy()
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(st.data(), st.sampled_from(NUMERIC), shapes(min_dims=1, max_dims=3), st.booleans())
def test_sort_argsort_topk(data, dt, shape, descending):
    a = data.draw(arrays(dt, shape, small=True))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    key = -a.astype(np.float64) if descending else a  # stable: ties keep their order
    order = np.argsort(key, axis, kind="stable")
    vals, idx = Tensor(a).sort(axis, descending=descending)
    check(vals, np.take_along_axis(a, order, axis))
    check(idx, order.astype(np.int32))  # tinygrad's index dtype
    k = data.draw(st.integers(0, a.shape[axis]))
    top = Tensor(a).topk(k, axis, largest=descending)
    keep = np.take(order, np.arange(k), axis)
    check(top[0], np.take_along_axis(a, keep, axis))
    check(top[1], keep.astype(np.int32))


def test_where_of_two_python_scalars_uses_tinygrad_defaults():
    c = np.array([True, False, True])
    check(Tensor(c).where(1, 3), np.where(c, 1, 3).astype(np.int32))
    check(Tensor(c).where(1, 2.5), np.where(c, 1, 2.5).astype(np.float32))
    check(Tensor(c).where(True, False), np.where(c, True, False))


# ---------------------------------------------------------------------- bitcast
@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("int32", "float32"),
                                     ("uint32", "int32"), ("float16", "int16"),
                                     ("float64", "int64"), ("int8", "uint8")])
def test_bitcast_is_numpys_view(src, dst):
    bits = np.random.default_rng(0).integers(0, 256, (3, 5, 8), dtype=np.uint8)
    a = bits.view(np.dtype(src)).reshape(3, 5, -1)
    a = np.where(np.isnan(a), 0, a) if a.dtype.kind == "f" else a  # NaN payloads may change
    got = (Tensor(a).bitcast(dst) + 0).numpy()  # in a kernel, not only a read of the buffer
    np.testing.assert_array_equal(got, a.view(np.dtype(dst)))
    with pytest.raises(ValueError, match="item sizes must match"):
        Tensor(a).bitcast("float16" if a.dtype.itemsize != 2 else "float32")


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (7,)])
def test_bitcast_of_one_element_keeps_its_shape(shape):
    """A bitcast in a kernel of one element: the kernel interpreter's view of a 0-d value made
    it 1-d, and its store failed ('cannot broadcast a non-scalar to a scalar array'; found by
    the fuzzer's class ops, tools/fuzz.py). The values are numpy's view."""
    a = np.arange(1, 1 + math.prod(shape), dtype=np.int32).reshape(shape)
    for t in (Tensor(a).bitcast("float32"), Tensor(a).bitcast("float32").maximum(0)):
        got = t.numpy()
        assert got.shape == shape
        np.testing.assert_array_equal(got, a.view(np.float32))


# ---------------------------------------------------------------------- data-dependent sizes
@pytest.mark.parametrize("dt", ["float32", "int32", "bool", "uint8"])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (4, 5), (3, 0, 2), (2, 3, 4)])
def test_nonzero_and_masked_select(dt, shape):
    rng = np.random.default_rng(len(shape))
    a = (rng.integers(-2, 3, shape) * (rng.random(shape) < 0.5)).astype(dt)
    got = Tensor(a).nonzero()
    assert got.dtype is dtypes.int32
    np.testing.assert_array_equal(got.numpy(), np.argwhere(a))
    mask = rng.random(shape) < 0.4
    np.testing.assert_array_equal(Tensor(a).masked_select(Tensor(mask)).numpy(), a[mask])
    if a.ndim:  # a mask that broadcasts over the first axes
        row = mask.reshape(-1)[:shape[-1]] if a.size else np.zeros(shape[-1], bool)
        np.testing.assert_array_equal(Tensor(a).masked_select(Tensor(row)).numpy(),
                                      a[np.broadcast_to(row, shape)])
    # with a size: cut, or filled past the count (in the tensor's dtype), nothing realized
    n = int(np.count_nonzero(a))
    for size in (0, max(n - 1, 0), n + 2):
        want = np.full((size, a.ndim), -1, np.int32)
        want[:min(size, n)] = np.argwhere(a)[:size]
        np.testing.assert_array_equal(Tensor(a).nonzero(size=size, fill_value=-1).numpy(), want)
        sel = a[mask]
        want = np.zeros(size, a.dtype)
        want[:min(size, len(sel))] = sel[:size]
        got = Tensor(a).masked_select(Tensor(mask), size=size)
        assert got.dtype == Tensor(a).dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_masked_select_needs_a_bool_mask():
    with pytest.raises(ValueError, match="bool mask"):
        Tensor(np.ones(3, np.float32)).masked_select(Tensor(np.ones(3, np.int32)))
