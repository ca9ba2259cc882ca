"""rev65d: review of hunt65 (issue 31: tensor-valued stores, prod's contract, gen's RHS checks).

- gen's builtin checks refused `max(x, y, key=depth)` and `min((x, y), key=depth)`: with a
  `key=` the builtin compares the keys, not the nodes, and the rule is valid Python (a false
  refusal). A one-argument `max(x)`/`min(x)` of a node, which iterates it and raises, was let
  through although the checker's docstring named it.
- float32/float16 `prod` multiplies in float64 in the reduction's order (lanes, not left to
  right): where one of those float64 partial products leaves float64's range, the result is
  inf, 0 or NaN (inf * 0) even where numpy's left-to-right float32 product is right
  (`[1e38, 1e-38] * 500`: numpy 0.99995, torch and prod NaN), and a partial product in
  float64's subnormal range loses the stated bound. The contract text said prod was finite
  wherever numpy's partials overflow and the product does not; it now states where the bound
  holds, and these tests pin both sides.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.cli import main

_HELPER = '''from rulegrad.runtime.uop import UOp


def depth(u: UOp) -> int:
    return len(u.src)
'''


def _gen(tmp_path, rhs: str) -> tuple[int, str]:
    (tmp_path / "h.py").write_text(_HELPER)
    path = tmp_path / "user.rules"
    path.write_text("use .h: depth\nrules user = {\n"
                    f"  r: MUL(x:float32, y:float32) -> {rhs}\n}}\n")
    return main(["gen", str(path), "--out", str(tmp_path / "out")]), str(path)


@pytest.mark.parametrize("rhs", ["max(x, y, key=depth)", "min((x, y), key=depth)",
                                 "min(x.src, key=depth)", "max(x, y, key=depth, default=x)"])
def test_gen_takes_min_max_of_nodes_with_a_key(tmp_path, capsys, rhs):
    """With `key=`, min/max compare the keys (ints here): evaluated on nodes, it runs."""
    code, _ = _gen(tmp_path, rhs)
    assert code == 0, capsys.readouterr()
    assert (tmp_path / "out" / "user.py").is_file()


def test_the_keyed_min_max_runs_on_nodes():
    """The oracle for the test above: Python's max/min with a key on two UOps."""
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    x = UOp.const(dtypes.float32, 2.0)
    y = x.alu(Ops.EXP2)
    assert max(x, y, key=lambda u: len(u.src)) is y
    assert min((x, y), key=lambda u: len(u.src)) is x
    with pytest.raises(TypeError):
        max(x)  # (a node is not iterable)


@pytest.mark.parametrize("rhs", ["max(x)", "min(y)"])
def test_gen_refuses_min_max_of_one_node(tmp_path, capsys, rhs):
    code, path = _gen(tmp_path, rhs)
    text = "".join(capsys.readouterr())
    col = len("  r: MUL(x:float32, y:float32) -> ") + 1
    assert code != 0 and f"{path}:3:{col}: error: {rhs[:3]}(...) iterates its argument: a node " \
        "cannot be iterated" in text, text


def _exact(x: np.ndarray) -> Fraction:
    p = Fraction(1)
    for v in x.astype(np.float64).tolist():
        p *= Fraction(v)
    return p


@pytest.mark.parametrize("dt", ["float16", "float32"])
@pytest.mark.parametrize("n", [1, 2, 97, 10007, 100000])
def test_prod_within_the_stated_bound_up_to_1e5(dt, n):
    """Random factors whose product stays in range (pairs x, 1/x, shuffled, signs random) and
    factors all one ulp above 1: within half an ulp plus (n - 1) * 2^-53 of the exact product
    (float64 partial products of such factors stay in float64's normal range)."""
    rng = np.random.default_rng(n)
    h = np.exp(rng.normal(0, 1.0 if dt == "float16" else 2.0, n // 2))
    rand = np.concatenate([h, 1 / h, [1.5] * (n % 2)])
    rng.shuffle(rand)
    eps = float(np.finfo(dt).eps)
    near1 = np.full(n, 1 + eps) if dt == "float32" or n < 10000 else np.full(n, 1 + eps / 4)
    for x in (rand * rng.choice([-1, 1], n), near1 * rng.choice([-1, 1], n)):
        x = x.astype(dt)
        e = _exact(x)
        got = float(Tensor(x).prod().numpy())
        half_ulp = float(np.spacing(np.array(abs(float(e)), dt))) / 2
        bound = half_ulp + (n - 1) * 2.0**-53 * abs(float(e))
        assert math.isfinite(got) and abs(Fraction(got) - e) <= Fraction(bound) * Fraction(
            10001, 10000), (dt, n, got, float(e))


def test_prod_past_float64s_range_in_its_order_is_nan_as_torchs():
    """The contract's stated limit: alternating 1e38, 1e-38 (float32): the lanes' float64
    partials overflow and underflow, inf * 0 is NaN, as torch's prod; numpy's left-to-right
    float32 order gives the product. Not claimed finite any more (the text said it was)."""
    x = np.empty(1000, np.float32)
    x[0::2], x[1::2] = 1e38, np.float32(1e-38)
    assert abs(float(np.prod(x)) - float(_exact(x))) < 999 * 2.0**-24  # (numpy's bound)
    assert not np.isfinite(Tensor(x).prod().numpy())


def test_the_contract_text_states_the_float64_limit():
    """docs/tensor.md and runtime/semantics.py say where prod's bound holds (float64 partial
    products in the reduction's order, not numpy's) and what comes out past it."""
    import rulegrad.runtime.semantics as sem

    root = __import__("pathlib").Path(sem.__file__).parent.parent
    for text in (open(sem.__file__).read(), (root / "docs" / "tensor.md").read_text()):
        flat = " ".join(text.split())
        assert "float64's range" in flat and "NaN" in flat, sem.__file__
        assert "finite where one of numpy's partial products" not in flat


@pytest.mark.parametrize("dt,vdt,bad", [("float16", "float32", 1e5), ("uint8", "int64", 300),
                                        ("int8", "float32", float("nan"))])
def test_masked_fill_of_several_values_checks_only_those_it_stores(dt, vdt, bad):
    """`masked_fill(m, y)` with a tensor of several values (broadcast, as `m.where(y, x)`;
    torch takes only a 0-d value) stores y only where m is true: a value that cannot be
    converted where m is false is never written, and was refused (every value was read)."""
    x = np.zeros(4, dt)
    y = np.array([bad, 1, 2, 3], vdt)
    m = np.array([False, True, True, True])
    got = Tensor(x).masked_fill(Tensor(m), Tensor(y)).numpy()
    np.testing.assert_array_equal(got, np.where(m, y, x).astype(dt))
    assert got.dtype == np.dtype(dt)
    with pytest.raises(OverflowError, match="without overflow"):
        Tensor(x).masked_fill(Tensor(~m), Tensor(y)).numpy()  # (written where m is true)
