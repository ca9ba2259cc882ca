"""Row kernels of rows64 (issues 32/33): the row-block action (opt.rules' `block_rows`,
rules/row_block_helpers.py) over the last axis of a 3-D or 4-D tensor, its leading loops one
flattened row space (attention scores: batch x heads x queries rows).

Values against numpy in float64 (tests/row_oracles.py) with NaN, +inf and -inf in rows, rows of
-inf and +inf whole, row lengths 1, 5, 33, 129, 1000 and 4099, leading dims of 1, 7 and a prime,
float32 and float16, both schedulers; the blocked AST also in the numpy kernel interpreter (no
C). Whether the rows were blocked is read from the kernels' recorded actions (DEBUG=2's), never
timed; L1 is set to 48 KB (`RULEGRAD_L1_BYTES`) so the same shapes block everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels
from row_oracles import ROW_PROGRAMS as PROGRAMS
from row_oracles import ROW_TOL as TOL
from row_oracles import check_rows as _check
from row_oracles import softmax, special_rows
from row_oracles import want_rows as _want

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.kernel_interp import run_kernel
from rulegrad.runtime.ops import Ops

# leading dims 1, 7 and primes (a short last block across a batch's edge: 7 x 3 rows in blocks of
# 4 to 8), rows of 1, 5 (across lanes), 33, 129 (blocked), 1000 and 4099 (long: the row form)
SHAPES = [(7, 3, 129), (1, 13, 129), (13, 7, 33), (7, 1, 33), (2, 3, 5, 129), (1, 12, 16, 33),
          (3, 5, 1000), (2, 2, 4099), (7, 11, 5), (3, 7, 1), (1, 1, 1)]


@pytest.fixture(autouse=True)
def _l1(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_batched_rows_equal_numpy(name, shape, dtype):
    _check(name, shape, dtype)


@pytest.mark.parametrize("shape", [(7, 3, 129), (13, 7, 33), (2, 3, 5, 129)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_batched_rows_equal_numpy_kernelize(monkeypatch, name, shape):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", "kernelize")
    _check(name, shape, "float16")
    _check(name, shape, "float32")


def _blocked(t: Tensor) -> list[str]:
    """The ROWS action of each kernel of t's schedule that took it."""
    return [a for _, acts in optimized_kernels(t) for a in acts if a.startswith("ROWS ")]


def _block(name: str, shape: tuple[int, ...], dtype: str) -> int:
    """The rows a block (as test_rows_63's): as many of the row's bytes (a softmax's row of exps
    kept beside them) as fit in an eighth of 48 KB, 4 to 8 of them, of all the rows."""
    row = shape[-1] * np.dtype(dtype).itemsize * (2 if name == "softmax" else 1)
    return min(8, int(np.prod(shape[:-1])), 48 * 1024 // 8 // row)


# (name, shape, dtype, passes, hand-offs, kept rows): attention scores and batches of rows, each
# leading loop one of the flattened row space's (a batch of 7 of 3 rows: 21 rows)
BLOCKED = [("softmax", (7, 3, 129), "float32", 4, 2, 1),
           ("softmax", (1, 12, 16, 33), "float16", 4, 2, 1),
           ("log_softmax", (13, 7, 33), "float16", 3, 2, 0),
           ("logsumexp", (2, 3, 5, 129), "float32", 2, 1, 0),
           ("softmax", (8, 64, 257), "float16", 4, 2, 1)]


@pytest.mark.parametrize("name,shape,dtype,passes,hand,kept", BLOCKED,
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
def test_batched_rows_run_in_blocks(name, shape, dtype, passes, hand, kept):
    """Rows over the last axis of a 3-D or 4-D tensor run in blocks as a 2-D tensor's rows do:
    the action names every leading loop (one row space), and the values are still numpy's."""
    t = PROGRAMS[name][0](Tensor(special_rows(shape, dtype, seed=3)))
    (got,) = _blocked(t)
    loops = " ".join(f"r{i}" for i in range(sum(n > 1 for n in shape[:-1])))  # (dims of 1: none)
    assert got == (f"ROWS {loops} (blocks of {_block(name, shape, dtype)} rows: {passes} passes "
                   f"over the block's rows, {hand} values a row handed on, {kept} rows kept a row)")
    _check(name, shape, dtype)


@pytest.mark.parametrize("name,shape,dtype", [
    ("softmax", (7, 3, 129), "float32"), ("log_softmax", (3, 5, 33), "float16"),
    ("logsumexp", (2, 3, 5, 129), "float32")], ids=str)
def test_batched_blocked_kernel_in_the_interpreter(name, shape, dtype):
    """The blocked AST itself in the numpy kernel interpreter: each row of the flattened space
    read from the right batch (a block that crosses a batch's edge), the short last block
    repeating the last row, and the STORE over (blocks of all rows, rows of a block, ...)."""
    x = special_rows(shape, dtype, seed=5)
    (item,) = PROGRAMS[name][0](Tensor(x)).schedule()
    opt = optimize_kernel(lower_only(item.ast))
    (st,) = opt.src
    block, rows = _block(name, shape, dtype), int(np.prod(shape[:-1]))
    assert [r.src[0].arg for r in st.src[2:4]] == [-(-rows // block), block]
    bufs = [np.zeros(item.bufs[0].size, dtype), x.ravel().copy()]
    run_kernel(opt, bufs)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(bufs[0].astype(np.float64), _want(name, x).ravel(), rtol=rtol,
                               atol=atol)


def test_rows_of_a_permuted_tensor():
    """Rows over the last axis of a transposed tensor (its rows strided, batches interleaved):
    the flattened row's batch and row indices still address the right values."""
    x = special_rows((5, 9, 129), "float32", seed=9)
    t = Tensor(x).permute(1, 0, 2).softmax(-1)
    np.testing.assert_allclose(t.numpy(), _want("softmax", x.transpose(1, 0, 2)), rtol=2e-5,
                               atol=2e-6)


@pytest.mark.parametrize("name,shape", [("softmax", (2, 3, 4099)), ("log_softmax", (1, 3, 129)),
                                        ("softmax", (7, 11, 5))], ids=str)
def test_long_few_and_across_batched_rows_keep_their_form(name, shape):
    """Long rows, fewer rows than a block's least (a batch of one of 3 rows), and rows
    across lanes are not blocked."""
    assert _blocked(PROGRAMS[name][0](Tensor(np.zeros(shape, np.float32)))) == []


@pytest.mark.parametrize("n,c,hw,g", [(4, 96, 7, 32), (8, 12, 7, 3), (7, 6, 5, 3), (1, 4, 9, 2)],
                         ids=str)
def test_group_norm_rows(n, c, hw, g):
    """A group norm (a layer norm over each (sample, group)'s channels and pixels: its mean,
    its variance about the mean, then the outputs) hands values between passes along a row of
    the (sample, group) space, and each row's output is a 4-D view of it: against torch's
    group_norm, and blocked where the rows are many and short (the same rule as a 2-D layer
    norm's: 4 to 8 rows in an eighth of 48 KB, rows of more than UNROLL_MAX values)."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(n * c + g).standard_normal((n, c, hw, hw)).astype(np.float32)
    x[0, : c // g] = np.float32(3.0)  # a group of one value: its variance 0
    t = Tensor(x).reshape(n, g, -1).layernorm().reshape(n, c, hw, hw)
    want = torch.nn.functional.group_norm(torch.from_numpy(x), g, eps=1e-5).numpy()
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4)
    row = c // g * hw * hw
    block = min(8, n * g, 48 * 1024 // 8 // (row * 4))
    fires = block >= 4 and row > 16
    assert bool(_blocked(Tensor(x).reshape(n, g, -1).layernorm())) == fires


def test_variance_over_the_last_axis_of_a_4d_tensor():
    """var over the last axis of (2, 64, 33, 257): each of 2 x 64 x 33 rows hands its mean on
    to its sum of squares (against numpy's float64 var), in blocks across the batches' edges."""
    x = np.random.default_rng(4).standard_normal((2, 64, 33, 257)).astype(np.float32) * 3 + 1
    got = Tensor(x).var(-1).numpy()
    np.testing.assert_allclose(got, x.astype(np.float64).var(-1, ddof=1), rtol=1e-4, atol=1e-5)
    assert _blocked(Tensor(x).var(-1))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax_over_a_middle_axis_keeps_its_form(dtype):
    """A softmax over axis 1 of (7, 129, 33): its reduces run once per point of the first and
    last output loops, not of the STORE's leading loops, so no row space is blocked; values
    against numpy."""
    x = special_rows((7, 33, 129), dtype, seed=2).transpose(0, 2, 1).copy()
    t = Tensor(x).softmax(1)
    with np.errstate(all="ignore"):
        want = softmax(x.astype(np.float64).transpose(0, 2, 1)).transpose(0, 2, 1)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(t.numpy().astype(np.float64), want, rtol=rtol, atol=atol)
    assert _blocked(Tensor(x).softmax(1)) == []


@pytest.mark.parametrize("shape", [(4, 12, 64, 64), (2, 3, 5, 129), (7, 3, 129)],
                         ids=lambda s: "x".join(map(str, s)))
def test_a_contiguous_row_space_indexes_without_division(shape):
    """Each leading loop of a contiguous tensor's rows is the flat row's digit, divided one loop
    at a time, so the symbolic rules fold every row's index back to the flat row times its
    length: the blocked kernel holds no integer division or remainder (a logsumexp over rows
    of 64 paid three of each per row and pass, 0.93x unblocked)."""
    (item,) = Tensor(np.zeros(shape, np.float32)).logsumexp(-1).schedule()
    opt = optimize_kernel(lower_only(item.ast))
    assert any(a.startswith("ROWS ") for a in actions(opt))
    assert not [n.op for n in opt.toposort() if n.op in (Ops.IDIV, Ops.MOD)]
