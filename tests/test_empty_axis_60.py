"""twice60 (issue 31): max, min, argmax and argmin over an empty axis. They gave the reduction's
identity (-inf, +inf; argmax an index past the end) where numpy and torch raise: an empty axis
has no element to give. They now raise InvalidArgument (a ValueError) naming the op and the
axis (also where the output is empty, as both do); softmax, log_softmax and logsumexp over an
empty axis keep giving what torch's give (an empty tensor; -inf). torch and numpy are the
oracles.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")

# (shape, axis): each reduces an empty axis to an output with elements, tiny to prime-sized;
# axis None reduces them all (one element out)
REFUSED = [((3, 0), 1), ((0, 5), 0), ((1, 0), -1), ((7, 0, 11), 1), ((2, 3, 0), (1, 2)),
           ((3, 0), None), ((0,), 0), ((0,), None)]
OPS = {  # ours, torch's
    "max": (lambda t, a: t.max(a), lambda t, a: t.amax(a) if a is not None else t.max()),
    "min": (lambda t, a: t.min(a), lambda t, a: t.amin(a) if a is not None else t.min()),
    "argmax": (lambda t, a: t.argmax(a), lambda t, a: t.argmax(a)),
    "argmin": (lambda t, a: t.argmin(a), lambda t, a: t.argmin(a)),
}


def _int_axis(axis):  # argmax takes one axis, as torch's
    return axis[0] if isinstance(axis, tuple) else axis


# (argmax and argmin take one axis: the first of a tuple, kept only where it is the empty one)
PICKS = [(op, shape, axis) for op in OPS for shape, axis in REFUSED
         if not op.startswith("arg") or (a := _int_axis(axis)) is None or shape[a] == 0]


@pytest.mark.parametrize("op, shape, axis", PICKS, ids=lambda v: str(v))
def test_a_pick_over_an_empty_axis_raises_as_torchs(op, shape, axis):
    ours, theirs = OPS[op]
    axis = _int_axis(axis) if op.startswith("arg") else axis
    with pytest.raises((IndexError, RuntimeError)):
        theirs(torch.zeros(shape), axis)
    for dt in (np.float32, np.int32):
        with pytest.raises(ValueError, match=rf"{op} over the empty axis \d") as err:
            ours(Tensor(np.zeros(shape, dt)), axis)
        assert str(shape[0]) in str(err.value)  # (the shape is named)


@pytest.mark.parametrize("shape, axis", [((0, 0), 1), ((0, 3), 0), ((2, 0, 0), 2)])
def test_an_empty_output_over_an_empty_axis_raises_too(shape, axis):
    """Where the output is empty too: numpy and torch raise (`np.zeros((0, 0)).max(1)`)."""
    a = np.zeros(shape, np.float32)
    for op in OPS:
        with pytest.raises((IndexError, RuntimeError)):
            OPS[op][1](torch.tensor(a), axis)
        with pytest.raises(ValueError):
            getattr(np, op)(a, axis)
        with pytest.raises(ValueError, match=f"{op} over the empty axis {axis}"):
            OPS[op][0](Tensor(a), axis)


@pytest.mark.parametrize("shape, axis", [((0, 3), 1), ((3, 0), 0), ((2, 0, 5), 2)])
def test_a_pick_over_a_full_axis_of_an_empty_tensor_is_empty_as_numpys(shape, axis):
    a = np.zeros(shape, np.float32)
    for op in OPS:
        got, want = OPS[op][0](Tensor(a), axis).numpy(), getattr(np, op)(a, axis)
        assert got.shape == want.shape and got.size == 0, op


@pytest.mark.parametrize("shape, axis", [((3, 0), 1), ((3, 0), 0), ((0, 4), 1), ((2, 0, 7), 1),
                                         ((2, 0, 7), -1), ((1, 0), -1)])
def test_softmax_log_softmax_and_logsumexp_over_an_empty_axis_are_torchs(shape, axis):
    a = np.zeros(shape, np.float32)
    t = torch.zeros(shape)
    for name in ("softmax", "log_softmax", "logsumexp"):
        got = getattr(Tensor(a), name)(axis).numpy()
        want = getattr(t, name)(axis).numpy()
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    got = Tensor(a).logsumexp(axis, keepdim=True).numpy()
    np.testing.assert_array_equal(got, t.logsumexp(axis, keepdim=True).numpy())


def test_logsumexp_over_all_of_an_empty_tensor_is_torchs():
    got = Tensor(np.zeros((3, 0), np.float32)).logsumexp().numpy()
    assert got.shape == () and got == torch.zeros(3, 0).logsumexp((0, 1)).item() == -np.inf


def test_attention_with_no_keys_is_torchs():
    """A masked attention over no keys: torch's gives 0s (its safe softmax); its max over the
    empty key axis is a shift, not a pick."""
    q, k = np.ones((1, 2, 4), np.float32), np.zeros((1, 0, 4), np.float32)
    mask = np.zeros((2, 0), bool)
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(k), attn_mask=Tensor(mask))
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(k), torch.tensor(k), attn_mask=torch.tensor(mask))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
