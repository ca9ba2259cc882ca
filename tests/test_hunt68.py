"""hunt68 (issue 31): silent wrong answers and missing refusals, each checked against torch.

- cross_entropy with class indices: an out-of-range index is refused when known, and torch's
  ignore_index (-100 by default) adds 0 and is left out of the mean, label smoothing too;
  nll_loss ignores -100 by default, as torch's;
- a mask write of several values a narrower dtype cannot hold is refused (torch refuses a
  source of another dtype; it wrapped);
- a list of numpy arrays keeps their dtype, as torch.tensor infers it;
- var/std with correction >= n: torch's values and gradients (+-inf, finite, NaN);
- then hand-written programs over reductions, division, NaN comparisons, where, pad, scans,
  promotion and in-place view writes, on both schedulers.
"""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor

pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom")
LOGITS = np.random.RandomState(0).randn(4, 3).astype(np.float32)


# ------------------------------------------------------------------ item 1: cross entropy
@pytest.mark.parametrize("labels", [[0, 1, 2, 3], [0, -1, 2, 1], [5, 0, 0, 0]])
def test_cross_entropy_out_of_range_is_refused(labels):
    with pytest.raises(IndexError):
        F.cross_entropy(torch.tensor(LOGITS), torch.tensor(labels))
    with pytest.raises(IndexError, match="cross_entropy: index .* out of bounds"):
        Tensor(LOGITS).cross_entropy(Tensor(labels)).numpy()


CE_CASES = [([0, -100, 2, 1], 0.0, "mean"), ([0, -100, 2, 1], 0.2, "mean"),
            ([0, -100, 2, 1], 0.2, "sum"), ([0, -100, 2, 1], 0.2, "none"),
            ([-100] * 4, 0.0, "mean"), ([-100] * 4, 0.3, "none"), ([-100] * 4, 0.3, "sum"),
            ([2, 7, 7, 0], 0.1, "mean")]


@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_ignore_index_agrees(case):
    labels, smoothing, reduction = CE_CASES[case]
    ignore = 7 if 7 in labels else -100
    t = torch.tensor(LOGITS, requires_grad=True)
    want = F.cross_entropy(t, torch.tensor(labels), ignore_index=ignore,
                           label_smoothing=smoothing, reduction=reduction)
    want.sum().backward()
    x = Tensor(LOGITS, requires_grad=True)
    kw = {} if ignore == -100 else {"ignore_index": ignore}
    got = x.cross_entropy(Tensor(labels), reduction=reduction, label_smoothing=smoothing, **kw)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum().gradient(x)[0].numpy(), t.grad.numpy(), rtol=1e-5,
                               atol=1e-6)


def test_sparse_categorical_crossentropy_out_of_range_is_refused():
    with pytest.raises(IndexError, match="sparse_categorical_crossentropy: index 3"):
        Tensor(LOGITS).sparse_categorical_crossentropy(Tensor([0, 1, 2, 3])).numpy()
    # its ignored label (tinygrad's -1, or one given) still passes, as cross_entropy's does
    t = torch.tensor(LOGITS)
    want = F.cross_entropy(t, torch.tensor([0, 5, 2, 1]), ignore_index=5).numpy()
    got = Tensor(LOGITS).sparse_categorical_crossentropy(Tensor([0, 5, 2, 1]), ignore_index=5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_nll_loss_ignores_torchs_default():
    lp = np.log(np.full((3, 4), 0.25, np.float32)) + np.arange(4, dtype=np.float32)
    y = [1, -100, 3]
    want = F.nll_loss(torch.tensor(lp), torch.tensor(y)).numpy()
    np.testing.assert_allclose(Tensor(lp).nll_loss(Tensor(y)).numpy(), want, rtol=1e-6)


# ------------------------------------------------------------------ item 2: mask writes
MASK = [True, False, True, False]


@pytest.mark.parametrize("dtype,values", [(np.uint8, [300, 5]), (np.int8, [200, 5]),
                                          (np.int8, [-129, 0]), (np.uint8, [1e9, 0.0])])
def test_mask_write_of_values_the_dtype_cannot_hold_is_refused(dtype, values):
    t = torch.arange(4).to(getattr(torch, np.dtype(dtype).name))
    with pytest.raises(RuntimeError):  # torch: "Index put requires the ... dtypes match"
        t[torch.tensor(MASK)] = torch.tensor(values)
    x = Tensor(np.arange(4, dtype=dtype))
    with pytest.raises(OverflowError, match=r"t\[mask\] = value"):
        x[Tensor(MASK)] = Tensor(np.array(values))
    np.testing.assert_array_equal(x.numpy(), np.arange(4))  # (nothing written)


def test_mask_write_of_values_it_holds_still_agrees():
    t = torch.arange(4).to(torch.uint8)
    t[torch.tensor(MASK)] = torch.tensor([250, 7]).to(torch.uint8)
    x = Tensor(np.arange(4, dtype=np.uint8))
    x[Tensor(MASK)] = Tensor([250, 7])
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    # a slice write is a copy, which wraps, as torch's copy_ does
    t[0:2] = torch.tensor([300, 5])
    x[0:2] = Tensor([300, 5])
    np.testing.assert_array_equal(x.numpy(), t.numpy())


# ------------------------------------------------------------------ item 3: lists of arrays
ARRAY_LISTS = [
    lambda: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    lambda: [np.array([1, 2], np.int64)] * 2,
    lambda: [np.array([1, 2], np.int8), np.array([3, 4], np.int8)],
    lambda: [np.array([1, 2], np.float16), np.array([3, 4], np.float16)],
    lambda: [np.array([1, 2], np.uint8), np.array([1.5, 2.0])],
    lambda: [[np.array([1, 2], np.int16)], [np.array([3, 4], np.int16)]],
    lambda: [np.array([1, 2], np.int8), np.array([3, 4], np.int64)],
]


@pytest.mark.parametrize("case", range(len(ARRAY_LISTS)))
def test_a_list_of_numpy_arrays_keeps_their_dtype(case):
    data = ARRAY_LISTS[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: "a list of numpy.ndarrays is slow")
        want = torch.tensor(data)
    got = Tensor(data)
    assert got.dtype.np == want.numpy().dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ------------------------------------------------------------------ item 4: var/std
VAR_CASES = [([1.0, 2.0, 4.0], 3), ([1.0, 2.0, 4.0], 5), ([3.0], 2), ([2.0, 2.0], 3),
             ([[1.0, 5.0], [2.0, 2.0]], 2), ([[1.0, 5.0], [2.0, 2.0]], 3),
             ([[1.0, 5.0, 0.5], [2.0, 2.0, 7.0]], 1), ([1.0, 2.0, 4.0], 0)]


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("case", range(len(VAR_CASES)))
def test_var_std_with_a_large_correction_agree_forward_and_backward(fn, case):
    data, correction = VAR_CASES[case]
    for dt in (np.float32, np.float64):
        a = np.array(data, dt)
        t = torch.tensor(a, requires_grad=True)
        want = getattr(t, fn)(dim=-1, correction=correction)
        want.sum().backward()
        x = Tensor(a, requires_grad=True)
        got = getattr(x, fn)(-1, correction=correction)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(got.sum().gradient(x)[0].numpy(), t.grad.numpy(), rtol=1e-5)


def test_var_over_all_axes_with_correction_n():
    a = np.array([[1.0, 2.0], [4.0, 8.0]], np.float32)
    t = torch.tensor(a, requires_grad=True)
    # (torch's var with no dim gives +inf at every place here, and at correction=6 too, where
    # its own analytic gradient, which dim=(0, 1) gives, is -inf, -inf, inf, inf and finite)
    want = t.var(dim=(0, 1), correction=4)
    want.backward()
    x = Tensor(a, requires_grad=True)
    got = x.var(correction=4)
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    np.testing.assert_array_equal(got.gradient(x)[0].numpy(), t.grad.numpy())


# ------------------------------------------------------------------ item 5: the hunt
# Hand-written programs over the classes the earlier hunts did not cover, against torch, on
# both schedulers. (Of ~740 run, all agree but for documented choices, which are not listed
# here: numpy's dtypes where torch's differ, int32 / 4 float64; numpy's -0.0 rules for % and
# MAX/MIN; sign(NaN) NaN; x ** 0.5 as sqrt; a flip is a view; overlapping `+=` reads first.)
_R = np.random.RandomState(1)
A3 = _R.randn(3, 4, 5).astype(np.float32)
JI = np.array([[3, -3, 7, -7], [2, -2, 5, -5], [-2147483648, -1, 4, -4]], np.int32)
NANS = np.array([1.0, np.nan, -np.inf, 0.0, -0.0, np.inf, 2.0], np.float32)
TIES = np.array([[1.0, 3.0, 3.0, -2.0], [0.0, 0.0, 0.0, 0.0], [-1.0, 5.0, 2.0, 5.0]], np.float32)
EMPTY = np.zeros((2, 0, 3), np.float32)
COND = np.array([[True], [False], [True], [False]])


def _write(lib, kind):
    """An in-place op through a view (lib: Tensor or torch.tensor): the base sees it."""
    x = lib(A3[0].copy())
    if kind == 0:
        v = x[1:3]
        v += 1
    elif kind == 1:
        v = x[:, ::2]
        v *= 2
    elif kind == 2:
        v = x.T
        v -= 3
    elif kind == 3:
        x[1:][0] = 5.0
    elif kind == 4:
        x[2:, 1:][0, 0] = 7.0
    elif kind == 5:
        v = x.permute(1, 0)
        v[0] = 1.0
    elif kind == 6:
        v = x.reshape(20)[3:9]
        v += 100
    elif kind == 7:
        x[x > 0] *= -1
    return x


HUNT = {
    "sum -2 keepdim": (lambda t: t(A3).sum(-2, keepdim=True), None),
    "mean (0, -1) keepdim": (lambda t: t(A3).mean((0, -1), keepdim=True), None),
    "max -1 keepdim": (lambda t: t(A3).max(-1, keepdim=True), "amax"),
    "std -3": (lambda t: t(A3).std(-3), None),
    "logsumexp -2 keepdim": (lambda t: t(A3).logsumexp(-2, keepdim=True), None),
    "int prod -1": (lambda t: t(JI[:2]).prod(-1), None),
    "any -1 keepdim": (lambda t: (t(A3) > 1).any(-1, keepdim=True), None),
    "argmax ties keepdim": (lambda t: t(TIES).argmax(-1, keepdim=True), "index"),
    "argmin ties dim 0": (lambda t: t(TIES).argmin(0), "index"),
    "int // -3": (lambda t: t(JI) // -3, None),
    "int % -3": (lambda t: t(JI) % -3, None),
    "int % tensor": (lambda t: t(JI) % t(JI[::-1].copy()), None),
    "7 // int": (lambda t: 7 // t(JI[:2]), None),
    "int min // -1": (lambda t: t(JI) // -1, None),
    "int8 % int8": (lambda t: t(JI[:2].astype(np.int8)) % t(np.int8(-3)), None),
    "div trunc": (lambda t: t(JI).div(t(JI[::-1].copy()), rounding_mode="trunc"), None),
    "float // -0.7": (lambda t: t(A3).div(-0.7, rounding_mode="floor"), None),
    "fmod int": (lambda t: t(JI).fmod(-3), None),
    "float % -1.5": (lambda t: t(A3) % -1.5, None),
    "nan <": (lambda t: t(NANS) < t(NANS[::-1].copy()), None),
    "nan !=": (lambda t: t(NANS) != t(NANS[::-1].copy()), None),
    "nan >= nan": (lambda t: t(NANS) >= float("nan"), None),
    "maximum nan": (lambda t: t(NANS).maximum(t(NANS[::-1].copy())), None),
    "max nan": (lambda t: t(NANS).max(), None),
    "argmax nan": (lambda t: t(NANS).argmax(), "index"),
    "cummax nan": (lambda t: t(NANS).cummax(0)[0], None),
    "clamp nan": (lambda t: t(NANS).clamp(-1, 1), None),
    "where broadcast": (lambda t: t(COND).where(t(A3[0]), t(A3[1, :, :1])), "where"),
    "where int int": (lambda t: t(COND).where(t(JI[0]), 7), "where"),
    "where int8 int16": (lambda t: t(COND).where(t(JI[0].astype(np.int8)),
                                                 t(JI[1].astype(np.int16))), "where"),
    "where 3d cond": (lambda t: t(A3 > 0).where(t(A3[0]), -1.0), "where"),
    "pad reflect": (lambda t: t(A3[:1]).pad((2, 1, 1, 0), mode="reflect"), "pad"),
    "pad replicate": (lambda t: t(A3[:1]).pad((3, 3, 2, 2), mode="replicate"), "pad"),
    "pad circular negative": (lambda t: t(A3[:1]).pad((-1, 2), mode="circular"), "pad"),
    "pad constant negative": (lambda t: t(A3[0]).pad((-1, -2, 1, -1)), "pad"),
    "pad int reflect": (lambda t: t(JI[None].astype(np.int64)).pad((1, 2), mode="reflect"), "pad"),
    "cumsum empty axis": (lambda t: t(EMPTY).cumsum(1), None),
    "cumprod size-1 axis": (lambda t: t(A3[:, :1, 0]).cumprod(1), None),
    "logcumsumexp -1": (lambda t: t(A3).logcumsumexp(-1), None),
    "cummin empty": (lambda t: t(EMPTY).cummin(1)[0], None),
    "cumsum 0-d": (lambda t: t(np.float32(3)).cumsum(0), None),
    "sum empty keepdim": (lambda t: t(EMPTY).sum(1, keepdim=True), None),
    "mean empty": (lambda t: t(EMPTY).mean(1), None),
    "all empty": (lambda t: t(EMPTY).all(-2, keepdim=True), None),
    "bool * int8": (lambda t: t(COND[:, 0]) * t(JI[0].astype(np.int8)), None),
    "uint8 - int8": (lambda t: t(np.array([1, 2, 250], np.uint8))
                     - t(np.array([1, -2, 3], np.int8)), None),
    "int8 + f16": (lambda t: t(np.array([1, -2, 3], np.int8)) + t(np.array([0.5, 1.5, -2],
                                                                            np.float16)), None),
    "f16 * f64": (lambda t: t(np.array([0.5, 1.5, -2], np.float16)) * t(np.array([0.1, 0.2, 0.3])),
                  None),
    "bool > 1": (lambda t: t(COND[:, 0]) > 1, None),
    **{f"write through a view {k}": ((lambda t, k=k: _write(t, k)), "write") for k in range(8)},
}


def _torch_form(fn, kind):
    """The program as torch spells it (its Tensor(...) is torch.tensor; a few names differ)."""
    def lib(a):
        return torch.tensor(a)
    if kind == "amax":
        return lambda: torch.tensor(A3).amax(-1, keepdim=True)
    if kind == "where":
        class Where:  # (torch's where is a function of the condition)
            def __init__(self, a): self.tt = torch.tensor(a)
            def where(self, x, y):
                return torch.where(self.tt, x.tt if isinstance(x, Where) else x,
                                   y.tt if isinstance(y, Where) else y)
        return lambda: fn(Where)
    if kind == "pad":
        class Pad:
            def __init__(self, a): self.tt = torch.tensor(a)
            def pad(self, p, mode="constant"): return F.pad(self.tt, p, mode=mode)
        return lambda: fn(Pad)
    return lambda: fn(lib)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("name", list(HUNT))
def test_hunt_program_agrees_with_torch(name, scheduler):
    fn, kind = HUNT[name]
    want = _torch_form(fn, kind)()
    want = want.tt if hasattr(want, "tt") else want
    want = want.numpy()
    got = fn(Tensor).realize(scheduler=scheduler).numpy()
    assert got.shape == want.shape
    if kind != "index":  # (an index is int32 here, int64 in torch)
        assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5,
                               atol=1e-6, equal_nan=True)
    if got.dtype.kind == "f":  # the sign of every zero
        np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0]))
