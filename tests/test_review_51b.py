"""Review of round 51's kernel and optimizer changes (rev51b): what the review found wrong,
each against an independent oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import blocks


@pytest.mark.parametrize("name", ["rg_block_vf32_99", "rg_block_zf64_5x_stream",
                                  "rg_pack_vf32_group", "rg_reduce_sum_f32"])
def test_a_name_of_the_block_librarys_pattern_that_it_does_not_define_is_refused(name):
    """load_for refuses a function the block library does not define, by name, before it
    builds anything: a name that only looks like one (a block of 99 rows, the panel copy's
    old `_group` name, a `sum` reduction) built the whole 16-block library, or an empty one,
    and the kernel calling it then failed to load on an undefined symbol."""
    built = []
    with pytest.raises(ValueError, match=f"'{name}' is no function of the block library"):
        blocks.load_for([name], lambda kernels, mode: built.append(kernels))
    assert built == []


DIAGONALS = [0, 3, -3, 2**31 - 2, -(2**31) + 1, 2**31 + 5, -(2**31) - 5, 2**40, -(2**40)]


@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (7, 5), (2, 3, 4)])
@pytest.mark.parametrize("diagonal", DIAGONALS)
def test_tril_and_triu_with_a_diagonal_past_the_matrix_match_numpy(shape, diagonal):
    """tril/triu with a diagonal past either end of the matrix keep all of it or none of it,
    as numpy's: the positions plus a diagonal near 2**31 wrapped in int32 (tril(2**31 - 2)
    kept nothing), and one past int32 raised a bare OverflowError."""
    x = np.arange(1, 1 + math.prod(shape), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(Tensor(x).tril(diagonal).numpy(), np.tril(x, diagonal))
    np.testing.assert_array_equal(Tensor(x).triu(diagonal).numpy(), np.triu(x, diagonal))


@pytest.mark.parametrize("rows,cols", [(77, 100), (40, 13), (100, 37)])
def test_a_running_sum_whose_column_loop_is_vectorized_adds_each_step_once(rows, cols):
    """A running sum down the rows keeps one accumulator per column (acc[c] += x[r, c]): its
    column loop may run in vectors (each column a lane), but no iteration may run twice
    (render.py's `_overlap_tails`: the last full vector overlapping the one before would add
    those columns' values again). The kernel's column loop is marked "upcast" by hand here
    (`omp simd`), and the C is run against numpy."""
    from rulegrad.backends.c.build import build_library
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.backends.c.render import render_kernel
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import toposort

    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    (item,) = Tensor(x).cumsum(0).schedule()
    ast = optimize_kernel(lower_only(item.ast))
    (_scan,) = [n for n in toposort(ast) if n.op is Ops.RANGE and n.arg[1] == "scan"]
    (col,) = [n for n in toposort(ast) if n.op is Ops.RANGE and n.arg[1] == "loop"]
    ast = ast.substitute({col: col.replace(arg=(col.arg[0], "upcast"))})
    rk = render_kernel(ast, "rev51b_scan")
    assert "#pragma omp simd" in rk.source
    out = np.zeros_like(x)
    lib = build_library([rk])  # (held: a released library is unloaded)
    lib.function(rk.cname, 2)(out.ctypes.data, x.ctypes.data)
    np.testing.assert_allclose(out, np.cumsum(x, 0, dtype=np.float64), rtol=1e-5, atol=1e-5)
