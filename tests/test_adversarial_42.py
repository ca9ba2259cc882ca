"""rev42a's hunt over this round's front end (issue 31: no silent wrong answers): lazy records
(runtime/lazy.py, LazyTensor) and immortal small constants (runtime/uop.py). Each test checks
values against numpy and failed on the code the round started from."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from test_plans import _fresh_plans  # noqa: F401 - the autouse fixture, shared

from rulegrad import Tensor

_ROUND_TRIPS = {
    "pickle": lambda t: pickle.loads(pickle.dumps(t)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("how", list(_ROUND_TRIPS))
@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_pickled_and_copied_tensors_compute_and_assign(how, lazy):
    """A tensor of host data and an op over it, pickled or copied, give numpy's values and
    take an assign of their own shape and dtype (a lazy op's pickle failed: its class changed
    while pickle read it; a pickled dtype was a second float32, so assign refused it)."""
    rng = np.random.default_rng(0)
    for _ in range(3):  # (again: the later calls run the record's plan)
        x = rng.standard_normal((2, 3)).astype(np.float32)
        y = rng.standard_normal((2, 3)).astype(np.float32)
        t = Tensor(x) if lazy else Tensor(x, dtype="float32")
        u = _ROUND_TRIPS[how]((t * 2.0).exp())
        np.testing.assert_allclose(u.numpy(), np.exp(x * 2.0), rtol=1e-6)
        c = _ROUND_TRIPS[how](Tensor(x) if lazy else Tensor(x, dtype="float32"))
        s = c + Tensor(y)
        c.assign(Tensor(y, dtype="float32"))
        np.testing.assert_array_equal(c.numpy(), y)
        np.testing.assert_allclose(s.numpy(), x + y, rtol=1e-6)
        np.testing.assert_allclose((c * Tensor(x)).numpy(), y * x, rtol=1e-6)


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_a_copy_keeps_its_value_over_an_assign(how, lazy):
    """A copy of `t + 1` computes from t's buffer (copies share buffers); an assign to t
    after the copy keeps it on t's old contents, as it keeps the original: numpy's `x + 1`
    (the copy was not among the tensors the assign looks at, and read t's new values)."""
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((2, 3)).astype(np.float32)
        t = Tensor(x) if lazy else Tensor(x, dtype="float32")
        u = t + 1.0
        c = _ROUND_TRIPS[how](u)
        d = _ROUND_TRIPS[how]((t * 3.0).exp())
        t.assign(Tensor(np.zeros((2, 3), np.float32), dtype="float32"))
        np.testing.assert_allclose(u.numpy(), x + 1.0, rtol=1e-6)
        np.testing.assert_allclose(c.numpy(), x + 1.0, rtol=1e-6)
        np.testing.assert_allclose(d.numpy(), np.exp(x * 3.0), rtol=1e-6)
        np.testing.assert_array_equal(t.numpy(), np.zeros((2, 3), np.float32))


def test_a_copy_of_a_parameter_gets_its_gradient():
    """A copied tensor that requires a gradient gets one from backward (numpy: d sum(c*c)/dc
    = 2c); the copy was not among the tensors backward looks for."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0
    for how in ("copy", "pickle"):
        c = _ROUND_TRIPS[how](Tensor(x, requires_grad=True))
        (c * c).sum().backward()
        np.testing.assert_allclose(c.grad.numpy(), 2.0 * x)


def test_a_copied_subclass_keeps_its_attributes():
    """A user's Tensor subclass with attributes of its own copies them (`__setstate__` sets
    the instance dict as well as the slots)."""

    class Named(Tensor):
        pass

    x = np.arange(4, dtype=np.float32)
    t = Named(x)
    t.label = "w"
    for how in _ROUND_TRIPS.values():
        if how is _ROUND_TRIPS["pickle"]:
            continue  # (a local class does not pickle)
        c = how(t)
        assert type(c) is Named and c.label == "w"
        np.testing.assert_array_equal((c + 1.0).numpy(), x + 1.0)


class _Named(Tensor):
    """A user's subclass: its ops must take any Tensor as a tensor operand, not as a scalar."""


@pytest.mark.parametrize("make", [Tensor, _Named], ids=["host-data", "subclass"])
def test_tensor_operands_of_another_class_are_tensors(make):
    """scatter's src, clip's bounds and isclose's other, when self is a Tensor of host data (a
    LazyTensor record) or a user's subclass and the operand a computed Tensor: each is read as
    a tensor (scatter took a Tensor src for a fill value and raised; clip took a tensor bound
    for a constant, so no gradient reached it), against numpy and torch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 9))
    j = np.array([[0, 5, 2], [3, 1, 4]] * 2 + [[8, 6, 7]])
    s = Tensor(a) * 1.0  # (a computed, plain Tensor)
    got = make(np.zeros((5, 9))).scatter(1, Tensor(j.astype(np.int32)), s[:, :3]).numpy()
    want = np.zeros((5, 9))
    np.put_along_axis(want, j, a[:, :3], 1)
    np.testing.assert_array_equal(got, want)

    x = rng.standard_normal(7)
    hi = Tensor(np.full(7, 0.25), requires_grad=True)
    make(x).clip(-0.5, hi).sum().backward()
    th = torch.full((7,), 0.25, dtype=torch.float64, requires_grad=True)
    torch.from_numpy(x).clip(torch.full((7,), -0.5, dtype=torch.float64), th).sum().backward()
    np.testing.assert_array_equal(hi.grad.numpy(), th.grad.numpy())

    other = Tensor(x) + 1e-9
    np.testing.assert_array_equal(make(x).isclose(other).numpy(), np.isclose(x, x + 1e-9))
