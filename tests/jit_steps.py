"""A training step to jit, shared by the tests of optimizer settings under rulegrad.jit."""

from __future__ import annotations


def product_step(opt, w):
    """One step of `opt` on (x @ w).sum(), as a function of x: `rulegrad.jit(product_step(...))`."""

    def step(x):
        opt.zero_grad()
        loss = (x @ w).sum()
        loss.backward()
        opt.step(loss)
        return loss

    return step
