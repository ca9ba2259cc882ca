"""hunt65 (issue 31): the last open items of the issue, against torch and numpy.

- A one-element tensor stored as a scalar (`masked_fill(m, Tensor(v))`, `t[mask] = Tensor(v)`,
  `t[mask, ...] = Tensor(v)`, `full`/`full_like` with a tensor value) is converted as torch
  converts it (`stored_scalar`): a cast wrapped uint8's Tensor(300) to 44 and NaN to 0 where
  torch refuses. (`t[i] = Tensor(v)`, `fill_` and `assign` are tensor copies in torch, which
  wrap as a cast: ours too.) A float32 item write past its range raises, as torch's.
- float16/float32 `prod` is within the reduction contract's stated bound, and differs from
  numpy's left-to-right order only within it or where numpy's partial products leave the range.
- `gen` refuses builtins given what they fail on (`sum(x)`, `abs(x)`, `max(x, y)` of nodes)
  and `x.alu(op, "s")`.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402

_ARRAYS = {"uint8": [1, 2, 200, 7], "int8": [1, -2, 100, -7], "int32": [1, -2, 3, 9],
           "bool": [True, False, False, True], "float16": [1.0, -2.0, 3.5, 0.0],
           "float32": [1.0, -2.0, 3.5, 0.0]}
# (value, the 0-d tensor's dtype)
_VALUES = [(300, "int64"), (-1, "int64"), (-129, "int64"), (-256, "int64"), (255, "int32"),
           (256, "int16"), (2**31, "int64"), (2.7, "float32"), (-0.5, "float32"),
           (255.9, "float32"), (300.0, "float64"), (1e10, "float32"), (float("nan"), "float32"),
           (float("inf"), "float64"), (-1.0, "float32"), (True, "bool"), (70000.0, "float32"),
           (100, "uint8"), (200, "uint8"), (-100, "int8")]
_MASK = [True, False, True, False]


def _mask_write(t, m, value):
    t[m] = value
    return t


_STORES = {
    "masked_fill": (lambda t, m, v: t.masked_fill(m, v), lambda t, m, v: t.masked_fill(m, v)),
    "setitem_mask": (lambda t, m, v: _mask_write(t, m, v),
                     lambda t, m, v: _mask_write(t.clone(), m, v)),
    # a mask among basic indices is another path (`_masked_write`)
    "setitem_mask_ellipsis": (lambda t, m, v: _mask_write(t, (m, ...), v),
                              lambda t, m, v: _mask_write(t.clone(), (m, ...), v)),
}


@pytest.mark.parametrize("store", list(_STORES))
def test_a_zero_d_tensor_value_is_converted_as_torch_converts_it(each_path, store):
    """Every (tensor dtype, value, value dtype): where torch refuses, an OverflowError naming
    the value (a cast wrapped 300 to 44 and NaN to 0); else torch's values and dtype."""
    ours, theirs = _STORES[store]
    m = np.array(_MASK)
    for dt, data in _ARRAYS.items():
        a = np.array(data, dt)
        for v, vdt in _VALUES:
            where = f"{store} {dt} {v!r} {vdt}"
            try:
                want = theirs(torch.from_numpy(a.copy()), torch.from_numpy(m),
                              torch.tensor(v, dtype=getattr(torch, vdt))).numpy()
            except RuntimeError:
                with pytest.raises(OverflowError, match="without overflow"):
                    ours(Tensor(a.copy()), Tensor(m), Tensor(np.array(v, vdt))).numpy()
                continue
            got = ours(Tensor(a.copy()), Tensor(m), Tensor(np.array(v, vdt))).numpy()
            assert got.dtype == want.dtype, (where, got.dtype)
            np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64),
                                          err_msg=where)


def test_a_zero_d_float_value_keeps_its_gradient_through_masked_fill():
    """The checked value stays a cast in the graph (not a read-back number): its gradient is
    torch's, the count of filled places, also where it is converted (float64 into float32)."""
    a = np.array([1.0, -2.0, 3.5, 0.0], np.float32)
    for vdt in ("float32", "float64"):
        v = Tensor(np.array(2.5, vdt), requires_grad=True)
        x = Tensor(a, requires_grad=True)
        (x.masked_fill(Tensor(_MASK), v) * Tensor(a)).sum().backward()
        tv = torch.tensor(2.5, dtype=getattr(torch, vdt), requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        (tx.masked_fill(torch.tensor(_MASK), tv) * torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def _exact_product(x: np.ndarray) -> float:
    from fractions import Fraction

    p = Fraction(1)
    for v in x.tolist():
        p *= Fraction(v)
    return float(p)


@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_float_prod_is_the_product_rounded_once_within_the_contracts_bound(each_path, dt):
    """The reduction contract (runtime/semantics.py) for prod: float16/float32 multiplied in
    float64 and rounded once, within half an ulp plus (n - 1) * 2^-53 of the exact product;
    numpy's left-to-right product within (n - 1) * eps, so the two agree within the sum of
    the bounds. Sizes: 1, primes, a multiple of the lanes, past a thread's share."""
    rng = np.random.default_rng(65)
    eps = float(np.finfo(dt).eps) / 2
    for n in (1, 2, 7, 13, 64, 257, 1009, 4099)[: None if dt == "float32" else 5]:
        x = (rng.uniform(0.9, 1.1, n) * rng.choice([-1, 1], n)).astype(dt)
        exact = _exact_product(x)
        got = float(Tensor(x).prod().numpy())
        half_ulp = float(np.spacing(np.array(abs(exact), dt))) / 2
        ours = half_ulp + (n - 1) * 2.0**-53 * abs(exact)
        assert abs(got - exact) <= ours * 1.0001, (dt, n, got, exact)
        theirs = (n - 1) * eps * abs(exact) * 1.01 + half_ulp
        assert abs(got - float(np.prod(x))) <= ours + theirs, (dt, n, got, np.prod(x))


def test_float32_prod_where_numpys_partial_products_leave_the_range():
    """Where a partial product of numpy's left-to-right float32 order overflows (underflows)
    and the whole product lies in float32's range, numpy gives inf (0) and prod the product
    (the contract's stated difference: a float32 accumulator gave numpy's inf here)."""
    for a in ([1e30, 1e30, 1e-30, 1e-30], [1e-30, 1e-30, 1e30, 1e30], [3e38] * 6 + [1e-38] * 6,
              [1e-20] * 5 + [1e20] * 5, [2.0] * 200 + [0.5] * 200):
        x = np.array(a, np.float32)
        exact = _exact_product(x)
        assert np.float32(exact) != 0 and np.isfinite(np.float32(exact))
        with np.errstate(over="ignore", under="ignore"):
            partial = np.cumprod(x)  # numpy's order, in float32
            assert (~np.isfinite(partial)).any() or (partial == 0).any(), a
            assert np.prod(x) in (0, np.inf), a
        got = Tensor(x).prod().numpy()
        np.testing.assert_allclose(got, exact, rtol=2 * 2.0**-24, err_msg=str(a))


@pytest.mark.parametrize("index", [1, slice(0, 2), "mask"])
def test_an_item_write_past_float32s_range_is_refused_as_torchs(index):
    """torch's `t[i] = 1e39` into float32 raises; into float16 `t[i] = 1e5` stores inf (its
    write is unchecked there). The float32 write stored inf."""
    m = [True, False, True]
    for dt, v in (("float32", 1e39), ("float32", -3.5e38), ("float32", 3e38), ("float16", 1e5),
                  ("float16", 1e39), ("float64", 1e300)):
        t = Tensor(np.zeros(3, dt))
        tt = torch.zeros(3, dtype=getattr(torch, dt))
        i = Tensor(m) if index == "mask" else index
        try:
            tt[torch.tensor(m) if index == "mask" else index] = v
        except RuntimeError:
            with pytest.raises(OverflowError, match="without overflow"):
                t[i] = v
            continue
        t[i] = v
        np.testing.assert_array_equal(t.numpy(), tt.numpy(), err_msg=f"{dt} {v}")


# ---------------------------------------------------------------------- gen's right-hand sides
# (a right side of `MUL(x:float32, y:float32) -> ...`, the message's start): each raised a
# TypeError or a ValueError when the rule fired, with no rule location
BAD_RHS = [
    ("sum(x)", "sum(...) iterates its argument: a node cannot be iterated"),
    ("any(y)", "any(...) iterates its argument: a node cannot be iterated"),
    ("max(x, y)", "max(...) of nodes compares them: nodes are not ordered"),
    ("min(x, 2)", "min(...) of nodes compares them: nodes are not ordered"),
    ("abs(x)", "abs(...) of a node: a node has no absolute value"),
    ("float(y)", "float(...) of a node: a node has no float value"),
    ('x.alu(Ops.ADD, "s")', "x.alu(op, ...) is given a string as a source"),
    ("x.alu(Ops.ADD, None)", "x.alu(op, ...) is given None as a source"),
]
GOOD_RHS = ["x.alu(Ops.ADD, 2.0)", "x.alu(Ops.ADD, y)", "x.const_like(max(1, 2))",
            "x.const_like(len(x.src))", "x.const_like(abs(-2))", "sum((x, y))",
            "x if max(x.vmax, 1) > 0 else None"]


def _gen(tmp_path, rhs: str) -> tuple[int, str, str]:
    from rulegrad.cli import main

    path = tmp_path / "user.rules"
    path.write_text(f"rules user = {{\n  r: MUL(x:float32, y:float32) -> {rhs}\n}}\n")
    code = main(["gen", str(path), "--out", str(tmp_path / "out")])
    return code, str(path), str(tmp_path / "out" / "user.py")


@pytest.mark.parametrize("rhs,message", BAD_RHS, ids=[b[0] for b in BAD_RHS])
def test_gen_refuses_a_builtin_or_alu_source_that_fails_where_the_rule_fires(tmp_path, capsys,
                                                                             rhs, message):
    import os

    code, path, module = _gen(tmp_path, rhs)
    text = "".join(capsys.readouterr())
    col = len("  r: MUL(x:float32, y:float32) -> ") + 1
    assert code != 0 and f"{path}:2:{col}: error: {message}" in text, text
    assert not os.path.exists(module)


@pytest.mark.parametrize("rhs", GOOD_RHS)
def test_gen_takes_builtins_of_numbers_and_tuples_and_alu_of_numbers(tmp_path, capsys, rhs):
    code, _, _ = _gen(tmp_path, rhs)
    assert code == 0, capsys.readouterr()


def test_the_refused_right_sides_raise_on_a_node():
    """The oracle for BAD_RHS: each, evaluated on nodes the pattern matches, raises, or makes
    a constant whose value is no number (`CONST float32 's'`, which raised when rendered)."""
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    x = UOp.const(dtypes.float32, 2.0).reshape((1,)).expand((3,))
    y = x.alu(Ops.EXP2)
    for rhs, _ in BAD_RHS:
        try:
            out = eval(rhs, {"Ops": Ops, "x": x, "y": y})  # noqa: S307 - the rule's own text
        except TypeError:
            continue
        consts = [u.arg for u in out.toposort() if u.op is Ops.CONST]
        assert any(not isinstance(c, (int, float, bool)) for c in consts), rhs


def _full(kind, dt, value, like):
    """(rulegrad's, torch's) full or full_like of `value` (numpy 0-d) in dtype dt."""
    from rulegrad import dtypes

    tv = torch.from_numpy(value)
    if kind == "full":
        return (lambda: Tensor.full((3,), Tensor(value), dtype=getattr(dtypes, dt)),
                lambda: torch.full((3,), tv, dtype=getattr(torch, dt)))
    return (lambda: Tensor(like).full_like(Tensor(value)),
            lambda: torch.full_like(torch.from_numpy(like), tv))


@pytest.mark.parametrize("kind", ["full", "full_like"])
def test_full_and_full_like_read_a_zero_d_tensor_as_torchs_full(kind):
    """`full(shape, Tensor(v), dtype)` and `full_like(t, Tensor(v))` take the tensor's number
    and convert it as torch's full: a NaN into an int dtype was a bare ValueError (int() of
    the tensor), now torch's refusal, an OverflowError."""
    for dt in ("uint8", "int8", "float16", "float32"):
        for v, vdt in _VALUES:
            ours, theirs = _full(kind, dt, np.array(v, vdt), np.zeros(3, dt))
            try:
                want = theirs().numpy()
            except RuntimeError:
                with pytest.raises(OverflowError, match="without overflow"):
                    ours()
                continue
            np.testing.assert_array_equal(ours().numpy(), want, err_msg=f"{dt} {v} {vdt}")
