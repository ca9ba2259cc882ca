"""adv54's hunt (issue 31): wrong answers on programs the project had not seen. numpy is the
oracle for values, shapes and dtypes.

Indexing: with a tensor index present, numpy reads every int of the index as an advanced index
too, so `b[:, [0, 1], :, 0]` has two advanced indices that a slice separates and their axes
go first (shape (2, 2, 4), the pairs' axis leading). Ours applied the int as a basic index
first and kept the tensor index's axis in place: the same shape, transposed values. A boolean
mask among other indices (`b[mask, 1]`, `b[1:, mask]`) was refused; numpy reads it as the int
arrays of its True coordinates.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from rulegrad import Tensor

B = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) - 60


def _as_index(k: tuple) -> tuple:
    return tuple(Tensor(i) if isinstance(i, np.ndarray) else i for i in k)


def _same_index(b: np.ndarray, k: tuple) -> None:
    want = b[k]
    got = Tensor(b)[_as_index(k)].numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (k, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


INT_AMONG_TENSORS = [
    (slice(None), [0, 1], slice(None), 0),  # same shape as the wrong answer: values transposed
    (0, slice(None), [1, 2]),
    (slice(None), 0, slice(None), [1, 2]),
    (None, [0, 1], None, 0),
    (1, None, [1, 0]),
    (slice(None), 1, None, [1, 0]),
    ([1, 0], Ellipsis, 2),
    (slice(None), 0, [1, 2]),  # adjacent: the axes stay in place
    (0, [0, 1], [1, 2]),
    (slice(None), [[0], [2]], 1, slice(None)),
]


@pytest.mark.parametrize("k", INT_AMONG_TENSORS, ids=repr)
def test_an_int_among_tensor_indices_is_an_advanced_index_as_in_numpy(k):
    _same_index(B, k)


M3 = np.array([True, False, True])
M4 = np.array([False, True, True, False])
M34 = (np.arange(12).reshape(3, 4) % 3) == 0
MASKED = [
    (slice(None), M3, 1),
    (slice(None), slice(None), M4),
    (1, M3, slice(None), [1, 4]),
    (Ellipsis, np.array([True, False, True, True, False])),
    (0, M34, 2),
    (slice(None, None, -1), M34),
    (None, 1, M3, None, 0),
    (M3[:2], Ellipsis, -1),
    (slice(None), np.zeros(3, bool), 1),  # no element picked
    (slice(None), M3, [[0], [2]]),  # the mask's coordinates broadcast with the list
    (None, np.eye(2, 3, dtype=bool), Ellipsis, np.array([True, False, False, True, False])),
]


@pytest.mark.parametrize("k", MASKED, ids=repr)
def test_a_boolean_mask_among_other_indices_is_numpys(k):
    _same_index(B, k)


def test_a_boolean_mask_of_the_wrong_shape_among_other_indices_is_refused_with_its_axes():
    with pytest.raises(IndexError, match=r"boolean index of shape \(2,\).*axes \(3,\)"):
        Tensor(B)[0, np.array([True, False])]


def _random_index(rng: random.Random, shape: tuple) -> tuple:
    items, ax = [], 0
    while ax < len(shape) and rng.random() < 0.9:
        r, n = rng.random(), shape[ax]
        if r < 0.2:
            items.append(rng.randint(-n, n - 1))
        elif r < 0.4:
            items.append(slice(rng.choice([None, 0, 1, -1]), rng.choice([None, n, -1, 2]),
                               rng.choice([None, 1, 2, -1, -2])))
        elif r < 0.6:
            items.append(np.array([rng.randint(-n, n - 1) for _ in range(rng.randint(1, 3))]))
        elif r < 0.75:
            k = rng.randint(1, min(2, len(shape) - ax))
            items.append(np.array([rng.random() < 0.5 for _ in range(
                int(np.prod(shape[ax:ax + k])))]).reshape(shape[ax:ax + k]))
            ax += k - 1
        elif r < 0.85:
            items.append(None)
            ax -= 1
        elif Ellipsis not in [i for i in items if i is Ellipsis]:
            items.append(Ellipsis)
            ax = rng.choice([ax - 1, len(shape) - 1])
        ax += 1
    return tuple(items)


@pytest.mark.parametrize("seed", range(4))
def test_mixed_index_tuples_sweep_against_numpy(seed):
    """Ints, slices with any step, int arrays, masks of 1-2 axes, None and ... mixed, over
    shapes of 1-4 axes (1s, primes): each read as numpy reads it, or refused as numpy refuses."""
    rng = random.Random(seed)
    for _ in range(40):
        shape = tuple(rng.choice([1, 2, 3, 5]) for _ in range(rng.randint(1, 4)))
        b = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7
        k = _random_index(rng, shape)
        try:
            b[k]
        except IndexError:
            with pytest.raises(IndexError):
                Tensor(b)[_as_index(k)].numpy()
            continue
        _same_index(b, k)


SLICES_OFF_THE_SYMBOLIC_AXIS = {
    "t[:, 1:3]": lambda t: t[:, 1:3],
    "t[:, ::2]": lambda t: t[:, ::2],
    "t[..., -1]": lambda t: t[..., -1],
    "t[:, 4:0:-2]": lambda t: t[:, 4:0:-2],
    "t.T[2:5]": lambda t: t.T[2:5],
}


@pytest.mark.parametrize("bound", [1, 7, 13])
@pytest.mark.parametrize("name", list(SLICES_OFF_THE_SYMBOLIC_AXIS))
def test_gradient_of_a_slice_that_keeps_the_symbolic_axis_whole_is_torchs(name, bound):
    """A leaf of symbolic shape (n, 6) sliced along its concrete axis: the slice's gradient
    pads by constants along that axis and by nothing along n. It was refused as "a shrink to a
    symbolic size", the shape printed as a raw node (`(<BIND index ...>, 6)`)."""
    torch = pytest.importorskip("torch")
    from rulegrad import Variable

    a = np.random.default_rng(bound).standard_normal((13, 6))
    n = Variable("n", 1, 13).bind(bound)
    w = Tensor(a).shrink(((0, n), None)).realize().requires_grad_()
    up = np.arange(1.0, 79.0).reshape(13, 6)  # the upstream gradient, of the leaf's shape
    fn = SLICES_OFF_THE_SYMBOLIC_AXIS[name]
    (fn(w).exp() * fn(Tensor(up).shrink(((0, n), None)))).sum().backward()
    t = torch.tensor(a[:bound], requires_grad=True)
    tfn = {"t[:, 4:0:-2]": lambda x: x[:, 2:5:2].flip(1)}.get(name, fn)
    (tfn(t).exp() * tfn(torch.tensor(up[:bound]))).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=0)


def test_gradient_through_a_shrink_of_the_symbolic_axis_is_refused_with_a_shown_shape():
    from rulegrad import Variable
    from rulegrad.runtime.autograd import GradientError

    n = Variable("n", 2, 13).bind(5)
    w = Tensor(np.ones((13, 6))).shrink(((0, n), None)).realize().requires_grad_()
    with pytest.raises(GradientError, match=r"axis 0 to 1:5, from shape \(n=5, 6\)") as info:
        w[1:].sum().backward()
    assert "BIND" not in str(info.value)


MISMATCHED_WITH_A_SYMBOLIC_SHAPE = {
    "mul": lambda w, c: w * c,
    "where": lambda w, c: (w > 0).where(c, w),
    "maximum": lambda w, c: w.maximum(c),
    "add 13": lambda w, c: w + Tensor(np.ones((13, 4), np.float32)),
    "stack": lambda w, c: Tensor.stack(w, c),
    "cat": lambda w, c: c.cat(w, dim=1),
}


@pytest.mark.parametrize("op", list(MISMATCHED_WITH_A_SYMBOLIC_SHAPE))
def test_shapes_that_do_not_match_a_symbolic_one_are_refused_in_words(op):
    """A symbolic size agrees only with itself: (n=7, 4) and (7, 4) do not broadcast. The
    broadcast's refusal sorted its sizes, an int against a UOp: a bare TypeError; stack and
    cat printed the shapes as raw nodes."""
    from rulegrad import Variable
    from rulegrad.runtime.errors import InvalidArgument

    n = Variable("n", 1, 13).bind(7)
    w = Tensor(np.ones((13, 4), np.float32)).shrink(((0, n), None))
    with pytest.raises(InvalidArgument) as info:
        MISMATCHED_WITH_A_SYMBOLIC_SHAPE[op](w, Tensor(np.ones((7, 4), np.float32))).numpy()
    text = str(info.value)
    assert "(n=7, 4)" in text and "BIND" not in text, text


def test_a_jitted_step_over_views_of_a_buffer_is_right_and_says_why_it_is_not_replayed():
    """Views as a jitted step's arguments (a transpose, a flip, a slice of a realized tensor)
    run the step as it is, each call right against numpy; the refusal named them "a sharded
    tensor"."""
    import rulegrad

    @rulegrad.jit
    def step(x, y):
        return (x * 2 + y).sum(0)

    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 5))
        A, B = Tensor(a).realize(), Tensor(b).realize()
        for (x, y), want in [((A, B.T), a * 2 + b.T), ((A.flip(0), B.T), a[::-1] * 2 + b.T),
                             ((A[1:4], B.T[2:5]), a[1:4] * 2 + b.T[2:5])]:
            np.testing.assert_allclose(step(x, y).numpy(), want.sum(0), rtol=1e-12)
    assert step.refused and all("view" in r and "sharded" in r for r in step.refused)


REFUSED_INDEX_ON_A_SYMBOLIC_SHAPE = {
    "w[5]": lambda w: w[5],
    "w[-4]": lambda w: w[-4],
    "w[:, 4]": lambda w: w[:, 4],
    "w[0, 0, 0]": lambda w: w[0, 0, 0],
    "w[w > 5]": lambda w: w[w > 5],
    "w[w[:, 0] > 5, 1]": lambda w: w[w[:, 0] > 5, 1],
    "stack dim 3": lambda w: Tensor.stack(w, w, dim=3),
    "flat pad": lambda w: w.pad((1, 1, 1, 1, 1, 1)),
    "pad per axis": lambda w: w.pad(((0, 0),)),
}


@pytest.mark.parametrize("op", list(REFUSED_INDEX_ON_A_SYMBOLIC_SHAPE))
def test_index_and_pad_refusals_show_a_symbolic_shape_as_name_and_value(op):
    """Out-of-range ints (numpy's IndexError at the bound value 3), too many indices, a stack
    dim or a padding that does not fit: each refusal printed the shape as raw nodes
    (`(<BIND index (DEFINE_VAR, 3)>, 4)`); it shows (n=3, 4). A boolean mask over the symbolic
    axis (its count of True is data) failed in a reshape or in nonzero: it names the mask."""
    from rulegrad import Variable

    n = Variable("n", 1, 13).bind(3)
    w = Tensor(np.arange(52, dtype=np.float32).reshape(13, 4)).shrink(((0, n), None))
    with pytest.raises((IndexError, ValueError)) as info:
        REFUSED_INDEX_ON_A_SYMBOLIC_SHAPE[op](w).numpy()
    text = str(info.value)
    assert ("(n=3, 4)" in text or "(n=3,)" in text) and "BIND" not in text, text
    assert "mask" in text or "mask" not in op, text


@pytest.mark.parametrize("bound", [1, 3, 13])
def test_a_concrete_mask_indexes_a_tensor_with_a_symbolic_axis_after_it(bound):
    """`x[mask]` with x of shape (4, n) and a mask over the concrete axis 0: numpy's rows of
    x where the mask holds. It flattened the axes past the mask, n among them, and failed in
    the reshape; it indexes by the mask's True coordinates instead."""
    from rulegrad import Variable

    a = np.arange(52, dtype=np.float32).reshape(13, 4)
    n = Variable("n", 1, 13).bind(bound)
    w = Tensor(a).shrink(((0, n), None)).T
    for m in ([True, False, True, True], [False] * 4, [True] * 4):
        _same_index_of(w, a[:bound].T, (np.array(m),))


def _same_index_of(t: Tensor, b: np.ndarray, k: tuple) -> None:
    want = b[k]
    got = t[_as_index(k) if len(k) > 1 else _as_index(k)[0]].numpy()
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
