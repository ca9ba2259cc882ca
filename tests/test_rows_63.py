"""Row-wise softmax, log_softmax and logsumexp with the row-block action (opt.rules'
`block_rows`, rules/row_block_helpers.py): a loop fission on the kernel graph, each pass over
a block of rows, what a pass hands on a DEFINE_LOCAL of one value a row, printed by the
renderer's generic path.

Values against numpy in float64 with NaN, +inf and -inf in rows, rows of -inf and of +inf
whole, rows of one, row lengths 1, 5, 33, 129, 1000 and 4099, row counts of 1, 7, 8192 and a
prime, float32 and float16, both schedulers. The blocked kernel also runs in the numpy kernel
interpreter (an evaluator of the AST alone: no C). Whether the rows were blocked is read from
the kernels' recorded actions (DEBUG=2's), never timed; L1 is set to 48 KB (the machine's facts
pick the block: `RULEGRAD_L1_BYTES`) so the same shapes block everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels
from row_oracles import ROW_PROGRAMS as PROGRAMS
from row_oracles import ROW_TOL as TOL
from row_oracles import check_rows as _check
from row_oracles import special_rows
from row_oracles import want_rows as _want

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.kernel_interp import run_kernel
from rulegrad.rules.row_block_helpers import row_blocked
from rulegrad.runtime import target
from rulegrad.runtime.loops import stride
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import UNROLL_MAX
from rulegrad.runtime.uop import UOp

# rows of 129 (8192 of them, 13: a block of 8 and a short one of 5; one row), 33 (a prime
# count), 1000 and 4099 (long: the row form), 5 (across lanes), 1 (rows of one)
SHAPES = [(8192, 129), (13, 129), (1, 129), (1031, 33), (7, 33), (7, 1000), (3, 4099),
          (4099, 5), (50, 1), (1, 1)]


@pytest.fixture(autouse=True)
def _l1(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_rows_equal_numpy(name, shape, dtype):
    _check(name, shape, dtype)


@pytest.mark.parametrize("shape", [(13, 129), (1031, 33)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_rows_equal_numpy_kernelize(monkeypatch, name, shape):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", "kernelize")
    _check(name, shape, "float16")
    _check(name, shape, "float32")


# the vector widths to print at: 512-bit (16-lane exps, a softmax's row of exps filled 16 lanes at
# a time and its sum added up as it is filled, wide_exps') where the CPU has it
_WIDTHS = ["32"] + (["64"] if "avx512f" in target.cpu().flags else [])


@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(13, 129), (1031, 33), (7, 16)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_rows_equal_numpy_at_each_width(monkeypatch, name, shape, dtype, width):
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    _check(name, shape, dtype)


def _blocked(t: Tensor) -> list[str]:
    """The ROWS action of each kernel of t's schedule that took it."""
    return [a for _, acts in optimized_kernels(t) for a in acts if a.startswith("ROWS ")]


# (name, shape, dtype, passes, hand-offs, kept rows): each pass a loop over the block's rows; a
# logsumexp's last pass is its sum, log and store of one value a row; a softmax's kernel-local
# row of exps is one a row of the block, filled in a pass of its own
BLOCKED = [("log_softmax", (8192, 129), "float16", 3, 2, 0),
           ("logsumexp", (8192, 129), "float16", 2, 1, 0),
           ("log_softmax", (13, 129), "float32", 3, 2, 0),
           ("logsumexp", (1031, 33), "float32", 2, 1, 0),
           ("log_softmax", (7, 257), "float16", 3, 2, 0),
           ("softmax", (8192, 129), "float16", 4, 2, 1),
           ("softmax", (13, 129), "float32", 4, 2, 1),
           ("softmax", (8191, 33), "float32", 4, 2, 1)]


def _block(name: str, shape: tuple[int, int], dtype: str) -> int:
    """The rows a block: as many of the row's bytes (read by each pass; a softmax's row of
    exps kept beside them) as fit in an eighth of 48 KB, 4 to 8 of them."""
    row = shape[1] * np.dtype(dtype).itemsize * (2 if name == "softmax" else 1)
    return min(8, shape[0], 48 * 1024 // 8 // row)


@pytest.mark.parametrize("name,shape,dtype,passes,hand,kept", BLOCKED,
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
def test_short_rows_run_in_blocks(name, shape, dtype, passes, hand, kept):
    """Rows of at most an eighth of L1 (48 KB here) in fours to eights: the action fissions the
    row loop into a pass per value handed on, and the values are still numpy's."""
    t = PROGRAMS[name][0](Tensor(special_rows(shape, dtype, seed=3)))
    assert _blocked(t) == [f"ROWS r0 (blocks of {_block(name, shape, dtype)} rows: {passes} "
                           f"passes over the block's rows, {hand} values a row handed on, "
                           f"{kept} rows kept a row)"]
    _check(name, shape, dtype)


@pytest.mark.parametrize("name,shape,dtype", [
    ("log_softmax", (13, 129), "float32"), ("softmax", (13, 129), "float16"),
    ("logsumexp", (1031, 33), "float32"), ("softmax", (7, 33), "float32")], ids=str)
def test_blocked_kernel_in_the_interpreter(name, shape, dtype):
    """The blocked AST itself, run by the numpy kernel interpreter (no C): each pass's array
    read at the right row of the block, the short last block's rows repeated, not past the
    buffer. Also the graph the action made: the STORE over (blocks, rows of a block, ...) and a
    DEFINE_LOCAL per pass handed on."""
    x = special_rows(shape, dtype, seed=5)
    (item,) = PROGRAMS[name][0](Tensor(x)).schedule()
    opt = optimize_kernel(lower_only(item.ast))
    (st,) = opt.src
    block = _block(name, shape, dtype)
    assert [r.src[0].arg for r in st.src[2:4]] == [-(-shape[0] // block), block]
    assert any(n.op is Ops.DEFINE_LOCAL for n in opt.toposort())
    bufs = [np.zeros(item.bufs[0].size, dtype), x.ravel().copy()]
    run_kernel(opt, bufs)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(bufs[0].astype(np.float64), _want(name, x).ravel(), rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("name,shape,dtype", [
    ("logsumexp", (4096, 1024), "float32"), ("log_softmax", (9, 1024), "float16"),
    ("log_softmax", (3, 129), "float32"), ("softmax", (8192, 1000), "float32"),
    ("log_softmax", (4099, 5), "float32"), ("softmax", (7, 4099), "float16")], ids=str)
def test_long_rows_few_rows_and_across_rows_keep_the_row_form(name, shape, dtype):
    """Rows too long for 4 in an eighth of L1 (the row form overlaps a row's loads with the
    last row's arithmetic), fewer than 4 rows and rows across lanes are not blocked."""
    x = np.zeros(shape, dtype)
    assert _blocked(PROGRAMS[name][0](Tensor(x))) == []


def test_a_kernel_that_reads_its_output_is_not_blocked():
    """A kernel whose output buffer is its input too (in place: the scheduler copies through a
    temporary today, so the kernel is built here): a short last block repeats its last row,
    which would read the row it had just overwritten. The same kernel on two buffers blocks."""
    (item,) = Tensor(special_rows((13, 33), "float32", seed=7)).log_softmax(-1).schedule()
    low = lower_only(item.ast)
    ins = [n for n in low.toposort() if n.op is Ops.DEFINE_GLOBAL and n.arg == 1]
    assert len(ins) == 1
    in_place = low.substitute({ins[0]: ins[0].replace(arg=0)})
    assert row_blocked(low) is not None
    assert row_blocked(in_place) is None


def test_stride_through_a_row_clamp():
    """loops.stride of an index through the blocks' clamp min(b * 8 + u, n - 1): a loop the
    clamp does not read steps as before (the renderer's vector loads along a row); the block's
    own rows, which the clamp stops at the last row, have no one step."""
    b, u, k = UOp.range(4, 0), UOp.range(8, 1), UOp.range(33, 2)
    row = (b * 8 + u).minimum(UOp.const(b.dtype, 12))
    assert stride(row * 33 + k, k) == 1
    assert stride(row * 33 + k, u) is None
    assert stride(row * 33 + k, b) is None


@pytest.mark.parametrize("shape", [(8192, 129), (13, 33), (1031, 65), (7, 1), (4096, 12)],
                         ids=lambda s: "x".join(map(str, s)))
def test_layernorm_and_argmax_rows(shape):
    """A layer norm (its mean, then its variance about the mean, then the outputs) and an
    argmax (its max, then the first index holding it) hand values between passes too: against
    torch's layer norm and numpy's argmax of whole numbers (ties: the first index), the blocks
    taken where the rows are short and many, but not where they are UNROLL_MAX or shorter (their
    reduces straight-line code)."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(11).integers(-4, 5, shape).astype(np.float32)
    x[0] = np.random.default_rng(12).standard_normal(shape[1])
    norm = Tensor(x).layernorm()
    want = torch.nn.functional.layer_norm(torch.from_numpy(x), shape[1:]).numpy()
    np.testing.assert_allclose(norm.numpy(), want, rtol=1e-4, atol=1e-5)
    top = Tensor(x).argmax(-1)
    np.testing.assert_array_equal(top.numpy(), x.argmax(-1))
    blocks = shape[0] >= 8 and shape[1] > UNROLL_MAX
    assert bool(_blocked(Tensor(x).layernorm())) == blocks
    assert bool(_blocked(Tensor(x).argmax(-1))) == blocks


def test_a_rows_value_read_from_an_earlier_kernel_is_no_pass(monkeypatch):
    """The kernelize scheduler's softmax reads each row's max from the kernel before it: one
    read of the row, as cheap again in each pass as from an array, and no reduce chain ends
    there, so no kernel of it runs in blocks (values still numpy's)."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", "kernelize")
    x = special_rows((8192, 33), "float32", seed=13)
    assert _blocked(Tensor(x).softmax(-1)) == []
    _check("softmax", (8192, 33), "float32")
