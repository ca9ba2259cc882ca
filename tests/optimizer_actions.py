"""The optimizer's actions on each kernel of a tensor's schedule, as DEBUG=2 prints them: what
the tests of an action's choice read (which action a program takes, not its values)."""

from __future__ import annotations

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel


def kernel_actions(t: Tensor) -> list[list[str]]:
    """The actions taken on each kernel of t's schedule, a list per kernel."""
    return [actions(optimize_kernel(low))
            for low in (lower_only(item.ast) for item in t.schedule())]


def schedule_actions(t: Tensor) -> list[str]:
    """The actions taken on every kernel of t's schedule, in one list."""
    return [a for kernel in kernel_actions(t) for a in kernel]


def optimized_kernels(t: Tensor) -> list[tuple[object, list[str]]]:
    """Each kernel of t's schedule after the optimizer, with the actions taken on it."""
    out = []
    for item in t.schedule():
        low = lower_only(item.ast)
        opt = optimize_kernel(low)
        out.append((opt, actions(opt)))
    return out
