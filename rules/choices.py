"""The kernel optimizer's choices: the sizes and switches its actions decide by, as one record.

In: nothing (a `Choices` is built by the caller: the default, or one found by search). Out:
`current()`, the record the helpers of `opt.rules` read while one kernel is optimized, and
`chosen(c)`, which makes `c` current for a `with` block (backends/c/opt.py's
`optimize_kernel`) and yields the list `taken(line)` appends to: the actions (a reduce
unrolled, merged, split or threaded, a product packed, a reduce interchanged), each recorded by
the helper that takes it, which `optimize_kernel` keeps on the optimized kernel (DEBUG=2
prints them).

Every field is None by default, and a helper reading None uses its own heuristic (the module
constant named beside it, e.g. runtime/target.py's PARALLEL_MIN_WORK), so `Choices()` is exactly
the optimizer without search. A search (`RULEGRAD_BEAM`, backends/c/beam.py) times records that
set some fields and keeps the fastest. Each field only moves a threshold or a size of an action
that keeps its values (threads, packing, tiles, register blocks) or stays within the reduction
contract (runtime/semantics.py): no choice here can ask for another computation.

The record is carried in a context variable, not passed through the generated matchers: the
rules call their helpers with the node only, and a kernel is optimized start to end in one
`with chosen(...)` block, on one thread.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from rulegrad.runtime.record import FrozenRecord
from rulegrad.runtime.target import parallel_min_work


class Choices(FrozenRecord):
    """Per-kernel choices; None: the helper's heuristic (the name in brackets). A frozen
    record (runtime/record.py): a process's first kernel imports it."""

    __slots__ = ("parallel_min_work", "pack_min_work", "pack_layout", "grab_tiles",
                 "grabs_per_thread", "rows_per_pass", "vectors_max")
    # loop iterations x loads (or multiply-adds) from which a loop nest takes threads
    # (target.PARALLEL_MIN_WORK: packing, PARALLEL, THREAD, an interchange's blocks)
    parallel_min_work: int | None
    # multiply-adds from which a sum of products is packed (pack_helpers.MIN_WORK)
    pack_min_work: int | None
    # which column range a packed product takes: 0 the cheapest by `_cost`, 1 the next
    pack_layout: int | None
    # row tiles a thread takes at a time (pack_helpers.GRAB_TILES) and the grabs per thread
    # that bound it (pack_helpers.GRABS_PER_THREAD)
    grab_tiles: int | None
    grabs_per_thread: int | None
    # an interchanged column sum's rows per pass (interchange_helpers.ROWS_PER_PASS) and its
    # register blocks' widest, in vectors (interchange_helpers.VECTORS_MAX)
    rows_per_pass: int | None
    vectors_max: int | None

    def __init__(self, parallel_min_work: int | None = None, pack_min_work: int | None = None,
                 pack_layout: int | None = None, grab_tiles: int | None = None,
                 grabs_per_thread: int | None = None, rows_per_pass: int | None = None,
                 vectors_max: int | None = None) -> None:
        self._init(parallel_min_work, pack_min_work, pack_layout, grab_tiles, grabs_per_thread,
                   rows_per_pass, vectors_max)

    def set_fields(self) -> dict[str, int]:
        """The fields that differ from the heuristic, by name."""
        return {k: v for k, v in zip(self._fields, self._values(self)) if v is not None}

    def describe(self) -> str:
        """`parallel_min_work=65536 grab_tiles=4`, or `heuristic` when nothing is set."""
        fields = self.set_fields()
        return " ".join(f"{k}={v}" for k, v in fields.items()) or "heuristic"

    @staticmethod
    def from_fields(fields: dict[str, object]) -> Choices | None:
        """The record of `set_fields()`'s output (read back from the cache); None when a name
        is unknown or a value is not a non-negative int (an entry of another version)."""
        known = set(Choices._fields)
        if not isinstance(fields, dict) or any(
                k not in known or type(v) is not int or v < 0 for k, v in fields.items()):
            return None
        return Choices(**fields)  # type: ignore[arg-type]


DEFAULT = Choices()
_current: contextvars.ContextVar[Choices] = contextvars.ContextVar("rulegrad_choices",
                                                                  default=DEFAULT)
_taken: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("rulegrad_taken",
                                                                          default=None)


def current() -> Choices:
    """The choices of the kernel being optimized (the default outside `chosen`)."""
    return _current.get()


def least_parallel_work() -> int:
    """The work from which the kernel being optimized takes threads: the searched choice, else
    the machine model's (runtime/target.py's `parallel_min_work()`)."""
    return pick(current().parallel_min_work, parallel_min_work())


def pick(value: int | None, heuristic: int) -> int:
    """A choice's value, or the heuristic's when the record leaves it unset."""
    return heuristic if value is None else value


@contextlib.contextmanager
def chosen(choices: Choices) -> Iterator[list[str]]:
    """Make `choices` current while a kernel is optimized; yields the actions `taken` then."""
    token, lines = _current.set(choices), _taken.set([])
    try:
        yield _taken.get()  # type: ignore[misc]
    finally:
        _current.reset(token)
        _taken.reset(lines)


def recorded() -> tuple[str, ...]:
    """The actions `taken` so far on the kernel being optimized (none outside `chosen`): an
    action that makes loops takes ids none of them names (rules/peel_helpers.py)."""
    return tuple(_taken.get() or ())


def taken(line: str) -> None:
    """Record an action on the kernel being optimized (none outside `chosen`: a rule's helper
    run alone, by `rulegrad check` or generator/optdiff.py)."""
    lines = _taken.get()
    if lines is not None:
        lines.append(line)
