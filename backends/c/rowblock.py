"""Rows in blocks, printed: the row loop the row-block action marked ("rows", b)
(rules/row_block_helpers.py) as a loop over blocks of b rows whose passes each run over the
block's rows.

In: the row loop's Scope as the renderer built it (its items the row's passes: statements, the
reduces' loops and calls, the output loop), the C types of the names (`vartypes`) and the names
defined outside it. Out: `block_rows` rewrites the Scope in place and says into how many passes.

The row's items are cut before a loop (or after a block-library reduce's call) where every
name defined before the cut and read after it is a value (a scalar or a vector, not an array)
no later item assigns: each such name is kept per row of the block in an array (`name_b[b]`)
at the end of its pass and read back at the start of the passes that read it. Each row runs
the same statements on the same values in the same order. Declarations that read nothing of
the row (an accumulator's identity) move down to their first reader first, so a sum's
accumulators declared before the row's max do not hold the cut there.
"""

from __future__ import annotations

import re

from .ctext import Loop, Scope, Stmt

_NAME = re.compile(r"\b[a-z]+[0-9]+\b")  # the renderer's names: a prefix and its counter (fresh)
_CALL = "rg_reduce_"  # a block-library reduce: a pass over the row with no loop printed here
# a kernel-local row on the stack (render's `_open_local`): one a row of the block, each pass
# pointing its name at its row's
_LOCAL = re.compile(r"^(\w+) (loc[0-9]+)\[([0-9]+)\]"
                    r"((?: __attribute__\(\(aligned\([0-9]+\)\)\))?);$")


def _text(item: str | Stmt | Scope) -> str:
    if not isinstance(item, Scope):
        return str(item)
    return "\n".join(str(s.head) + "\n" + "\n".join(str(x) for x in s.items
                                                      if not isinstance(x, Scope))
                     for s in item.tree())


def _assigns(name: str, text: str) -> bool:
    return re.search(rf"\b{name}\s*(?:\[[^]]*\]\s*)?[-+*/|&^]?=(?!=)", text) is not None


def _kept(ctype: str | None) -> bool:
    """Whether a value of this C type can be kept per row in an array (not an array itself)."""
    return ctype is not None and "*" not in ctype and "[" not in ctype


def block_rows(row: Scope, block: int, vartypes: dict[str, str], escaped: set[str],
               outside: set[str]) -> int:
    """Rewrite `row` (a Loop scope of step 1) into blocks of `block` rows, each pass a loop
    over the block's rows; returns the passes (0: unchanged, no cut found)."""
    head = row.loop
    if head is None or head.step != 1:
        return 0
    var = head.var
    locals_ = {m[2]: m for m in (_LOCAL.match(x) for x in row.items if isinstance(x, str)) if m}
    items = [x for x in row.items if not (isinstance(x, str) and _LOCAL.match(x))]
    texts = [_text(x) for x in items]
    # a declaration reading nothing of the row moves down to just before its first reader
    for k in range(len(items) - 1, -1, -1):
        if not isinstance(items[k], str) or re.search(rf"\b{var}\b", texts[k]):
            continue
        seen = set().union(*(_NAME.findall(t) for t in texts[:k])) - outside
        mine = set(_NAME.findall(texts[k])) - outside
        if not mine or mine & seen:
            continue
        j = next((j for j in range(k + 1, len(items))
                  if mine & set(_NAME.findall(texts[j]))), k + 1)
        items.insert(j - 1, items.pop(k))
        texts.insert(j - 1, texts.pop(k))
    names = [set(_NAME.findall(t)) - outside - {var} for t in texts]
    for n in locals_:  # (declared at the block's level: defined before every item)
        for ns in names:
            ns.discard(n)
    first: dict[str, int] = {}
    for k, ns in enumerate(names):
        for n in ns:
            first.setdefault(n, k)

    def crossing(a: int, c: int) -> set[str] | None:
        """The names defined in items[a:c] read after c, or None if one cannot be kept."""
        later = "\n".join(texts[c:])
        out = {n for k in range(a, c) for n in names[k] if first[n] == k
               and any(n in ns for ns in names[c:])}
        if any(not _kept(vartypes.get(n)) or _assigns(n, later) for n in out):
            return None
        return out

    def work(a: int, c: int) -> bool:  # a pass: a loop, or a block-library reduce's call
        return any(isinstance(items[k], Scope) or _CALL in texts[k] for k in range(a, c))

    cuts: list[int] = []
    loops = [k for k, x in enumerate(items) if isinstance(x, Scope)]
    for j, lo in zip(loops, [0, *(k + 1 for k in loops)]):
        start = cuts[-1] if cuts else 0
        for c in range(j, max(lo, start + 1) - 1, -1):
            if work(start, c) and crossing(0, c) is not None:
                cuts.append(c)
                break
    if not cuts:
        return 0
    bounds = [0, *cuts, len(items)]
    kept = sorted(set().union(*(crossing(0, c) or set() for c in cuts)), key=first.__getitem__)
    rb, nb, b = f"{var}b_", f"{var}n_", f"{var}i_"
    stop = head.stop
    body: list[str | Stmt | Scope] = [
        f"const int64_t {nb} = {stop} - {rb} < {block} ? {stop} - {rb} : {block};",
        *(f"{vartypes[n]} {n}_b[{block}];" for n in kept),
        *(f"{m[1]} {n}_b[{block}][{m[3]}]{m[4]};" for n, m in locals_.items())]
    for a, c in zip(bounds, bounds[1:]):
        inner = Scope(Loop(b, nb), row.bound)
        inner.items.append(f"const int64_t {var} = {rb} + {b};")
        reads = set().union(*names[a:c])
        inner.items += [f"const {vartypes[n]} {n} = {n}_b[{b}];" for n in kept
                        if first[n] < a and n in reads]
        inner.items += [f"{m[1]} *const {n} = {n}_b[{b}];" for n, m in locals_.items()
                        if any(re.search(rf"\b{n}\b", t) for t in texts[a:c])]
        inner.items += items[a:c]
        inner.items += [f"{n}_b[{b}] = {n};" for n in kept if a <= first[n] < c]
        body.append(inner)
    escaped.update(kept)  # (read by a line, not a statement: `_layout` keeps them out of runs)
    row.head = head._replace(var=rb, step=block)
    row.items = body
    return len(cuts) + 1
