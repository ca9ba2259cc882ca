"""float16 elementwise kernels in explicit float32 lanes (rules/opt_helpers.py `_half_op`, printed
by backends/c/render.py with ctext.py's rg_vload_f16 / rg_vround_f16 / rg_vstore_f16): halves
widened on the load, float math in float32, rounded to float16 where the graph casts (once per
op, as lower.rules writes numpy's half loops) and on the store. Values bit for bit against numpy
(overflow to inf, subnormals, NaN, signed zeros), with F16C's conversions and without them (the
lane-by-lane fallback); the vector loop counted in the C."""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c import compile_program

# specials, and values whose sums or products overflow float16 or fall into its subnormals
HALF_SPECIAL = (np.nan, -0.0, 0.0, np.inf, -np.inf, 6e-8, -6e-8, 3e-5, 1e-4, 65504.0, -65504.0,
                300.0, -300.0)
SHAPES = [(8,), (13,), (1, 4099), (97, 31), (512, 64), (4096, 3), (1, 9), (2, 3, 5, 7)]
CHAINS = {
    "a*b+a": (lambda x, y: x * y + x, lambda x, y: x * y + x),
    "relu(a+b)": (lambda x, y: (x + y).relu(), lambda x, y: np.maximum(x + y, np.float16(0))),
    "a/b-a": (lambda x, y: x / y - x, lambda x, y: x / y - x),
    "max(a,b)*3": (lambda x, y: x.maximum(y) * 3, lambda x, y: _maximum(x, y) * np.float16(3)),
    "where(a<b,a,-b)": (lambda x, y: (x < y).where(x, -y), lambda x, y: np.where(x < y, x, -y)),
    "(a-b)*(a+b)": (lambda x, y: (x - y) * (x + y), lambda x, y: (x - y) * (x + y)),
}


def _maximum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """numpy's maximum, but +0.0 for a tie of zeros unless both are -0.0 (MAX's meaning in
    runtime/semantics.py, either way round; numpy's gives its first operand)."""
    zeros = (x == 0) & (y == 0)
    return np.where(zeros, np.where(np.signbit(x) & np.signbit(y), x, abs(x)), np.maximum(x, y))


def _halves(shape: tuple[int, ...], seed: int) -> np.ndarray:
    x = sprinkled(shape, np.float32, seed, HALF_SPECIAL, share=4, least=1) * 40
    with np.errstate(over="ignore"):  # (300 * 40 is past float16's largest: inf)
        return x.astype(np.float16)


def _run(chain: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, str]:
    a, b = _halves(shape, 1), _halves(shape, 2)
    rg, ref = CHAINS[chain]
    out = rg(Tensor(a), Tensor(b))
    source = compile_program(out.schedule()).source
    with np.errstate(all="ignore"):
        want = ref(a, b)
    return out.numpy(), want, source


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("chain", list(CHAINS))
def test_half_chains_match_numpy_bit_for_bit(chain: str, shape: tuple[int, ...]) -> None:
    got, want, source = _run(chain, shape)
    assert_same_bits(got, want)
    if shape[-1] * (shape[-2] if len(shape) > 1 else 1) >= 8:  # a contiguous run of 8 or more
        # the whole kernel in 8-lane vectors: half loads and stores, no scalar half store
        assert "rg_vload_f16(" in source and "rg_vstore_f16(" in source
        assert not re.search(r"\bp0\[[^]]*\] = ", source)


@pytest.mark.parametrize("chain", ["a*b+a", "relu(a+b)", "(a-b)*(a+b)"])
def test_half_lanes_without_f16c_match_numpy(monkeypatch: pytest.MonkeyPatch, chain: str) -> None:
    """A target without F16C (x86-64-v2) converts lane by lane: the same bits."""
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -fopenmp -march=x86-64-v2")
    got, want, source = _run(chain, (37, 29))
    assert "rg_vstore_f16(" in source
    assert_same_bits(got, want)


def test_a_chain_rounds_once_per_op_as_numpy_does() -> None:
    """numpy's a * b + a rounds the product to float16 before the sum; one rounding at the end
    of the chain gives other bits on this data, and the kernel gives numpy's."""
    got, want, _ = _run("a*b+a", (4099,))
    a, b = _halves((4099,), 1), _halves((4099,), 2)
    with np.errstate(all="ignore"):
        once = (a.astype(np.float32) * b + a).astype(np.float16)
    finite = np.isfinite(want)
    assert not np.array_equal(once[finite], want[finite])  # the data tells the two apart
    assert_same_bits(got, want)


# float functions of several ops on float16: computed in float32 and rounded once (tensor_ops'
# `half_in_float32`, torch's and numpy's way), an exp among them inline in the vectors
# (opt_helpers' `vectorizable`: gcc vectorizes no _Float16 conversion, a half kernel it is left
# ran scalar; bench/sweep.py --held-out-4's float16 chain 0.05x torch's time)
def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


FUNCTIONS = {
    "sigmoid": (lambda t: t.sigmoid(), _sig),
    "tanh": (lambda t: t.tanh(), np.tanh),
    "silu": (lambda t: t.silu(), lambda x: x * _sig(x)),
    "gelu": (lambda t: t.gelu(),
             lambda x: x * _sig(np.sqrt(8 / np.pi) * (x + 0.044715 * x ** 3))),
    "exp": (lambda t: t.exp(), np.exp),
}


@pytest.mark.parametrize("shape", [(8,), (13,), (97, 31), (1, 4099), (4096, 3)], ids=str)
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_half_functions_round_once_in_vectors(name: str, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 4).astype(np.float16)
    x.flat[:4] = [0.0, -0.0, 9.0, -9.0] if x.size >= 4 else x.flat[:4]
    rg, ref = FUNCTIONS[name]
    out = rg(Tensor(x))
    (item,) = out.schedule()
    source = compile_program([item]).source
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float16)
    # float32 then one rounding: within one float16 ulp of the float64 value rounded
    np.testing.assert_allclose(out.numpy().astype(np.float64), want.astype(np.float64),
                               rtol=2 ** -10, atol=2 ** -24)
    if shape[-1] * (shape[-2] if len(shape) > 1 else 1) >= 8:
        assert "rg_vload_f16(" in source and "rg_vstore_f16(" in source
        assert not re.search(r"\bp0\[[^]]*\] = ", source)
        # one rounding, at the end (per op, tanh rounded a dozen times)
        assert len(re.findall(r"rg_vround_f16\(t", source)) <= 1, source
