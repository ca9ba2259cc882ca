"""Row-wise log_softmax, logsumexp and softmax with the row-block action (opt.rules'
`block_rows`, rules/row_block_helpers.py, printed by backends/c/rowblock.py): a short row's
passes (its max, its sum and log, its outputs) each run over a block of rows.

Values against numpy in float64 with NaN, +inf and -inf in rows, rows of -inf and of +inf
whole, rows of one, row counts of 1, 7 and 8192 and counts that leave a short last block, both
schedulers, float32 and float16. Whether the rows were blocked is read from the kernels'
recorded actions and the renderer's choices (DEBUG=2's), never timed; L1 is set to 48 KB (the
machine's facts pick the block: `RULEGRAD_L1_BYTES`) so the same shapes block everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.render import render_kernel

# float16: the graph rounds each op's value to float16 (x - max, exp, the sum, the log)
TOL = {"float32": (2e-5, 2e-6), "float16": (4e-3, 2e-2)}


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _log_softmax(a: np.ndarray) -> np.ndarray:
    s = a - a.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def _logsumexp(a: np.ndarray) -> np.ndarray:
    m = a.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # torch's: a row whose max is +-inf is not shifted
    return (np.log(np.exp(a - m).sum(-1, keepdims=True)) + m)[..., 0]


PROGRAMS = {
    "log_softmax": (lambda t: t.log_softmax(-1), _log_softmax),
    "logsumexp": (lambda t: t.logsumexp(-1), _logsumexp),
    "softmax": (lambda t: t.softmax(-1), _softmax),
}
# rows of 129 (8192 of them, and 13: a block of 8 and a short one of 5), 33 (a prime count), 257,
# 1000 and 1024 (long: the row form), 5 (across lanes), 1; one row, 7 rows (one short block)
SHAPES = [(8192, 129), (13, 129), (1031, 33), (7, 257), (7, 1000), (9, 1024), (1, 129),
          (4099, 5), (50, 1)]


def _rows(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """Normal values, and where there are rows enough: row 0 half -inf, row 1 with a NaN, row 2
    with a +inf, row 3 all -inf, row 4 with a -inf, the last row all +inf, the one before it
    two +infs (each in another row of a block, so a row given another's max or sum shows)."""
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    n = shape[-1]
    x[0, n // 2:] = -np.inf
    if x.shape[0] >= 7:
        x[1, n // 3] = np.nan
        x[2, n - 1] = np.inf
        x[3, :] = -np.inf
        x[4, 0] = -np.inf
        x[-1, :] = np.inf
        x[-2, :2] = np.inf
    return x.astype(dtype)


def _check(name: str, shape: tuple[int, ...], dtype: str) -> None:
    program, oracle = PROGRAMS[name]
    x = _rows(shape, dtype, seed=sum(shape))
    got = program(Tensor(x)).numpy()
    with np.errstate(all="ignore"):
        want = oracle(x.astype(np.float64))
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                               err_msg=f"{name} {shape} {dtype}")


@pytest.fixture(autouse=True)
def _l1(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_rows_equal_numpy(name, shape, dtype):
    _check(name, shape, dtype)


@pytest.mark.parametrize("shape", [(13, 129), (1031, 33)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", ["log_softmax", "logsumexp"])
def test_rows_equal_numpy_kernelize(monkeypatch, name, shape):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", "kernelize")
    _check(name, shape, "float16")


def _blocked(t: Tensor) -> list[tuple[str, str]]:
    """Per kernel of t's schedule that the action marked: its ROWS action and the renderer's
    line (how many passes it printed over blocks of how many rows; "" if it printed none)."""
    out = []
    for i, (k, acts) in enumerate(optimized_kernels(t)):
        marked = [a for a in acts if a.startswith("ROWS ")]
        if marked:
            printed = [c for c in render_kernel(k, f"k{i}").choices if c.startswith("ROWS ")]
            out.append((marked[0], printed[0] if printed else ""))
    return out


# (name, shape, dtype, passes): each pass a loop over the block's rows; a logsumexp's last pass
# is its sum, log and store of one value a row; a softmax's kernel-local row of exps is one a
# row of the block, its passes as many as the target's fill of it takes (None: at least 3)
BLOCKED = [("log_softmax", (8192, 129), "float16", 3), ("logsumexp", (8192, 129), "float16", 2),
           ("log_softmax", (13, 129), "float32", 3), ("logsumexp", (1031, 33), "float32", 2),
           ("log_softmax", (7, 257), "float16", 3), ("softmax", (8192, 129), "float16", None),
           ("softmax", (13, 129), "float32", None)]


@pytest.mark.parametrize("name,shape,dtype,passes", BLOCKED,
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
def test_short_rows_run_in_blocks(name, shape, dtype, passes):
    """Rows of at most an eighth of L1 (48 KB here) in fours to eights: the action marks the
    row loop and the renderer prints each pass over the block."""
    x = _rows(shape, dtype, seed=3)
    t = PROGRAMS[name][0](Tensor(x))
    row = shape[1] * np.dtype(dtype).itemsize * (2 if name == "softmax" else 1)
    block = min(8, shape[0], 48 * 1024 // 8 // row)
    ((action, printed),) = _blocked(t)
    assert action == f"ROWS r0 (blocks of {block} rows, each pass over the block's rows)"
    if passes is None:
        assert printed.startswith("ROWS r0: ") and int(printed.split()[2]) >= 3, printed
        assert printed.endswith(f" passes over blocks of {block} rows"), printed
    else:
        assert printed == f"ROWS r0: {passes} passes over blocks of {block} rows"
    _check(name, shape, dtype)


@pytest.mark.parametrize("name,shape,dtype", [
    ("logsumexp", (4096, 1024), "float32"), ("log_softmax", (9, 1024), "float16"),
    ("log_softmax", (3, 129), "float32"), ("softmax", (8192, 1000), "float32"),
    ("log_softmax", (4099, 5), "float32")], ids=str)
def test_long_rows_few_rows_and_local_rows_keep_the_row_form(name, shape, dtype):
    """Rows too long for 4 in an eighth of L1 (the row form overlaps a row's loads with the
    last row's arithmetic; a softmax's with its row of exps), fewer than 4 rows and rows across
    lanes are not blocked."""
    x = np.zeros(shape, dtype)
    assert _blocked(PROGRAMS[name][0](Tensor(x))) == []
