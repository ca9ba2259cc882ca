"""The ways a caller can keep a realized result (tests/test_jit.py, tests/test_plans.py check
that a replay never writes a result that is still held in any of them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rulegrad.runtime.realize import buffer_of

HOLDERS = ["tensor", "array", "graph", "buffer", "base"]


def hold(t: Any, holder: str) -> Any:
    """t kept as `holder`: the Tensor itself, its array, a graph over it, its Buffer, or its
    BUFFER node."""
    return {"tensor": lambda: t, "array": t.numpy, "graph": lambda: t * 1,
            "buffer": lambda: buffer_of(t.uop), "base": lambda: t.uop.base}[holder]()


def values_held(held: Any, holder: str) -> np.ndarray:
    """The values a result kept by `hold` shows now."""
    if holder in ("tensor", "graph"):
        return held.numpy()
    if holder in ("buffer", "base"):
        return (held if holder == "buffer" else held.arg).data
    return held
