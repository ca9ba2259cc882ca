"""Lowering: the scheduler's kernel AST -> the AST the C renderer prints.

In: a kernel AST (backends/KERNEL_AST.md). Out: the same kernel with the late decompositions
of `rules/lower.rules` applied (float16 arithmetic through float32, MULACC, power-of-two index
division, decided valid masks). One line per pass, like the scheduler.
"""

from __future__ import annotations

from rulegrad.rules import matcher
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.runtime.uop import UOp


def lower_kernel(ast: UOp) -> UOp:
    # decompositions and mask folding, to a fixed point: the renderer's table then needs no
    # float16 arithmetic, no MULACC, and every LOAD with a valid really is conditional
    return graph_rewrite(ast, matcher("lower", "lower"), name="lower")
