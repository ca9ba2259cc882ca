"""rev61e: review of hunt61 (prod in float64, NaN bits of max/min, symbolic strided views,
checker draws), against numpy and torch."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable


@pytest.fixture(params=["c", "interp"])
def each_backend(request, monkeypatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)


# --------------------------------- a strided slice of a symbolic slice: `s[:n][::step]`
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8])
@pytest.mark.parametrize("step", [2, 3, -2])
def test_strided_slice_of_a_symbolic_slice_reads_and_assigns(n, step, each_backend) -> None:
    # the strided slice pads and reshapes n's rows by sizes made at n's bound value (n = 3,
    # step 2: 4 rows as (2, 2, 3)); hunt61's proof over every n in [1, 8] reshaped the mask
    # of n = 1's rows by them and raised numpy's ValueError from reading it, let alone an
    # assign (main read it as a copy)
    a = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    s = Tensor(a.copy()).realize()
    v = s[:Variable("n", 1, 8).bind(n)][::step]
    np.testing.assert_array_equal(v.numpy(), a[:n][::step])
    v.assign(v * 2 + 1).realize()
    want = a.copy()
    want[:n][::step] = want[:n][::step] * 2 + 1
    np.testing.assert_array_equal(s.numpy(), want)
