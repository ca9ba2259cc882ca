"""Views as data: the kernelize scheduler's ShapeTracker (tinygrad's older design).

In: a shape and the movement ops applied to it. Out: a `ShapeTracker`, a stack of `View`s, each
(shape, strides, offset, mask), whose `index(idxs)` gives the flat offset into the base's
row-major memory and the condition under which the element exists (outside a PAD's mask the
element is 0 and memory must not be touched).

A movement op on a view is a change of its fields; when no single view can say the result
(a reshape that mixes axes a stride pattern cannot describe), a new view is stacked on top:
its strides then address the row-major layout of the view below. `merge` folds two stacked
views into one where that is exact (`tests/test_view.py` checks every op and merge against
numpy on random movement chains).

`index` is written once over "int or index UOp": with ints it is the reference the tests read
elements with; with UOps it is the index arithmetic of a kernel's loads. So are the row-major
maps both schedulers share: `flatten` / `unflatten` (a buffer's flat offset), `blocks` (the runs
of axes a reshape keeps together, which `View.reshape` also uses) and `reshape_index` (rangeify's
INDEX through a RESHAPE, rangeify.rules' `index_reshape`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .record import FrozenRecord

Shape = tuple[int, ...]
Mask = tuple[tuple[int, int], ...]


def strides_for(shape: Shape) -> tuple[int, ...]:
    """Row-major strides; an axis of size 1 gets stride 0 (it never moves the offset)."""
    out, acc = [], 1
    for s in reversed(shape):
        out.append(0 if s == 1 else acc)
        acc *= s
    return tuple(reversed(out))


# ---------------------------------------------------------------------- int-or-UOp arithmetic
def _mul(a: Any, k: int) -> Any:
    return a if k == 1 else a * k


def _add(a: Any, b: Any) -> Any:
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0:
        return b
    return a + b


def _lt(a: Any, k: int) -> Any:
    return a < k if isinstance(a, int) else a.lt(k)


def _ge(a: Any, k: int) -> Any:
    # k <= a, written as (k - 1) < a: the symbolic rules bound comparisons of a range
    return a >= k if isinstance(a, int) else a.const_like(k - 1).lt(a)


def _and(a: Any, b: Any) -> Any:
    if a is None:
        return b
    return (a and b) if isinstance(a, bool) else a & b


def unflatten(flat: Any, shape: Sequence[int]) -> list[Any]:
    """Row-major indices into `shape` of a flat offset (the outermost needs no %)."""
    out: list[Any] = []
    for k, size in enumerate(reversed(shape)):
        if size == 1:
            out.append(0 if isinstance(flat, int) else flat.const_like(0))
            continue
        if all(s == 1 for s in shape[: len(shape) - 1 - k]):  # the outermost: no % and no //
            out.append(flat)
            continue
        out.append(flat % size)
        flat = flat // size
    return out[::-1]


def flatten(idxs: Sequence[Any], shape: Sequence[int], zero: Any = 0) -> Any:
    """The row-major flat offset of the element at `idxs` of `shape` (unflatten's inverse):
    `i0 * s1 * s2 + (i1 * s2 + i2)`. Axes of size 1 add nothing; `zero` when none is larger."""
    flat: Any = None
    acc = 1
    for i, size in zip(reversed(idxs), reversed(shape)):
        if size != 1:
            flat = _mul(i, acc) if flat is None else _mul(i, acc) + flat
            acc *= size
    return zero if flat is None else flat


def blocks(old: Shape, new: Shape) -> list[tuple[list[int], list[int]]]:
    """Runs of axes of `old` and of `new` (axes of size 1 left out) whose sizes multiply to
    the same number, in order: a reshape keeps each run's elements together."""
    a = [i for i, s in enumerate(old) if s != 1]
    b = [j for j, s in enumerate(new) if s != 1]
    out: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(a):
        i2, j2 = i + 1, j + 1
        pa, pb = old[a[i]], new[b[j]]
        while pa != pb:
            if pa < pb:
                pa *= old[a[i2]]
                i2 += 1
            else:
                pb *= new[b[j2]]
                j2 += 1
        out.append((a[i:i2], b[j:j2]))
        i, j = i2, j2
    return out


def reshape_index(idxs: Sequence[Any], new: Shape, old: Shape, zero: Any = 0) -> list[Any]:
    """The indices into `old` of the element at `idxs` of `new`, the same row-major elements
    (a reshape; no size 0): per run of axes (`blocks`), flatten then unflatten. A split or an
    unsqueeze needs no division; only a run of several axes of `old` gets % and //. Axes of
    size 1 of `old` get `zero`."""
    out = [zero] * len(old)
    for olds, news in blocks(old, new):
        flat = flatten([idxs[j] for j in news], [new[j] for j in news], zero)
        if len(olds) == 1:  # a split, an unsqueeze or the same axis: no % or //
            out[olds[0]] = flat
            continue
        for a, i in zip(olds, unflatten(flat, [old[a] for a in olds])):
            out[a] = i
    return out


# ---------------------------------------------------------------------- one view
class View(FrozenRecord):
    """Element i of the view is memory[offset + sum(i_k * strides_k)], when every i_k lies in
    mask_k = [begin, end) (no mask: always); elsewhere it is 0."""

    __slots__ = ("shape", "strides", "offset", "mask")
    shape: Shape
    strides: tuple[int, ...]
    offset: int
    mask: Mask | None

    def __init__(self, shape: Shape, strides: tuple[int, ...], offset: int = 0,
                 mask: Mask | None = None):
        self._init(shape, strides, offset, mask)

    @staticmethod
    def contiguous(shape: Shape) -> View:
        return View(tuple(shape), strides_for(tuple(shape)))

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        """Reads memory 0..size-1 in order: a view that changes nothing but the shape."""
        return (self.offset == 0 and self.mask is None
                and self.strides == strides_for(self.shape))

    def _norm(self) -> View:
        # a mask that covers its whole axis says nothing; one that is empty anywhere masks all
        if self.mask is None:
            return self
        if any(b >= e for b, e in self.mask):
            mask = tuple((0, 0) for _ in self.shape)
            return View(self.shape, (0,) * len(self.shape), 0, mask)
        if all(m == (0, s) for m, s in zip(self.mask, self.shape)):
            return View(self.shape, self.strides, self.offset, None)
        return self

    # ------------------------------------------------------------ movement ops
    def permute(self, order: tuple[int, ...]) -> View:
        mask = None if self.mask is None else tuple(self.mask[i] for i in order)
        return View(tuple(self.shape[i] for i in order), tuple(self.strides[i] for i in order),
                    self.offset, mask)

    def expand(self, shape: Shape) -> View:
        strides = tuple(st if old == new else 0
                        for st, old, new in zip(self.strides, self.shape, shape))
        mask = None
        if self.mask is not None:
            mask = tuple(m if old == new else ((0, new) if m[0] < m[1] else (0, 0))
                         for m, old, new in zip(self.mask, self.shape, shape))
        return View(tuple(shape), strides, self.offset, mask)._norm()

    def shrink(self, arg: tuple[tuple[int, int], ...]) -> View:
        offset = self.offset + sum(b * st for (b, _), st in zip(arg, self.strides))
        mask = None
        if self.mask is not None:
            mask = tuple((max(mb, b) - b, max(min(me, e) - b, max(mb, b) - b))
                         for (mb, me), (b, e) in zip(self.mask, arg))
        return View(tuple(e - b for b, e in arg), self.strides, offset, mask)._norm()

    def pad(self, arg: tuple[tuple[int, int], ...]) -> View:
        offset = self.offset - sum(b * st for (b, _), st in zip(arg, self.strides))
        old = self.mask if self.mask is not None else tuple((0, s) for s in self.shape)
        mask = tuple((mb + b, me + b) for (mb, me), (b, _) in zip(old, arg))
        shape = tuple(s + b + a for s, (b, a) in zip(self.shape, arg))
        return View(shape, self.strides, offset, mask)._norm()

    def flip(self, axes: tuple[bool, ...]) -> View:
        offset = self.offset + sum((s - 1) * st for s, st, f in zip(self.shape, self.strides, axes)
                                   if f and s > 0)
        strides = tuple(-st if f else st for st, f in zip(self.strides, axes))
        mask = None
        if self.mask is not None:
            mask = tuple((s - e, s - b) if f else (b, e)
                         for (b, e), s, f in zip(self.mask, self.shape, axes))
        # (normalized: a flipped empty range, (1, 1) from (0, 0), is still empty)
        return View(self.shape, strides, offset, mask)._norm()

    def reshape(self, shape: Shape) -> View | None:
        """The same elements under a new shape as one view, or None when one view cannot say
        it (then the ShapeTracker stacks a new view)."""
        shape = tuple(shape)
        if shape == self.shape:
            return self
        if math.prod(shape) != self.size:
            raise ValueError(f"reshape of {self.shape} to {shape}: sizes differ")
        if 0 in self.shape or 0 in shape:
            return View.contiguous(shape) if self.size == 0 and math.prod(shape) == 0 else None
        keep = [i for i, s in enumerate(self.shape) if s != 1]
        if self.mask is not None:
            # a masked view reshapes only by adding or removing axes of size 1
            if [self.shape[i] for i in keep] != [s for s in shape if s != 1]:
                return None
            if any(self.mask[i] != (0, 1) for i, s in enumerate(self.shape) if s == 1):
                return None
        new_strides = [0] * len(shape)
        new_mask: list[tuple[int, int]] = [(0, 1)] * len(shape)
        for olds, news in blocks(self.shape, shape):
            # the old axes must be one run of memory: each stride = next stride * next size
            for a, b in zip(olds, olds[1:]):
                if self.strides[a] != self.strides[b] * self.shape[b]:
                    return None
            acc = self.strides[olds[-1]]
            for b in reversed(news):
                new_strides[b] = acc
                acc *= shape[b]
            if self.mask is not None:
                new_mask[news[0]] = self.mask[olds[0]]
        mask = tuple(new_mask) if self.mask is not None else None
        return View(shape, tuple(new_strides), self.offset, mask)._norm()

    # ------------------------------------------------------------ reading
    def index(self, idxs: list[Any]) -> tuple[Any, Any]:
        """(offset into the memory below, valid or None) of the element at `idxs`."""
        off: Any = self.offset
        valid: Any = None
        for i, st in zip(idxs, self.strides):
            off = _add(off, _mul(i, st)) if st != 0 else off
        if self.mask is not None:
            for i, (b, e), s in zip(idxs, self.mask, self.shape):
                if b > 0:
                    valid = _and(valid, _ge(i, b))
                if e < s:
                    valid = _and(valid, _lt(i, e))
                if b >= e:
                    valid = False if isinstance(i, int) else i.const_like(0).ne(0)
        return off, valid


def _view_op(v: View, op: str, arg: Any) -> View | None:
    if op == "RESHAPE":
        return v.reshape(arg)
    return getattr(v, op.lower())(arg)


# ---------------------------------------------------------------------- a stack of views
class ShapeTracker(FrozenRecord):
    """views[0] reads the base's memory; each later view reads the row-major layout of the
    one below it. The tracker's shape is the last view's."""

    __slots__ = ("views",)
    views: tuple[View, ...]

    def __init__(self, views: tuple[View, ...]):
        self._init(views)

    @staticmethod
    def from_shape(shape: Shape) -> ShapeTracker:
        return ShapeTracker((View.contiguous(tuple(shape)),))

    @property
    def shape(self) -> Shape:
        return self.views[-1].shape

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return len(self.views) == 1 and self.views[0].is_contiguous

    @property
    def masked(self) -> bool:
        return any(v.mask is not None for v in self.views)

    def apply(self, op: str, arg: Any) -> ShapeTracker:
        """The tracker after movement op `op` (an `Ops` name) with its argument."""
        new = _view_op(self.views[-1], op, arg)
        if new is None:  # one view cannot say it: read the row-major layout of this one
            new = View.contiguous(tuple(arg))
            return ShapeTracker(self.views + (new,)).merge()
        return ShapeTracker(self.views[:-1] + (new,)).merge()

    def __add__(self, other: ShapeTracker) -> ShapeTracker:
        """`other` applied on top of this tracker (other reads this one's row-major layout)."""
        out = self
        for v in other.views:
            out = ShapeTracker(out.views + (v,)).merge()
        return out

    def merge(self) -> ShapeTracker:
        """Fold the top two views into one where that is exact:
        - the lower one is contiguous: the upper one reads memory as it read the lower's layout;
        - the upper one is contiguous over all of the lower one: a reshape of it (when one view
          can say it; a contiguous view of fewer elements is a prefix, not a reshape).
        """
        views = list(self.views)
        while len(views) >= 2:
            lower, upper = views[-2], views[-1]
            if lower.is_contiguous:
                views[-2:] = [upper]
            elif upper.is_contiguous and upper.size == lower.size and \
                    (r := lower.reshape(upper.shape)) is not None:
                views[-2:] = [r]
            else:
                break
        return ShapeTracker(tuple(views))

    def index(self, idxs: list[Any]) -> tuple[Any, Any]:
        """(flat offset into the base's memory, valid or None) of the element at `idxs`."""
        valid: Any = None
        off: Any = None
        for k in range(len(self.views) - 1, -1, -1):
            v = self.views[k]
            off, cond = v.index(idxs)
            if cond is not None:
                valid = _and(valid, cond) if valid is not None else cond
            if k:
                idxs = unflatten(off, self.views[k - 1].shape)
        return off, valid
