"""The package's own rules that look at a constant's value, under schedule replay (issue 31,
item 3): a program is run for two values on one side of the rule's condition (so the schedule
cache learns its form), then for values on the other side; every result is checked against
numpy. A replay that skipped the condition would give the first side's program.

The rules concerned: opt.rules' max_scale (`max(x*c) -> max(x)*c` for c > 0, which runs on the
C backend's kernels, after the constants are lifted into arguments), symbolic.rules' folds of
constants (`c < 0.5`, `max(c, 0.5)`, `c * 3`), and the comparisons and selects around them.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

X = np.array([-2.5, -1.0, 0.0, 0.75, 3.0, 4.5], np.float32)
# two values on one side, then values on the other side (and back)
VALUES = (0.3, 0.7, -0.3, -0.7, 0.9, -0.9, 1.7)

PROGRAMS = {
    "max of scaled": (lambda t, c: (t * c).max(), lambda x, c: (x * c).max()),
    "min of scaled": (lambda t, c: (t * c).min(), lambda x, c: (x * c).min()),
    "rowmax of scaled": (lambda t, c: (t.reshape(2, 3) * c).max(axis=1),
                         lambda x, c: (x.reshape(2, 3) * c).max(axis=1)),
    "constant compared": (lambda t, c: t + (Tensor.full((6,), c) < 0.5),
                          lambda x, c: x + (c < np.float32(0.5))),
    "constant clamped": (lambda t, c: t * Tensor.full((6,), c).maximum(0.5),
                         lambda x, c: x * np.maximum(c, np.float32(0.5))),
    "constant folded": (lambda t, c: t + Tensor.full((6,), c) * 3,
                        lambda x, c: x + c * np.float32(3)),
    "select on a constant": (lambda t, c: (Tensor.full((6,), c) > 0).where(t, -t),
                             lambda x, c: np.where(c > 0, x, -x)),
    "relu of shifted": (lambda t, c: (t + c).relu(), lambda x, c: np.maximum(x + c, 0)),
    "compare to a constant": (lambda t, c: (t > c).where(t, c),
                              lambda x, c: np.where(x > c, x, c)),
}


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_rule_reading_a_constant_sees_every_value(monkeypatch, backend, name):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    build, want = PROGRAMS[name]
    for c in VALUES:
        got = build(Tensor(X), c).numpy()
        np.testing.assert_array_equal(got, want(X, np.float32(c)).astype(np.float32),
                                      err_msg=f"{name}, c = {c}")
