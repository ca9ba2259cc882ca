"""Helpers of `movement.rules`: composing the arguments of two stacked movement ops.

In: the `arg`s of an inner and an outer movement op (the outer applied to the inner's result).
Out: the `arg` of the one movement op that does both.
"""

from __future__ import annotations

Pairs = tuple[tuple[int, int], ...]


def compose_permute(inner: tuple[int, ...], outer: tuple[int, ...]) -> tuple[int, ...]:
    """PERMUTE(PERMUTE(x, p), q) is PERMUTE(x, r) with r[i] = p[q[i]]."""
    return tuple(inner[i] for i in outer)


def compose_shrink(inner: Pairs, outer: Pairs) -> Pairs:
    """SHRINK(SHRINK(x, a), b): the outer bounds are offsets into the inner window."""
    return tuple((s1 + s2, s1 + e2) for (s1, _), (s2, e2) in zip(inner, outer))


def compose_pad(inner: Pairs, outer: Pairs) -> Pairs:
    """PAD(PAD(x, a), b): both pad with zeros, so the paddings add up."""
    return tuple((b1 + b2, a1 + a2) for (b1, a1), (b2, a2) in zip(inner, outer))


def compose_flip(inner: tuple[bool, ...], outer: tuple[bool, ...]) -> tuple[bool, ...]:
    """FLIP(FLIP(x, a), b): flipping an axis twice restores it."""
    return tuple(a != b for a, b in zip(inner, outer))


def is_identity(p: tuple[int, ...]) -> bool:
    return p == tuple(range(len(p)))


def no_padding(padding: Pairs) -> bool:
    return all(b == 0 and a == 0 for b, a in padding)
