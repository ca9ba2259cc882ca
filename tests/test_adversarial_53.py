"""adv53's hunt (issue 31): wrong answers and refusals of ordinary programs at the edges of
ops, on programs the project had not seen. numpy is the oracle for values and dtypes, torch for
gradients.

clip of an integer tensor with a Python int bound outside its dtype (`uint8.clip(-5, 5)`,
`int8.clip(-1000, 1000)`) raised OverflowError; numpy 2 drops such a bound (it clips nothing)
and raises only where the bound would clip everything (`uint8.clip(300, 400)`).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)  # NaN where NaN, inf where inf


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_int_clip_with_python_int_bounds_outside_the_dtype_is_numpys(dt):
    info = np.iinfo(dt)
    x = np.array([info.min, info.min + 1, 0, 1, 5, 100, info.max - 1, info.max], dt)
    x = np.stack([x, x[::-1]])
    wide = [info.min - 1, -(2**70), info.max + 1, 2**70, 2**64]
    bounds = [(lo, hi) for lo in [None, -5, 0, 3, *wide] for hi in [None, 5, 100, *wide]]
    for lo, hi in bounds:
        if lo is None and hi is None:
            continue
        try:
            want = np.clip(x, lo, hi)
        except OverflowError:  # a bound that would clip every value: numpy refuses it too
            with pytest.raises(OverflowError):
                Tensor(x).clip(lo, hi).numpy()
            continue
        _same(Tensor(x).clip(lo, hi).numpy(), want)


INF, NAN = float("inf"), float("nan")


def _grad_vs_torch(fn, x: np.ndarray, upstream: np.ndarray, torch_fn=None) -> None:
    torch = pytest.importorskip("torch")
    X = Tensor(x).requires_grad_()
    (fn(X) * Tensor(upstream)).sum().backward()
    t = torch.tensor(x, requires_grad=True)
    ((torch_fn or fn)(t) * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(X.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("bad", [INF, -INF, NAN])
def test_cumprod_gradient_before_a_single_zero_ignores_a_nonfinite_gradient_past_it(bad):
    """Before the first zero k, torch's cumprod gradient sums g[i] * out[i] / x[j] over i < k
    only (every product from k on holds x[k] = 0 exactly): a non-finite g[i] past k adds
    nothing there. Ours multiplied it by the 0 it carries for the second derivative: NaN."""
    rows = np.array([[2.0, 0.0, 3.0, 4.0, 5.0], [0.5, -3.0, 0.0, 2.0, 7.0],
                     [1.5, 2.0, -1.0, 0.0, 3.0], [0.0, 2.0, 3.0, 4.0, 5.0]])
    for col in range(5):
        up = np.arange(1.0, 21.0).reshape(4, 5)
        up[:, col] = bad
        _grad_vs_torch(lambda t: t.cumprod(1), rows, up)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_prod_gradient_of_a_slice_with_a_zero_and_a_nonfinite_is_the_product_of_the_others(axis):
    """torch.prod's gradient where a slice holds a zero is the product of the others, exactly:
    [0, inf, 3] gives [inf, 0 (= 0 * 3), NaN (= 0 * inf)]. Ours divided the product (0 * inf,
    NaN) by x: NaN at every element but the zero."""
    slices = [[0.0, INF, 3.0], [0.0, NAN, 2.0], [0.0, 0.0, INF], [-INF, 0.0, -2.0],
              [1e200, 0.0, 1e200], [0.0, -2.0, 3.0], [0.0, 0.0, 5.0], [INF, INF, 0.0]]
    for s in slices:
        x = np.array([s, [s[2], s[0], s[1]]])  # the zero first and in the middle
        x = x.T if axis == 0 else x[:1] if axis is None else x
        up = np.array(2.5) if axis is None else np.array([3.0, -0.5])
        # (torch's prod() of a whole tensor with two zeros gives 0s, but only outside grad
        # mode: the NaN of 0 * inf with create_graph; prod(dim) always gives the latter)
        _grad_vs_torch(lambda t: t.prod() if axis is None else t.prod(axis), x, up,
                       lambda t: t.reshape(-1).prod(0) if axis is None else t.prod(axis))


def _empty_programs(a: np.ndarray):
    """(name, ours, numpy's) programs whose kernels hold a loop of 0 trips."""
    z = np.zeros((0, 5), np.float32)
    yield "padded transpose shrunk to (0, 0)", \
        lambda: Tensor(a).T.pad(((0, 2), (0, 0))).shrink(((0, 0), (1, 1))), \
        lambda: np.zeros((0, 0), np.float32)
    yield "strided flip shrunk to (0, 2)", \
        lambda: Tensor(a).T.flip(0)[:, ::2].pad(((0, 2), (0, 0))).shrink(((3, 3), (0, 2))), \
        lambda: np.zeros((0, 2), np.float32)
    yield "transposed rows shrunk to (4, 0)", \
        lambda: Tensor(a).T.pad(((1, 1), (0, 0))).shrink(((0, 4), (2, 2))), \
        lambda: np.zeros((4, 0), np.float32)
    yield "sum over an empty axis of a transpose", \
        lambda: Tensor(z).T.pad(((0, 0), (0, 0))).sum(1), lambda: z.T.sum(1)
    yield "matmul with k = 0", lambda: Tensor(z.T) @ Tensor(z), lambda: z.T @ z
    yield "running sum of an empty transpose", lambda: Tensor(z).T.cumsum(1), \
        lambda: z.T.cumsum(1)


@pytest.mark.parametrize("case", range(6))
def test_kernels_with_a_loop_of_zero_trips_run(case):
    """A kernel whose output (or reduce) loop has 0 trips reached the optimizer, whose
    transpose action took the max over an empty set of cache sets: a bare ValueError for
    `x.T.pad(...).shrink(((0, 0), (1, 1)))`, a (0, 0) tensor in numpy."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    name, ours, want = list(_empty_programs(a))[case]
    _same(ours().numpy(), want())


@pytest.mark.parametrize("n", [2, 5, 20, 33])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax"])
def test_a_scan_written_across_a_broadcast_axis_is_numpys(n, op):
    """A running scan whose output is stored with its scan loop outside a loop its input does
    not read (a broadcast axis: `x.unsqueeze(1).expand(2, 2, n).cumsum(2).transpose(0, 2)`)
    kept one accumulator per point of the loops it reads only: each pass of the broadcast
    loop added the same term again (1, 4, 9, 16 for numpy's 1, 3, 6, 10)."""
    c = np.stack([np.arange(n) % 7 + 1, (np.arange(n) % 5 + 1) * 0.5]).astype(np.float64)
    scan = {"cumsum": np.cumsum, "cumprod": np.cumprod,
            "cummax": np.maximum.accumulate}[op]
    mid = np.broadcast_to(c[:, None], (2, 3, n))
    front = np.broadcast_to(c[None], (3, 2, n))

    def ours(t: Tensor, axis: int) -> Tensor:
        out = getattr(t, op)(axis)
        return out[0] if isinstance(out, tuple) else out

    programs = [
        (ours(Tensor(c).unsqueeze(1).expand(2, 3, n), 2).transpose(0, 2),
         scan(mid, axis=2).transpose(2, 1, 0)),
        (ours(Tensor(c).unsqueeze(1).expand(2, 3, n) + 0, 2).permute(2, 0, 1),
         scan(mid, axis=2).transpose(2, 0, 1)),
        (ours(Tensor(c).unsqueeze(0).expand(3, 2, n).permute(2, 0, 1), 0),
         scan(front.transpose(2, 0, 1), axis=0)),
    ]
    for got, want in programs:
        _same(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32],
                         ids=lambda d: np.dtype(d).name)
def test_a_reduce_over_padding_only_is_its_identity(dt):
    """A reduce whose every element is padding (a shrink inside a pad on two axes): for ints
    the optimizer's symbolic folds took its update acc + 0 to acc, and the renderer met a
    REDUCE out of loop form (a RenderError for `x.pad(((1, 1), (1, 1)))[0:1, 0:3].sum(1)`)."""
    a = (np.arange(24).reshape(4, 6) * 7 % 11 - 5).astype(dt)
    p = np.pad(a, ((1, 1), (1, 1)))
    for region in [((0, 1), (0, 3)), ((0, 6), (0, 1)), ((5, 6), (2, 8)), ((0, 1), (0, 8))]:
        t = Tensor(a).pad(((1, 1), (1, 1))).shrink(region)
        w = p[tuple(slice(lo, hi) for lo, hi in region)]
        for got, want in ((t.sum(1), w.sum(1)), (t.sum(), w.sum()), (t.prod(0), w.prod(0)),
                          (t.max(1), w.max(1)), (t.cast(np.int64).sum(0), w.astype(np.int64)
                                                 .sum(0))):
            _same(got.numpy(), np.asarray(want))
