"""Review of round 52's scan and cache changes: each test a wrong answer found, against torch.

cumprod's gradient at its first zero z1 is, in torch's cumprod_backward, the sum over
z1 <= i < z2 of g[i] times the products with x[z1] read as 1, the terms from the second zero z2
on being 0 * (the product of x strictly between the zeros): NaN when that product is infinite
(an inf, or an overflow), even though the row's later gradients are 0.

A float64 cummax of a row of 13 or 16 (the two-scan index, 64-bit values) made gcc 12.2 crash
in its SLP vectorizer (an internal compiler error, so a CompileError): the build retries such a
crash with that pass off."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")


def _grads(a: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = Tensor(a, requires_grad=True)
    (x.cumprod(-1) * Tensor(w)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (torch.cumprod(tx, -1) * torch.from_numpy(w)).sum().backward()
    return x.grad.numpy(), tx.grad.numpy()


@pytest.mark.parametrize("row", [[0, np.inf, 0, 2], [0, np.inf, 0], [0, -np.inf, 2, 0, 1],
                                 [2, 0, np.inf, 0, 1], [0, 1e30, 1e30, 0, 1],
                                 [np.inf, 0, 3, 0, 1], [0, np.nan, 0, 2], [0, 3, 0, np.inf]],
                         ids=str)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cumprod_gradient_with_an_infinite_product_between_two_zeros_matches_torch(row, dt):
    a = np.array(row, dt)
    ours, theirs = _grads(a, np.arange(1, len(row) + 1, dtype=dt))
    np.testing.assert_array_equal(ours, theirs)


def test_cumprod_gradient_rows_of_a_batch_keep_their_own_zeros():
    # three rows in one tensor: only the first has an infinite product between its zeros
    a = np.array([[0, np.inf, 0, 2, 1], [0, 2, 0, 3, 1], [1, 2, 3, 0, 1]], np.float32)
    ours, theirs = _grads(a, np.ones_like(a))
    np.testing.assert_array_equal(ours, theirs)


# (second derivatives through two and three zeros: test_cumprod_gradient's)


@pytest.mark.parametrize("n", [13, 16])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_float64_running_max_rows_that_crashed_gcc_match_torch(name, n):
    a = np.random.default_rng(n).integers(-3, 4, (2, n)).astype(np.float64)
    a[0, 3], a[1, 5] = np.nan, -0.0
    v, i = getattr(Tensor(a), name)(1)
    tv, ti = getattr(torch, name)(torch.from_numpy(a), 1)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy().astype(np.int32))
