"""Error in ulps, and whether kernels get fused multiply-adds: shared by the exp and log cores'
tests (their stated bounds differ with and without FMA)."""
from __future__ import annotations

import os

import numpy as np

from rulegrad.runtime import target


def fused() -> bool:
    """Whether kernels are built for this CPU (the default flags) and it has FMA instructions."""
    flags = os.environ.get("RULEGRAD_CFLAGS", "").split()
    return (not flags or "-march=native" in flags) and "fma" in target.cpu().flags


def ulps(got: np.ndarray, exact: np.ndarray, dt: type) -> np.ndarray:
    """|got - exact| in ulps of dt at the exact value (the subnormal spacing below)."""
    return np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(exact).astype(dt)).astype(
        np.float64)
