"""Recording the kernel launches of a step, for `rulegrad.jit` (runtime/jit.py) to replay.

In: while a recording is open, each compiled program the C backend runs reports its kernels'
buffers (`launched`), and what cannot be replayed reports why (`refuse`). Out: the `Recording`:
the launches in order, or the reason the step cannot be captured.

This module is at the bottom of the package (it imports nothing of rulegrad), so the backend
that launches, the realize plans that must step aside, and the jit on top can all reach it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Launch:
    """One compiled program's run: per kernel, its buffers (slot order) and the slots it
    writes."""

    prog: Any                        # backends.c.run.CProgram (kept loaded while replayed)
    bufs: list[tuple[Any, ...]]      # per kernel: its Buffers, one per parameter
    written: list[frozenset[int]]    # per kernel: the slots its STOREs write


@dataclass
class Recording:
    launches: list[Launch] = field(default_factory=list)
    refused: str | None = None  # why this step cannot be replayed (it then runs as it is)
    host_reads: int = 0         # values read back to Python inside the step (.numpy, .item)
    results: list[tuple[Any, tuple]] = field(default_factory=list)  # (Buffer, shape) returned
    # callbacks that take the replay's `forget` (a function that drops it): an object whose
    # Python settings the recorded kernels froze (an optimizer's float lr) calls it when one
    # changes, since a replay runs no Python and would go on with the recorded value
    watchers: list[Any] = field(default_factory=list)


active: Recording | None = None


def launched(prog: Any, bufs: list[tuple[Any, ...]], written: list[frozenset[int]]) -> None:
    if active is not None:
        active.launches.append(Launch(prog, bufs, written))


def refuse(reason: str) -> None:
    if active is not None and active.refused is None:
        active.refused = reason


def watch(register: Any) -> None:
    """`register(forget)` is called once the step recorded now is replayed (see Recording)."""
    if active is not None:
        active.watchers.append(register)


def host_read() -> None:
    if active is not None:
        active.host_reads += 1
