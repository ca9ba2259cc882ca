"""dot66: plain dots against packed panels by cost, not by a row count (rules/pack_helpers.py's
`_dot_cost`, `_far_reads`, `_far_panels`), and float16 products packed (`_half_products`).

`x @ w.T` keeps its plain dots (each output a dot of two rows read forward along k) where they
cost fewer vector multiply-adds than the packed loops, each side with its reads past the caches:
dots read w.T again for every row after the first, from past the L2 and, past a thread's share
of the L3, from memory; packed panels larger than a cache are written once and read by each row
tile. The tests' machine is conftest's: 256-bit vectors, a 1 MB L2, a 32 MB L3, two threads.
Checked: the action's record and numpy's values (a float64 reference); never timed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from narrow_products import narrow_inputs
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.rules import pack_helpers


def _line(t: Tensor) -> str:
    return " | ".join(a for _, acts in optimized_kernels(t) for a in acts)


def _product(x: np.ndarray, w: np.ndarray, transposed: bool) -> Tensor:
    return Tensor(x) @ (Tensor(w).T if transposed else Tensor(w))


# a float sum's rounding per term (float16: its products summed in float32)
EPS = {np.float16: 4e-7, np.float32: 4e-7, np.float64: 1e-15}


def _close(got: np.ndarray, x: np.ndarray, w: np.ndarray, transposed: bool,
           rounded: bool = False) -> None:
    """Within the sum's rounding over k terms of each output's |x| |w| (float64 reference),
    and a float16 result's one rounding at the end: float32 sums of exact products. `rounded`:
    each float16 product may be rounded to float16 before the add (MUL's own meaning, up to
    2**-11 of it: the plain loops'), which the packed sums' bound leaves out for a k of under a
    thousand."""
    ww = (w.T if transposed else w).astype(np.float64)
    want = x.astype(np.float64) @ ww
    scale = np.abs(x).astype(np.float64) @ np.abs(ww)
    tol = EPS[x.dtype.type] * x.shape[-1] * scale + 1e-12
    if x.dtype == np.float16:
        tol = tol + np.abs(want) * 2.0 ** -11 + 2.0 ** -24 + (scale * 2.0 ** -11 if rounded else 0)
    assert got.shape == want.shape and got.dtype == x.dtype
    assert np.all(np.abs(got.astype(np.float64) - want) <= tol), np.abs(got - want).max()


@pytest.fixture()
def machine(fake_machine):
    fake_machine(2, 1 << 20)


@pytest.mark.parametrize("m, k, n", [(5, 30011, 13), (8, 30011, 13), (7, 50000, 16),
                                     (6, 4099, 16), (12, 4099, 7), (6, 2048, 512)])
def test_more_than_four_rows_of_a_transposed_product_can_stay_dots(machine, m: int, k: int,
                                                                   n: int) -> None:
    """5 to 12 rows of x @ w.T whose w.T stays within the caches, or is narrow (a panel of 16
    copied element by element down w's columns): dots, not packed (the row count of 4 had
    packed them: 1.1-1.7x slower, CPU time interleaved), numpy's values."""
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    t = _product(x, w, True)
    assert "PACK" not in _line(t) or "TILED DOTS" in _line(t), _line(t)  # (dots, plain or tiled)
    _close(t.numpy(), x, w, True)


@pytest.mark.parametrize("m, k, n", [(4, 4096, 1024), (3, 8192, 1024), (6, 4096, 1024)])
def test_few_rows_over_a_transposed_product_past_the_caches_pack(machine, m: int, k: int,
                                                                 n: int) -> None:
    """A w.T of 16 MB or more, past the L3's share of a thread: each row's dots would read it
    from memory again (3x8192x1024 ran 0.78x as dots, 4x4096x1024 0.93x), the packed panels of
    a few MB read it once: packed even at 3 and 4 rows, numpy's values."""
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    t = _product(x, w, True)
    assert "PACK" in _line(t), _line(t)
    _close(t.numpy(), x, w, True)


def test_the_choice_follows_the_cache_sizes(fake_machine, monkeypatch) -> None:
    """The same 4x4096x1024 product is dots where its 16 MB w.T fits the caches (a 64 MB L2,
    a 256 MB L3) and packed where it does not: the choice reads the machine."""
    x, w = narrow_inputs(4, 4096, 1024, np.float32, transposed=True)
    # (plain dots against packed panels: the tiled dots, which read w.T once per row tile,
    # are tests/test_dot68.py's)
    monkeypatch.setattr(pack_helpers, "_tiled_cost", lambda *a: math.inf)
    fake_machine(2, 1 << 20)
    assert "PACK" in _line(_product(x, w, True))
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "64M")
    monkeypatch.setenv("RULEGRAD_L3_BYTES", "256M")
    t = _product(x, w, True)
    assert "PACK" not in _line(t) or "TILED DOTS" in _line(t), _line(t)  # (dots, plain or tiled)
    _close(t.numpy(), x, w, True)


# rows 1 to 12, k tiny, prime and tall, n 3 to 33 (under a vector, a panel, past it)
SWEEP = [(1, 3, 33), (2, 97, 3), (3, 30011, 17), (5, 7, 8), (6, 97, 33), (7, 4099, 9),
         (8, 3, 17), (9, 30011, 3), (11, 97, 16), (12, 4099, 33), (12, 2, 5), (4, 100003, 31)]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", SWEEP)
def test_narrow_products_sweep_against_numpy(machine, m: int, k: int, n: int, dtype,
                                             transposed: bool) -> None:
    """Whichever loops the costs choose, numpy's values."""
    x, w = narrow_inputs(m, k, n, dtype, transposed=transposed)
    _close(_product(x, w, transposed).numpy(), x, w, transposed)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("m, k, n", [(2, 100003, 9), (7, 997, 33), (64, 97, 7), (3, 1009, 16),
                                     (13, 31, 40), (1, 65537, 3)])
def test_float16_products_against_numpy(machine, m: int, k: int, n: int,
                                        transposed: bool) -> None:
    """float16 x and w: numpy's values within float32 sums of the exact products and one
    rounding to float16, packed or not (Tensor.matmul widens float16 operands: rev66b; the
    plain loops had rounded each product to float16, `rounded`)."""
    x, w = narrow_inputs(m, k, n, np.float16, transposed=transposed)
    x, w = x * np.float16(0.5), w * np.float16(0.5)
    _close(_product(x, w, transposed).numpy(), x, w, transposed)


@pytest.mark.parametrize("m, k, n", [(2, 100003, 9), (7, 997, 33), (64, 97, 7)])
def test_float16_products_are_packed(machine, m: int, k: int, n: int) -> None:
    """A float16 matmul, a float32 sum of the operands widened (Tensor.matmul, numpy's
    meaning), is packed, each step a fused multiply-add of the widened operands: it ran as
    plain loops, its products rounded to float16, 2x100003x9 at 0.14x torch eager. numpy's
    values."""
    x, w = narrow_inputs(m, k, n, np.float16)
    t = _product(x, w, False)
    assert "PACK" in _line(t), _line(t)
    _close(t.numpy(), x, w, False)


def test_float16_packing_passes_the_rule_check() -> None:
    """`rulegrad check`'s method on the packing rule (rules/opt.rules' pack_store) alone over
    a float16 matmul (a float32 sum of the operands widened): C before (plain loops) and after
    (packed, the operands widened as they are copied, fused) within the kernel's rounding bound
    (generator/roundoff.py: a product in a sum rounded or fused), and the kernel interpreter's
    fused chain on the packed AST bit for bit with its C, on random values, NaN, infinities
    and -0.0, and wide magnitudes."""
    from rulegrad.dsl import ast as A
    from rulegrad.dsl import load
    from rulegrad.generator import optdiff
    from rulegrad.generator.interp import interpret_ruleset
    from rulegrad.generator.soundness import Checker
    from rulegrad.rules import RULES_DIR

    opt = load(str(RULES_DIR / "opt.rules"))
    rule = next(r for rs in opt.rulesets for r in rs.rules
                if r.span.path == opt.file.path and r.name == "pack_store")
    alone = interpret_ruleset(A.CheckedRuleSet("pack_store", (rule,), opt.rulesets[0].path),
                              Checker().helpers(opt))
    corpus = []
    for i, (m, k, n) in enumerate([(7, 997, 33), (64, 97, 7), (5, 1031, 17)]):
        x, w = narrow_inputs(m, k, n, np.float16)
        corpus += optdiff.corpus_of((Tensor(x) @ Tensor(w)).schedule(), f"float16 {i}")
    res = optdiff.check_rule("pack_store", alone, corpus)
    assert len(res.fired) == 3 and res.pinned == 3, (res.fired, res.pinned)
    assert res.verdict("pack_store", len(corpus))[1] == "passed", (res.failures, res.errors)
