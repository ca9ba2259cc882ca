"""Buffers: the storage behind realized tensors.

A `Buffer` is the `arg` of a BUFFER UOp (it hashes by identity), so the graph holds its
storage alive exactly as long as some node refers to it. Its data is a flat numpy array,
allocated when a kernel first writes it or when it is made from host data.
"""

from __future__ import annotations

import itertools

import numpy as np

from .dtype import DType

_ids = itertools.count()


class Buffer:
    __slots__ = ("uid", "size", "dtype", "data")

    def __init__(self, size: int, dtype: DType, data: np.ndarray | None = None):
        self.uid, self.size, self.dtype = next(_ids), size, dtype
        self.data: np.ndarray | None = None
        if data is not None:
            self.data = np.ascontiguousarray(data, dtype=dtype.np).reshape(-1)
            assert self.data.size == size, (self.data.size, size)

    def ensure(self) -> np.ndarray:
        """The flat array, allocated (uninitialised) on first use."""
        if self.data is None:
            self.data = np.empty(self.size, dtype=self.dtype.np)
        return self.data

    def __deepcopy__(self, memo: dict) -> Buffer:
        # a buffer is an identity (graphs and contexts name memory by it): copying a context
        # that holds one must refer to the same memory, not clone it
        return self

    @property
    def is_allocated(self) -> bool:
        return self.data is not None

    def __repr__(self) -> str:
        return f"Buffer(#{self.uid}, {self.size}, {self.dtype.name})"
