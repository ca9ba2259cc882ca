"""Review of gemv61 (few-row products): what `_shared_block`'s page floor calls a product.

The floor (a row of under two pages read whole by one core, not in blocks shorter than a page by
two) is for a product of one row, a MUL of two values read from memory. A column sum scaled by a
constant reads the same one stream as the plain column sum, and an exp of a scaled value is work
per element like `exp(x)`: each plans as its unscaled form (they took the product's one-core
plan: any non-index MUL in the body counted)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel

X = np.random.default_rng(61).standard_normal((3000, 1000)).astype(np.float32)
V = np.random.default_rng(62).standard_normal((3000, 1)).astype(np.float32)

FORMS = {  # name: (ours, numpy's in float64, blocks shared by two threads)
    "sum": (lambda: Tensor(X).sum(0), lambda x: x.sum(0), True),
    "sum of x * 2": (lambda: (Tensor(X) * 2).sum(0), lambda x: (x * 2).sum(0), True),
    "sum of exp(x)": (lambda: Tensor(X).exp().sum(0), lambda x: np.exp(x).sum(0), True),
    "sum of exp(x * 0.5)": (lambda: (Tensor(X) * 0.5).exp().sum(0),
                            lambda x: np.exp(x * 0.5).sum(0), True),
    "one-row product": (lambda: (Tensor(V) * Tensor(X)).sum(0),
                        lambda x: (V.astype(np.float64) * x).sum(0), False),
    "sum of x * x": (lambda: (Tensor(X) * Tensor(X)).sum(0), lambda x: (x * x).sum(0), False),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_only_a_product_of_two_reads_takes_the_page_floor(monkeypatch, form: str) -> None:
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    ours, theirs, shared = FORMS[form]
    t = ours()
    (inter,) = [s for s in actions(optimize_kernel(lower_only(t.schedule()[-1].ast)))
                if s.startswith("INTERCHANGE")]
    assert ("2 blocks of 500" in inter) == shared, inter
    want = theirs(X.astype(np.float64))
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5,
                               atol=1e-6 * 3000 * np.abs(want).max())
