"""Reads of a symbolic view select, never add: over a symbolic axis (stored at the variable's
maximum, the rows past the value masked), a picked or reduced -0.0 keeps its sign and a NaN
propagates, as over the same axis of concrete size. The masked rows are filled with what the
reduction starts from (a pick's -0.0), not with its op's identity (+0.0 turned a gathered -0.0
into +0.0). Each op against numpy on the first v rows, for several values of the variable."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor, Variable

VMAX = 7
NAN = float("nan")


def _data(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([0.0, -0.0, -1.5, 2.0, NAN], np.float32), (VMAX, 4),
                      p=[0.3, 0.4, 0.1, 0.1, 0.1])


def _same(got: np.ndarray, want: np.ndarray, signs: bool) -> bool:
    num = ~np.isnan(want)
    return got.shape == want.shape and np.array_equal(np.isnan(got), ~num) and \
        np.array_equal(got[num], want[num]) and \
        (not signs or np.array_equal(np.signbit(got[num]), np.signbit(want[num])))


def _gather0(t, a, rng, v):
    i = rng.integers(0, v, (3, 4)).astype(np.int32)
    return t.gather(0, Tensor(i)), np.take_along_axis(a, i, 0)


def _gather1(t, a, rng, v):
    n = Variable("n", 1, VMAX).bind(v)
    i = rng.integers(0, 4, (VMAX, 2)).astype(np.int32)
    return t.gather(1, Tensor(i).shrink(((0, n), None))), np.take_along_axis(a, i[:v], 1)


def _torch(name):
    def run(t, a, rng, v):
        ours = getattr(t, name)(0)
        theirs = getattr(torch.from_numpy(a), name)(0)
        return (ours[0], theirs[0].numpy()) if isinstance(ours, tuple) else \
            (ours, theirs.numpy())
    return run


OPS = {
    "gather_along_it": _gather0, "gather_along_another": _gather1,
    "max": lambda t, a, rng, v: (t.max(0), a.max(0)),
    "min": lambda t, a, rng, v: (t.min(0), a.min(0)),
    "sum": lambda t, a, rng, v: (t.sum(0), a.sum(0)),
    "cumsum": _torch("cumsum"), "cummax": _torch("cummax"), "cummin": _torch("cummin"),
}
# which zero max, min or a sum of +0.0 and -0.0 gives is the order of its steps: values only
VALUES_ONLY = {"max", "min", "sum"}


@pytest.mark.parametrize("name", sorted(OPS))
def test_symbolic_reads_keep_zero_signs_and_nan(name):
    for v in (1, 3, VMAX):
        rng = np.random.default_rng(v)
        full = _data(v)
        n = Variable("n", 1, VMAX).bind(v)
        got, want = OPS[name](Tensor(full).shrink(((0, n), None)), full[:v], rng, v)
        got = got.numpy()
        assert _same(got, np.asarray(want, dtype=got.dtype), name not in VALUES_ONLY), \
            (name, v, full[:v], got, want)
