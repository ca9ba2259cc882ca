"""The kernel-local cost rules' bound on sums of products (rules/rangeify.rules' `local_array`
and `local_reduce` guards, and `local_value` through rangeify_helpers.py's `local_value_row`): how
long a sum of products may be that computes or reads a value local to its kernel.

In: the rangeify context (which reduce ranges are matmul-sized sums of products, and the loops of
the kernel each runs in) and the INDEX a local value is read at. Out: None when the products are
short enough, else the reason, for DEBUG=2's `cost` lines. (And split_reduceop's `shares_threads`.)

Why (docs/schedulers.md has the measures): such a kernel is the flash kernel, which packs the
operands that do not vary by row (K^T, V) once per head and reads them whole per tile of rows:
within `local_max_panel()` they stay in L2; longer ones (an MLP's hidden layer) would stream.
"""

from __future__ import annotations

import math
from typing import Any

from rulegrad.rules.pack_helpers import balanced
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import cache_bytes, parallel_min_work, stack_bytes, threads
from rulegrad.runtime.uop import UOp, toposort


def local_max_panel() -> int:
    """The most multiply-adds per row of a kernel-local sum of products: its packed float32
    operand at most half of L2 (attention's two fill it) and a quarter of the stack budget."""
    return min(cache_bytes(2) // 2, stack_bytes() // 4) // 4


PANEL = 16  # the flash kernel's columns come in whole panels of 16 float32 (2 cost as 16)


def shares_threads(rows: int, values: int) -> bool:
    """`rows` (two or more) share the threads evenly, or `values` are too few to thread at all."""
    return (rows > 1 and balanced(rows, threads())) or values < parallel_min_work()


def local_max_array() -> int:
    """The most elements of a kernel-local array: half of L1 as float32, on the stack and in
    L1 while its row's readers run (a larger one goes to a global buffer); at most an eighth
    of the stack budget as float64 (runtime/target.py: the flash panels' stack too)."""
    return min(cache_bytes(1) // (2 * 4), stack_bytes() // (8 * 8))


def ranges_in(*exprs: UOp) -> list[UOp]:
    """The RANGE nodes index expressions depend on, in a stable order."""
    return list(dict.fromkeys(n for e in exprs for n in toposort(e) if n.op is Ops.RANGE))


def _panels(n: int) -> int:
    return -(-n // PANEL) * PANEL


def product_cost(red: UOp) -> int:
    """A sum of products' multiply-adds per output in float32 ones (`local_max_panel`'s unit):
    a float64 one's panels take twice the bytes (docs/schedulers.md, rev67d)."""
    return red.src[0].size // max(red.size, 1) * max(red.dtype.itemsize, 4) // 4


def _size(r: UOp) -> int:
    size = range_size(r)
    return local_max_panel() + 1 if size is None else size  # symbolic: never local


def too_long(ctx: Any, idx: UOp, products: UOp | None = None) -> str | None:
    """Why a value read at `idx` (its row: idx's loop ranges) is not local: a sum of products of
    more than `local_max_panel()` multiply-adds per row computes it (`products`, attention's scores:
    their length times the array's panels) or reads it (one whose reduce ranges are among idx's:
    its length times the panels of its kernel's loops past the row); else None."""
    row = {r for r in idx.src[1:] if r.op is Ops.RANGE and r.arg[1] == "loop"}
    most = 0
    if products is not None:
        cols = math.prod(_size(r) for r in idx.src[1:] if r.op is Ops.RANGE and r not in row)
        most = _panels(cols) * product_cost(products)
    for r in ranges_in(*idx.src[1:], *(idx.arg or ())):
        k = ctx.products.get(r)
        if k is not None:
            cols = math.prod(_size(x) for x in ctx.kernel_loops.get(r, ()) if x not in row)
            most = max(most, k * _panels(cols))
    bound = local_max_panel()
    if most <= bound:
        return None
    return (f"a sum of products of {most} multiply-adds per row > local_max_panel() "
            f"{bound} computes or reads it")
