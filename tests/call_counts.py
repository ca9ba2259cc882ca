"""The work a call does, counted with no clock (tests/test_jit.py, tests/test_latency.py)."""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable


def python_calls(fn: Callable[[], object]) -> collections.Counter:
    """Every Python function `fn()` enters (file:function) and every C function it calls
    (C:name), counted."""
    calls: collections.Counter = collections.Counter()

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            calls[f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"] += 1
        elif event == "c_call":
            calls[f"C:{getattr(arg, '__qualname__', arg)}"] += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls
