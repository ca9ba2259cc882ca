"""grad44 (issue 31 leftovers): realizing a view keeps it a view.

`Tensor.realize(a, h)` with h a reshape, permute, expand, shrink or flip of a (or h and k two
views of one value) made each a buffer of its own: a later assign into a was not seen by h, as
it is by torch's views. A view of a realized buffer is realized already (tinygrad's too); one
of a lazy value another tensor holds is realized with that value. A pad is a copy, in torch and
here (an assign's readers keep the old value). The oracle: torch's views.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")
A = np.arange(12, dtype=np.float32)
NEW = A * 10 - 3
VIEWS = {
    "reshape": lambda t: t.reshape(3, 4),
    "permute": lambda t: t.reshape(3, 4).permute(1, 0),
    "expand": lambda t: t.reshape(1, 12).expand(2, 12),
    "shrink": lambda t: t[2:9],
    "flip": lambda t: t.reshape(3, 4).flip(1),
    "chain": lambda t: t.reshape(2, 3, 2).permute(2, 0, 1)[:, 1:].flip(0),
}
TORCH = {
    "reshape": lambda t: t.reshape(3, 4),
    "permute": lambda t: t.reshape(3, 4).permute(1, 0),
    "expand": lambda t: t.reshape(1, 12).expand(2, 12),
    "shrink": lambda t: t[2:9],
    "flip": lambda t: t.reshape(3, 4).flip(1),  # (torch.flip copies: of the new value, a view)
    "chain": lambda t: t.reshape(2, 3, 2).permute(2, 0, 1)[:, 1:].flip(0),
}


def _base(kind):
    return {"lazy": lambda: Tensor(A) + 1, "realized": lambda: Tensor(A + 1),
            "lazy 2d": lambda: (Tensor(A) + 1).reshape(2, 6).reshape(12)}[kind]()


@pytest.mark.parametrize("kind", ["lazy", "realized", "lazy 2d"])
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("how", ["with its base", "base after", "two views", "alone"])
def test_a_realized_view_sees_a_later_assign_into_its_base(kind, view, how):
    a = _base(kind)
    h = VIEWS[view](a)
    k = a.reshape(4, 3)[1:]
    {"with its base": lambda: Tensor.realize(a, h), "base after": lambda: Tensor.realize(h, a),
     "two views": lambda: Tensor.realize(h, k), "alone": lambda: h.realize()}[how]()
    np.testing.assert_array_equal(h.numpy(), TORCH[view](torch.tensor(A + 1)).numpy())
    a.assign(Tensor(NEW))
    np.testing.assert_array_equal(h.numpy(), TORCH[view](torch.tensor(NEW)).numpy())
    if how == "two views":  # (k is realized: a view too. Unrealized, a lazy k built from a
        # lazy a computes from a's graph: a reader, which an assign keeps on the old value)
        np.testing.assert_array_equal(k.numpy(), NEW.reshape(4, 3)[1:])


def test_a_write_through_one_view_is_seen_by_the_other_and_the_base():
    a = Tensor(A) * 2
    h, k = a.reshape(3, 4), a[4:8]
    Tensor.realize(h, k)
    h[1].assign(Tensor(np.full(4, -1.0, np.float32)))  # (row 1 of h is a[4:8])
    want = A * 2
    want[4:8] = -1
    np.testing.assert_array_equal(k.numpy(), want[4:8])
    np.testing.assert_array_equal(a.numpy(), want)


def test_a_pad_realized_with_its_base_is_a_copy_as_in_torch():
    a = Tensor(A) + 1
    p = a.pad(((1, 2),))
    Tensor.realize(a, p)
    a.assign(Tensor(NEW))
    np.testing.assert_array_equal(p.numpy(), np.pad(A + 1, (1, 2)))
