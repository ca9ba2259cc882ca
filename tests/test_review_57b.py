"""Review of round 57's red57 (narrow_reduce's int32 partials for small-int sums, the argmax
first hit shared among the threads), as an adversary: the values at the places the new paths
cut (share and tail boundaries, a symbolic row count's gate, the int32 bound's extremes, sums
of computed small ints), each against numpy, on both schedulers and 1..3 threads."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.runtime.target import SPLIT_MIN_ROWS

_ROWS = 100003  # prime: a tail past the shares' whole rows


def _share_starts(batches: int, rows: int, threads: int) -> list[int]:
    """Where the rows' shares begin and where the tail begins, as rangeify.rules' shares_for
    and head_rows place them today (any other place is as good a test: numpy is the oracle)."""
    t = math.lcm(batches, threads) // batches * max(1, -(-rows // (threads * (SPLIT_MIN_ROWS - 1))))
    return [rows // t * i for i in range(1, t + 1)]


def _straddled(shape: tuple[int, int, int], threads: int, dt: str, seed: int) -> np.ndarray:
    """Random values with ties of the largest and of the smallest straddling each boundary
    (the lower index must win), a NaN in the last share and one in the tail."""
    b, rows, c = shape
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, shape) if dt == "int8" else rng.standard_normal(shape)
    x = x.astype(dt)
    for j, s in enumerate(_share_starts(b, rows, threads)):
        x[:, s - 1:s + 1, j % c] = 100
        x[:, s - 1:s + 1, (j + 3) % c] = -100
    if dt != "int8":
        x[0, _share_starts(b, rows, threads)[-1] - 2, c - 1] = np.nan  # the last share's end
        x[-1, rows - 1, c - 2] = np.nan  # the tail's last row
    return x


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("threads", ["2", "3"])
@pytest.mark.parametrize("dt", ["float32", "float16", "int8"])
@pytest.mark.parametrize("shape", [(1, _ROWS, 13), (3, 40009, 11)])
def test_first_hit_ties_across_shares_and_tail(monkeypatch, scheduler, threads, dt, shape):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x = _straddled(shape, int(threads), dt, shape[0])
    for op in ("argmax", "argmin"):
        got = getattr(Tensor(x), op)(1).numpy()
        np.testing.assert_array_equal(got, getattr(x, op)(axis=1), err_msg=op)


@pytest.mark.parametrize("bound", [_ROWS, _ROWS - 2, 50001, 50000, 1])
def test_first_hit_of_a_symbolic_row_count(monkeypatch, bound):
    # the rows past the bound value (to the Variable's max, the schedule's rows) are gated
    # out: a NaN and the largest values there must not be hit; a tie straddles 50000
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((_ROWS, 13)).astype(np.float32)
    x[60000, 0] = np.nan
    x[70000:, 1] = 50.0
    x[49999:50001, 2] = 9.0
    x[_ROWS - 1, 3] = 9.0  # the tail's last row: hit only at the full bound
    n = Variable("n", 1, _ROWS).bind(bound)
    t = Tensor(x).shrink(((0, n), None))
    for op in ("argmax", "argmin"):
        got = getattr(t, op)(0).numpy()
        np.testing.assert_array_equal(got, getattr(x[:bound], op)(axis=0), err_msg=op)


@pytest.mark.parametrize("rows", [32767, _ROWS])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_int16_extreme_column_sums(monkeypatch, rows, threads):
    # 32767 rows of -32768 sum to -2**30 + 32768 (int32 partials hold it); 100003 rows of
    # -32768 or 32767 reach past 2**31 (int64 partials): a bound of 256 a value overflowed
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x = np.full((rows, 13), -32768, np.int16)
    x[:, 1::2] = 32767
    x[rows // 2, 5] = 0
    got = Tensor(x).sum(0).numpy()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, x.sum(0))


_COMPUTED = {
    # int8 * int8 wraps in int8 (numpy's): the product is a small int, its sum in int32 partials
    "int8 product": (lambda t: (t * t).sum(0), lambda a: (a * a).sum(0)),
    "uint8 via int8": (lambda t: t.cast("uint8").cast("int8").sum(0),
                       lambda a: a.astype(np.uint8).astype(np.int8).sum(0)),
    # negative int32 partials cast to uint64 once: numpy's modular uint64 sum
    "int8 as uint64": (lambda t: t.sum(0, dtype="uint64"), lambda a: a.sum(0, dtype=np.uint64)),
    # an int32's values are not small: its sum's partials stay int64 (2**21 a row; no
    # constant in the product: a broadcast constant keeps a sum out of narrow_reduce)
    "int32 values": (lambda t: (t.cast("int32") * t.cast("int32") * t.cast("int32")).sum(0),
                     lambda a: (a.astype(np.int32) ** 3).sum(0)),
    "bool": (lambda t: t.cast("bool").sum(0), lambda a: a.astype(bool).sum(0)),
}


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("case", sorted(_COMPUTED))
def test_sums_of_computed_small_ints(monkeypatch, scheduler, threads, case):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x = np.random.default_rng(5).integers(-128, 128, (_ROWS, 13)).astype(np.int8)
    x[:, 0] = -128
    x[:, 1] = 127
    ours, theirs = _COMPUTED[case]
    got, want = ours(Tensor(x)).numpy(), theirs(x)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
