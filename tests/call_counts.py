"""The work a call does, counted with no clock (tests/test_jit.py, tests/test_latency.py,
tests/test_step_latency.py, tests/test_step_reuse.py)."""

from __future__ import annotations

import collections
import math
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


def nodes_walked(fn: Callable[[], object]) -> int:
    """How many nodes the graph walks (runtime/uop.py's toposort) give back while fn() runs."""
    from rulegrad.runtime import uop

    total = [0]
    code = uop.toposort.__code__

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code:
            total[0] += len(arg)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return total[0]


def loop_trips(t) -> int:
    """The loop iterations of t's kernels, from their optimized ASTs: per REDUCE and STORE, the
    product of the trip counts of the loops it runs in (a scan's loop once: its STORE's)."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.runtime.loops import free_ranges, range_size
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import toposort

    total = 0
    for item in t.schedule():
        ast = optimize_kernel(lower_only(item.ast))
        deps = free_ranges(ast)
        for node in toposort(ast):
            if node.op is Ops.REDUCE:
                own = {r for r in node.src[1:] if r.arg[-1] != "scan"}
                total += math.prod(range_size(r) for r in set(deps[node]) | own)
            elif node.op is Ops.STORE:  # (a STORE binds its loops: deps has none for it)
                total += math.prod(range_size(r) for r in node.src[2:] if r.op is Ops.RANGE)
    return total
