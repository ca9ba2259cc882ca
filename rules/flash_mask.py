"""The keys each tile of a masked attention head's rows must visit (the flash action's windows).

In: a flash STORE out[.., i, c] = sum_j x(i, j) * v(j, c) whose local scores s(i, l) are read
only under a mask: a select whose condition is a function of the row i and the key alone (a
causal `k <= q`, a sliding window `q - w < k <= q`: comparisons of range indices, as
runtime/tensor_ops.py's `_tri` builds them). Out: per tile of rows, the keys [lo, hi) that
hold every key the mask keeps for one of its rows (at least one key), or None.

Why the keys outside are skipped with no change of value (backends/c/flash.py):
- the scores: every read of s at key l sits in the kept arm of a select on the mask at l, so
  a score the mask drops is never used; its panel is not computed.
- the output's sum: x(i, j) = e(i, j) / S(i) (or +0 where a per-row condition says so: a row
  that sees no key), e a kernel-local row where(mask, A, B) with A an
  exp and B = exp(-inf - y) for a per-row y, S the sum of e over every key. -inf - y is -inf
  or NaN whatever y is, so B is +0 or NaN. If +0, a skipped key adds fma(+0, v, acc) = acc,
  bit for bit, when v is finite (the kernel checks each head's V, and visits every key when
  it holds an inf or a NaN: 0 * inf is NaN). If NaN, the row has a dropped key, so S is NaN,
  and so is every x of the row, among them the keys of its window (never empty): the row's
  output is NaN either way.
- the row's passes (`_row_passes`, `Flash.narrowed`), when its max is y = max_k where(c, a, -inf)
  over the same masked a as e's kept arm exp(a - y), and e is read by the sum and the fill
  only. Over a tile, every key outside its window is dropped by c for each of its rows (the
  window holds every key c keeps for one of them, and at least one key). The max: a dropped
  key's value is -inf exactly (the select, whatever its score, NaN too), and max(m, -inf) = m
  for every m, NaN included (the max propagates NaN and orders -0 < +0: exact in any order,
  so the max over the window is the max over all keys); a row that keeps no key: -inf both
  ways. The exps: written in the window only, and read only there (by the sum and the fill,
  narrowed too). The sum S: a key outside adds B = exp(-inf - y). If y is finite or +inf, B is
  +0, and a sum of exps (never -0) from +0 is the same with +0 added: the same terms, in the
  order of the vector reduce's contract (runtime/semantics.py). Else y is -inf or NaN, B is
  NaN and so is S over all keys; over the window too: it holds a key, whose term is B, or
  exp(a - y) with a kept: NaN when y is NaN, and when y is -inf (the max of the kept a) a is
  -inf, -inf - -inf is NaN. The fill pa(i, j) = x(i, j): written in the window only, the only
  keys the output's sum reads (all the row's passes visit every key when V holds an inf or a
  NaN: backends/c/flash.py's `kl`, `kh`).
A float16 head reads each of these values through casts between float dtypes (each op's result
rounded to float16, widened to float32 for the next: runtime/semantics.py); the matchers look
through them (`_uncast`): a float cast keeps +0, -inf and NaN and is monotone, all the above
uses (a total of exps past float16's range rounds to inf, and +0 / inf is +0).
The masks are evaluated on the grid of rows x keys by runtime/semantics.py (each op's one
meaning), in blocks of rows.
"""

from __future__ import annotations

import math

import numpy as np

from rulegrad.runtime import semantics
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

GRID_BLOCK = 1 << 20  # grid cells evaluated at once (a block of rows: bounded memory)
NEG_INF = -math.inf


def _is_neg_inf(n: UOp) -> bool:
    return n.op is Ops.CONST and n.arg == NEG_INF


def _uncast(n: UOp) -> UOp:
    """n below its casts from a float dtype to a float dtype (a float16 head's roundings)."""
    while n.op is Ops.CAST and n.dtype.is_float and n.src[0].dtype.is_float:
        n = n.src[0]
    return n


def _sub(n: UOp) -> tuple[UOp, UOp] | None:
    """(a, y) of an exp's argument a - y, each below its float casts; else None."""
    n = _uncast(n)
    return (_uncast(n.src[0]), _uncast(n.src[1])) if n.op is Ops.SUB else None


def _masked_exp(n: UOp, r: UOp, deps: dict[UOp, frozenset[UOp]]) -> bool:
    """n is exp(-inf - y), y not reading r (+0 or NaN, the same along r)."""
    n = _uncast(n)
    ay = _sub(n.src[0]) if n.op is Ops.EXP else None
    return ay is not None and _is_neg_inf(ay[0]) and r not in deps[ay[1]]


def _row_mask(e: UOp, deps: dict[UOp, frozenset[UOp]]) -> tuple[UOp, bool] | None:
    """The mask of a local row e(i, r) = where(c, A, B) (or exp(where(c, a, -inf) - y)), A an
    exp and B = exp(-inf - y): (c, whether c true keeps A); else None."""
    v, r = _uncast(e.src[0]), e.src[1]
    if v.op is Ops.WHERE:
        c, a, b = v.src
        for kept, dropped, keeps in ((a, b, True), (b, a, False)):
            if _uncast(kept).op is Ops.EXP and _masked_exp(dropped, r, deps):
                return c, keeps
        return None
    ay = _sub(v.src[0]) if v.op is Ops.EXP else None
    if ay is not None and ay[0].op is Ops.WHERE and r not in deps[ay[1]]:
        c, a, b = ay[0].src
        if _is_neg_inf(b):
            return c, True
        if _is_neg_inf(a):
            return c, False
    return None


def _loop_body(red: UOp, op: Ops) -> UOp | None:
    """The value a REDUCE by `op` over one range combines (its loop form's update unwrapped)."""
    if red.op is not Ops.REDUCE or red.arg is not op or len(red.src) != 2:
        return None
    body = red.src[0]
    if body.op is op and body.src[0].op is Ops.DEFINE_REG:
        body = body.src[1]
    return _uncast(body)


def _max_masked(e: UOp, keeps: bool, deps: dict[UOp, frozenset[UOp]]) -> UOp | None:
    """The range of the row max y of e(i, r) = where(c, exp(a - y), exp(-inf - y)) (or
    exp(where(c, a, -inf) - y)) when y is the max over a range k of its own of the same masked
    scores, where(c, a, -inf) read at k (keeping a where c is `keeps`); else None."""
    v, r = _uncast(e.src[0]), e.src[1]
    if v.op is Ops.WHERE:
        c, kept, dropped = v.src[0], *(v.src[1:] if keeps else v.src[:0:-1])
        kept, dropped = _uncast(kept), _uncast(dropped)
        ay = _sub(kept.src[0]) if kept.op is Ops.EXP else None
        if ay is None:
            return None
        a, y = ay
        if _sub(dropped.src[0])[1] is not y:  # type: ignore[index]  (exp(-inf - y), _row_mask's)
            return None
    else:
        (w, y) = _sub(v.src[0])  # type: ignore[misc]  (_row_mask saw it)
        c, a1, a2 = w.src
        a = a1 if keeps else a2
    body = _loop_body(y, Ops.MAX)
    if body is None or body.op is not Ops.WHERE or r in deps[y]:
        return None
    k = y.src[1]
    c2, a2_, b2 = body.src[0], *(body.src[1:] if keeps else body.src[:0:-1])
    if not _is_neg_inf(b2) or k.op is not Ops.RANGE or range_size(k) != range_size(r):
        return None
    # (the same scores up to float casts, which keep -inf, NaN and the order)
    if c2.substitute({k: r}) is not c or _uncast(a2_.substitute({k: r})) is not _uncast(a):
        return None
    return k


def _row_passes(root: UOp, e: UOp, keeps: bool, r: UOp, j: UOp,
                deps: dict[UOp, frozenset[UOp]]) -> tuple[int, ...]:
    """The ranges of a row's passes that visit the window only (see the docstring): its max's,
    its exps' (e's), its sum's (r) and its fill's (j), when the max is of e's masked scores and
    e is read by the sum and the fill only; else none."""
    k = _max_masked(e, keeps, deps)
    if k is None:
        return ()
    reads = [n for n in toposort(root) if n.op is Ops.INDEX and n.src[0] is e]
    if any(len(n.src) != 2 or (n.src[1] is not r and n.src[1] is not j) for n in reads):
        return ()
    return tuple(dict.fromkeys(x.arg[0] for x in (k, e.src[1], r, j)))


def _unselected(x: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> UOp:
    """x without a select of +0 by a per-row condition (sdpa's row that sees no key weighs
    every key 0): where it picks 0, a skipped key adds fma(+0, v, acc) = acc too."""
    x = _uncast(x)
    while x.op is Ops.WHERE and j not in deps[x.src[0]]:
        zero = [n for n in x.src[1:] if n.op is Ops.CONST and n.arg == 0
                and math.copysign(1.0, n.arg) > 0]
        if len(zero) != 1:
            break
        x = _uncast(x.src[2] if zero[0] is x.src[1] else x.src[1])
    return x


def _grid(c: UOp, i: UOp, r: UOp, rows: np.ndarray, keys: np.ndarray) -> np.ndarray | None:
    """c over rows x keys (i and r their values), or None when c reads anything else."""
    values: dict[UOp, np.ndarray] = {}
    for n in toposort(c):
        if n is i or n is r:
            values[n] = (rows[:, None] if n is i else keys[None, :]).astype(n.dtype.np)
        elif n.op is Ops.CONST:
            values[n] = np.asarray(n.arg, dtype=n.dtype.np)
        elif n.op is Ops.CAST:
            values[n] = semantics.cast(values[n.src[0]], n.dtype.np)
        elif n.op in semantics.ALU and n.src:
            try:
                values[n] = semantics.alu(n.op, n.dtype.np, *(values[s] for s in n.src))
            except semantics.SemanticsError:
                return None
        else:
            return None
    return np.broadcast_to(values[c], (len(rows), len(keys))).astype(np.bool_)


def _guarded(root: UOp, s: UOp, i: UOp, deps: dict[UOp, frozenset[UOp]]
             ) -> list[tuple[UOp, UOp, bool]] | None:
    """The masks guarding the reads of the local array s under root: (condition, key range,
    the condition's value that selects the arm with the read) of each select whose condition
    reads i and one key range only, and whose arm reads s at that range; None when a read of s
    is under no such select (its value would be used for every key)."""
    masks: dict[tuple[UOp, UOp, bool], None] = {}
    Guard = tuple[UOp, UOp, bool] | None
    seen: set[tuple[UOp, Guard]] = set()
    work: list[tuple[UOp, Guard]] = [(root, None)]
    while work:
        n, guard = work.pop()
        if (n, guard) in seen:
            continue
        seen.add((n, guard))
        if n.op is Ops.INDEX and n.src[0] is s:
            if guard is None or len(n.src) != 2 or n.src[1] is not guard[1]:
                return None
            masks[guard] = None
            continue
        if n.op is Ops.WHERE:
            c, a, b = n.src
            keys = [k for k in deps[c] if k is not i]
            if len(keys) == 1 and keys[0].op is Ops.RANGE:
                work += [(c, guard), (a, (c, keys[0], True)), (b, (c, keys[0], False))]
                continue
        work += [(x, guard) for x in n.src]
    return list(masks)


def _shares(x: UOp) -> tuple[UOp, UOp] | None:
    """(e, total) of x = e / total, or of e * (1 / total) (Tensor.softmax's form): either way a
    dropped key's +0 weight stays +0 over a finite total, and NaN with a NaN one."""
    if x.op is Ops.FDIV:
        return _uncast(x.src[0]), _uncast(x.src[1])
    if x.op is Ops.MUL:
        recips = [n for n in x.src if _uncast(n).op is Ops.RECIPROCAL]
        if len(recips) == 1:
            e = x.src[1] if recips[0] is x.src[0] else x.src[0]
            return _uncast(e), _uncast(_uncast(recips[0]).src[0])
    return None


def key_windows(st: UOp, i: UOp, out: UOp, x: UOp, scores: list[UOp], tile: int,
                deps: dict[UOp, frozenset[UOp]]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Per tile of `tile` rows of range i, the keys [lo, hi) (flat: lo0, hi0, lo1, ...) of the
    output's sum (over its one range, x(i, j) = e(i, j) / sum of e, or e(i, j) * (1 / sum))
    and of the local `scores` (each read only under a mask), and the ranges of the row's passes
    that visit them too (`_row_passes`); None when they are not so, or when no tile skips a key."""
    ks = out.src[1:]
    if len(ks) != 1 or len(scores) != 1:
        return None
    shares = _shares(_unselected(x, ks[0], deps))
    if shares is None:
        return None
    j, (load, total) = ks[0], shares
    if load.op is not Ops.LOAD or load.src[0].op is not Ops.INDEX:
        return None
    e, at = load.src[0].src[0], load.src[0].src[1:]
    n = range_size(j)
    if e.op is not Ops.DEFINE_LOCAL or len(e.src) != 2 or at != (j,) or n is None:
        return None
    if total.op is not Ops.REDUCE or total.arg is not Ops.ADD or len(total.src) != 2:
        return None
    body, r = total.src[0], total.src[1]
    if body.op is Ops.ADD and body.src[0].op is Ops.DEFINE_REG:  # (a loop-form reduce's update)
        body = _uncast(body.src[1])
    if body.op is not Ops.LOAD or body.src[0].op is not Ops.INDEX \
            or body.src[0].src != (e, r) or range_size(r) != n:
        return None
    row = _row_mask(e, deps)
    s = scores[0]
    guards = _guarded(st.src[1], s, i, deps)
    if row is None or guards is None or range_size(s.src[1]) != n:
        return None
    masks = [(row[0], e.src[1], row[1])] + guards
    if any(range_size(k) != n for _, k, _ in masks):
        return None
    # the same condition over each reader's own key range is one mask (hash-consed nodes):
    # read over the first key range
    k0 = masks[0][1]
    conds = list(dict.fromkeys((c.substitute({k: k0}), keeps) for c, k, keeps in masks))
    rows_n = range_size(i)
    assert rows_n is not None
    keys = np.arange(n)
    first, last = np.empty(rows_n, dtype=np.int64), np.empty(rows_n, dtype=np.int64)
    step = max(1, GRID_BLOCK // max(n, 1))
    for start in range(0, rows_n, step):
        rows = np.arange(start, min(start + step, rows_n))
        seen = np.zeros((len(rows), n), dtype=np.bool_)
        for c, keeps in conds:
            g = _grid(c, i, k0, rows, keys)
            if g is None:
                return None
            seen |= g if keeps else ~g
        some = seen.any(axis=1)  # (a row that sees no key: no bound of its own)
        first[rows] = np.where(some, seen.argmax(axis=1), n)
        last[rows] = np.where(some, n - seen[:, ::-1].argmax(axis=1), 0)
    tiles = np.arange(0, rows_n, tile)
    lo, hi = np.minimum.reduceat(first, tiles), np.maximum.reduceat(last, tiles)
    none = lo >= hi  # a tile whose rows see no key visits one: their NaN is computed
    lo, hi = np.where(none, 0, lo), np.where(none, 1, hi)
    windows = [int(x) for pair in zip(lo, hi) for x in pair]
    if all(lo == 0 and hi == n for lo, hi in zip(windows[::2], windows[1::2])):
        return None
    return tuple(windows), _row_passes(st.src[1], e, row[1], r, j, deps)
