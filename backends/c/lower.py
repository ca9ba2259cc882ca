"""Lowering: the scheduler's kernel AST -> the AST the C renderer prints.

In: a kernel AST (backends/KERNEL_AST.md). Out: the same kernel with the late decompositions
of `rules/lower.rules` applied (float16 arithmetic through float32, MULACC, power-of-two index
division, decided valid masks), then the optimizer's actions (`rules/opt.rules`, via
`opt.py`). One line per pass, like the scheduler.
"""

from __future__ import annotations

from rulegrad.rules import matcher
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.runtime.uop import UOp

from .opt import optimize_kernel


def lower_only(ast: UOp) -> UOp:
    # decompositions and mask folding, to a fixed point: the renderer's table then needs no
    # float16 arithmetic, no MULACC, and every LOAD with a valid really is conditional
    return graph_rewrite(ast, matcher("lower", "lower"), name="lower")


def lower_kernel(ast: UOp) -> UOp:
    # the optimizer's actions work on the loop form `lower` makes (REDUCE over a DEFINE_REG)
    return optimize_kernel(lower_only(ast))
