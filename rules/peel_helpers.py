"""Helpers of `opt.rules`' peel action: a loop whose reads are gated by padding, split into the
iterations where some gate may be false (the border) and those where every gate holds (the
interior), so that the interior's reads are plain loads the upcast action can vectorize.

In: a lowered kernel SINK (backends/KERNEL_AST.md, "after lowering": a padded read is a gated
LOAD, `gate ? buf[off] : 0`). Out: `peeled(sink)`, the SINK with one of its STOREs replaced by
two or three STOREs, one per part of one of its loops, or None when no loop is worth it;
recorded as an action (`PEEL r3 (17 iterations) into r7 r8 r9 (1 + 15 + 1)`), its parts' ids
past every id the kernel's earlier actions named.

A part is a new RANGE over its own iterations (a range starts at 0), the loop's variable being
`start + r'` in it; the gates' conditions are then decided by their bounds (uop.py's vmin and
vmax): in each part a gated LOAD whose gate always holds is a plain one, and one whose gate
never holds is its pad value (what it read before at every iteration of the part).
Every iteration computes what it computed before, in its own loop nest (render.py prints the
stores of each set of loops as one nest, `parallel_helpers.store_groups`).

Only a STORE that the upcast action would take but for its gates is peeled: an innermost output
loop of at least UPCAST_MIN iterations written contiguously, no action on it yet. The loops
peeled are those a gated read along the innermost loop depends on through an affine condition:
a 3x3 stride-2 pool's window padded by 1 runs its first row and column apart from the rest.
A loop whose gates leave no such interior may still be cut into runs over each of which every
gate is decided (`_segments`): a cat's pieces along a middle or the last axis, a wide pad of
one, each run a nest that reads one input (or stores the pad value) with no gate. A triangle's
gate (decided over no run of the row) leaves its loop whole.
"""

from __future__ import annotations

import re

from rulegrad.rules.choices import recorded, taken
from rulegrad.rules.opt_helpers import UPCAST_MIN, along
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import range_size, stride
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

# how many iterations from either end of a loop may be border: a padding's width in windows
# (a window's reach over the stride). A wider border is no padding's (a mask of a cat, a
# triangle): its loop is left whole rather than printed as many nests, unless it cuts into a
# few runs with every gate decided (`_segments`: a cat's pieces)
PEEL_MAX = 8
# how many times the STORE's nodes its parts may print together: a padding's border, interior
# and border are three copies of the body; a cat's pieces each keep one input's reads, together
# about one. A loop whose gates change at every iteration (a running max's window unrolled into
# 13 shifted reads, each gated) is cut into as many runs, each the whole body: a (2, 13) cummax's
# double gradient printed ~190,000 nodes, one body per run of one iteration, and is left whole
PEEL_GROWTH = 4


def _atoms(gate: UOp) -> list[UOp]:
    """The conditions ANDed into a gate."""
    out, work = [], [gate]
    while work:
        n = work.pop()
        if n.op is Ops.AND and n.dtype is dtypes.bool:
            work.extend(n.src)
        else:
            out.append(n)
    return out


def _holds(atoms: list[UOp], r: UOp, at: UOp) -> bool:
    """Every atom true for all values of the other loops, with loop r replaced by `at`."""
    return all(bool(a.substitute({r: at}).vmin) for a in atoms)


def _index(v: int) -> UOp:
    return UOp.const(dtypes.index, v)


def _interior(atoms: list[UOp], r: UOp, n: int) -> tuple[int, int] | None:
    """[lo, hi): the iterations of loop r (n of them) where every atom holds, when they are
    one run that leaves a border of at most PEEL_MAX at either end (and some border)."""
    lo = next((v for v in range(min(n, PEEL_MAX + 1)) if _holds(atoms, r, _index(v))), None)
    hi = next((v + 1 for v in range(n - 1, max(-1, n - PEEL_MAX - 2), -1)
               if _holds(atoms, r, _index(v))), None)
    if lo is None or hi is None or hi - lo < 1 or (lo == 0 and hi == n):
        return None
    # the whole run at once: its bounds say every atom holds across it (an affine condition
    # true at both ends is true between them; any other is checked here, not assumed)
    inside = UOp(Ops.RANGE, r.dtype, (_index(hi - lo),), r.arg) + lo
    return (lo, hi) if _holds(atoms, r, inside) else None


def _parts(st: UOp, r: UOp, cuts: list[int], fresh: int) -> list[UOp]:
    """The STORE once per part of loop r, [cuts[i], cuts[i + 1]) (empty parts left out), each
    over a new RANGE (ids from `fresh`) that replaces r in its loops."""
    out = []
    for start, end in zip(cuts, cuts[1:]):
        if end <= start:
            continue
        part = UOp(Ops.RANGE, r.dtype, (UOp.const(r.src[0].dtype, end - start),),
                   (fresh + len(out), r.arg[1]))
        value = part if start == 0 else part + start
        body = UOp(st.op, st.dtype, tuple(s.substitute({r: value}) for s in st.src[:2]), st.arg)
        body = _decided(body.replace(src=body.src + tuple(part if x is r else x
                                                          for x in st.src[2:])))
        out.append(body)
    return out


def _state(atom: UOp, r: UOp, at: UOp) -> int:
    """1 (true), 0 (false) or -1 (either) for every value of the other loops, r being `at`."""
    a = atom.substitute({r: at})
    return int(a.vmin) if bool(a.vmin) == bool(a.vmax) else -1


def _segments(atoms: list[UOp], r: UOp, n: int) -> list[int] | None:
    """Cuts [0, c1, ..., n] of loop r into runs over each of which every atom is decided (true
    throughout, or false throughout), when there are two or more: a cat's pieces, each then a
    nest reading one input with no gate. An affine
    atom is decided at either end of the loop and changes its state at most twice (false,
    either, true), so its cuts are where it first leaves its first state and last leaves its
    last one (found by bisection); every run is then checked whole, not assumed."""
    def first_change(atom: UOp, values: range) -> int:
        begin = _state(atom, r, _index(values[0]))
        lo, hi = 0, len(values)  # values[lo - 1] (or none) in the first state; find the first
        while lo < hi:  # index whose state differs (len(values) if none)
            mid = (lo + hi) // 2
            if _state(atom, r, _index(values[mid])) == begin:
                lo = mid + 1
            else:
                hi = mid
        return lo

    cuts = {0, n}
    for atom in atoms:
        if _state(atom, r, _index(0)) < 0 or _state(atom, r, _index(n - 1)) < 0:
            return None
        cuts.add(first_change(atom, range(n)))
        cuts.add(n - first_change(atom, range(n - 1, -1, -1)))
    out = sorted(cuts)
    if len(out) < 3:
        return None
    for start, end in zip(out, out[1:]):
        run = UOp(Ops.RANGE, r.dtype, (_index(end - start),), r.arg) + start
        if any(_state(a, r, run) < 0 for a in atoms):
            return None
    return out


def _decided(st: UOp) -> UOp:
    """The STORE with each gated LOAD whose gate is decided over its loops made a plain LOAD
    (the gate always holds) or its pad value (it never does)."""
    swap = {}
    for n in toposort(st):
        if n.op is Ops.LOAD and len(n.src) == 3:
            if n.src[1].vmin:
                swap[n] = n.replace(src=n.src[:1])
            elif not n.src[1].vmax:
                swap[n] = n.src[2]
    return st.substitute(swap) if swap else st


def _candidate(st: UOp) -> list[UOp]:
    """The gate atoms along a STORE's innermost loop, when the upcast action would take the
    STORE but for its gates; else none."""
    if st.op is not Ops.STORE or st.arg is not None or len(st.src[0].src) != 2:
        return []
    ranges = st.src[2:]
    if not ranges or any(r.arg[1] != "loop" or range_size(r) is None for r in ranges):
        return []
    j = ranges[-1]
    if range_size(j) < UPCAST_MIN or stride(st.src[0].src[1], j) != 1:  # type: ignore[operator]
        return []
    nodes = along(st.src[1], j)
    if any(n.op is Ops.REDUCE for n in nodes):
        return []
    # each atom once: the gated loads of one loop share their gates (a cummax gradient's 331
    # atoms were 25 conditions, each substituted and bounded again per copy)
    return list(dict.fromkeys(a for n in nodes if n.op is Ops.LOAD and len(n.src) > 1
                              for a in _atoms(n.src[1])))


def peeled(sink: UOp) -> UOp | None:
    """The kernel with one STORE split along one loop into border and interior parts, or None
    when no STORE has a loop to peel (see the module's docstring)."""
    if sink.arg is not None:  # (the parallel action has run: the stores have their loops)
        return None
    for i, st in enumerate(sink.src):
        atoms = _candidate(st)
        if not atoms:
            continue
        loops = {a: {n for n in toposort(a) if n.op is Ops.RANGE} for a in atoms}
        for r in reversed(st.src[2:]):
            mine = [a for a in atoms if r in loops[a]]
            n = range_size(r)
            cut = _interior(mine, r, n) if mine else None  # type: ignore[arg-type]
            if cut is None or (r is st.src[-1] and cut[1] - cut[0] < UPCAST_MIN):
                # (an interior too short for a vector gains nothing); the loop may still split
                # into runs with every gate decided (a cat's pieces)
                cuts = _segments(mine, r, n) if mine else None  # type: ignore[arg-type]
            else:
                cuts = [0, cut[0], cut[1], n]
            if cuts is None:
                continue
            # (new ids past the kernel's and every id a recorded action names: a loop an
            # earlier action unrolled or merged away keeps its id unused, so each line still
            # names the loop it took)
            fresh = 1 + max([n.arg[0] for n in toposort(sink) if n.op is Ops.RANGE] +
                            [int(x) for line in recorded() for x in re.findall(r"\br(\d+)", line)])
            parts = _parts(st, r, cuts, fresh)
            if sum(len(toposort(p)) for p in parts) > PEEL_GROWTH * len(toposort(st)):
                continue  # (the loop left whole: its parts print more than they gain)
            sizes = [b - a for a, b in zip(cuts, cuts[1:]) if b > a]
            taken(f"PEEL r{r.arg[0]} ({range_size(r)} iterations) into " +
                  " ".join(f"r{fresh + k}" for k in range(len(parts))) +
                  f" ({' + '.join(map(str, sizes))})")
            return sink.replace(src=sink.src[:i] + tuple(parts) + sink.src[i + 1:])
    return None
