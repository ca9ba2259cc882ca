"""Buffers: the storage behind realized tensors, and a pool that keeps their pages warm.

A `Buffer` is the `arg` of a BUFFER UOp (it hashes by identity), so the graph holds its
storage alive exactly as long as some node refers to it. Its data is a flat numpy array,
allocated when a kernel first writes it or when it is made from host data.

Results are handed out without a copy (`Tensor.numpy()` returns a read-only view of `data`).
Two rules keep that safe:

- a write into an existing buffer (an ASSIGN) first calls `prepare_write()`: when an array
  handed out still shares `data` (numpy views keep their base alive, so its reference count
  says so), the buffer moves to a copy and the array keeps the old values;
- storage goes back to the pool only when nothing else refers to it.

The pool: when a buffer that allocated its own storage dies and no view of that storage is
alive, the array is kept, by (size, dtype), for the next buffer of that size. A realize in a
loop then writes into pages that are already mapped instead of faulting in fresh ones (a 16 MB
output costs ~1 ms of page faults). It holds at most `POOL_PER_SIZE` arrays per size and
`POOL_BYTES` in all, oldest dropped first: it is sized by what the program frees.
"""

from __future__ import annotations

import ctypes
import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable
from operator import attrgetter
from typing import Any

import numpy as np

from .device_use import born_placed
from .dtype import DType
from .ops import Ops
from .uop import UOp, new_uop

_BUFFER = Ops.BUFFER  # (a global's load: `Ops.X` goes through EnumType.__getattr__)

_ids = itertools.count()

POOL_BYTES = 512 * 1024**2
POOL_PER_SIZE = 4
# (size, dtype) -> [(array, its address)]: a reused array's address is known (computing one
# costs a microsecond, a tenth of a small realize)
_pool: OrderedDict[tuple[int, object], list[tuple[np.ndarray, int]]] = OrderedDict()
_pool_bytes = 0
_pool_lock = threading.RLock()  # a collection inside the pool may free a Buffer
pool_stats = {"reused": 0, "allocated": 0, "copied_on_write": 0}
# storage moves (prepare_write's copies) so far: an address kept while this is unchanged still
# holds (runtime/plans.py keeps its kernels' addresses)
moves = 0
_np_dtypes: dict[DType, np.dtype] = {}


def _take(size: int, npdt: np.dtype) -> tuple[np.ndarray, int]:
    """An array of `size` elements (pooled or new) and its address (0: not known yet)."""
    global _pool_bytes
    key = (size, npdt)
    with _pool_lock:
        arrays = _pool.get(key)
        if arrays:
            arr, addr = arrays.pop()
            _pool_bytes -= arr.nbytes
            if not arrays:
                del _pool[key]
            pool_stats["reused"] += 1
            return arr, addr
    pool_stats["allocated"] += 1
    return np.empty(size, dtype=npdt), 0


def _give(arr: np.ndarray, addr: int) -> None:
    global _pool_bytes
    if arr.nbytes > POOL_BYTES // 4:
        return  # one huge array would crowd out everything else
    key = (arr.size, arr.dtype)
    with _pool_lock:
        arrays = _pool.setdefault(key, [])
        if len(arrays) >= POOL_PER_SIZE:
            return
        arrays.append((arr, addr))
        _pool.move_to_end(key)
        _pool_bytes += arr.nbytes
        while _pool_bytes > POOL_BYTES and _pool:
            _, old = next(iter(_pool.items()))
            _pool_bytes -= old.pop(0)[0].nbytes
            if not old:
                _pool.popitem(last=False)


def clear_pool() -> None:
    global _pool_bytes
    with _pool_lock:
        _pool.clear()
        _pool_bytes = 0


class Buffer:
    # `version`: how many times it was written in place (or written again by a plan): what a
    # realized value's `origin` (runtime/origins.py: the graph it was computed from, kept for
    # gradients) checks to know the buffers it read still hold what they held
    # (`__weakref__`: a buffer on another device is counted while it lives, runtime/device_use.py)
    # `owner`: for a buffer made from host data by `Tensor(array)`, a weak reference to that
    # tensor: an optimizer lets go of the step's graph when the tensors of its batch go
    # (api/nn/optim.py's `_hold_by_batch`)
    __slots__ = ("uid", "size", "dtype", "device", "data", "_address", "_pooled", "version",
                 "origin", "owner", "__weakref__")
    positions = False  # a Positions buffer: its element i is i (schedule_cache keys on it)

    def __init__(self, size: int, dtype: DType, data: np.ndarray | None = None,
                 device: str = "CPU"):
        # `device`: the virtual device it belongs to (runtime/device.py); all are host memory
        self.uid, self.size, self.dtype, self.device = next(_ids), size, dtype, device
        if device != "CPU":
            born_placed(self)
        self.data: np.ndarray | None = None
        self._address = 0
        self._pooled = False  # storage we allocated, which may go back to the pool
        self.version = 0
        self.origin: Any = None
        self.owner: Any = None
        if data is not None:
            npdt = _np_dtypes.get(dtype)
            if npdt is None:
                npdt = _np_dtypes[dtype] = dtype.np
            if type(data) is np.ndarray and data.dtype is npdt:
                # (every Tensor(array)'s own copy: ravel is a view of a C-ordered array and a
                # C-ordered copy of any other, without ascontiguousarray's conversion to ask
                # for; `is`: numpy's builtin dtypes are one object each, anything else converts)
                self.data = data.ravel()
            else:
                self.data = np.ascontiguousarray(data, dtype=npdt).reshape(-1)
            assert self.data.size == size, (self.data.size, size)

    def ensure(self) -> np.ndarray:
        """The flat array, allocated (uninitialised, maybe from the pool) on first use."""
        if self.data is None:
            npdt = _np_dtypes.get(self.dtype)
            if npdt is None:  # (DType.np builds an np.dtype per call: 1 us of a small realize)
                npdt = _np_dtypes[self.dtype] = self.dtype.np
            self.data, self._address = _take(self.size, npdt)
            self._pooled = True
        return self.data

    def address(self) -> int:
        """The address of the first element (allocating first), computed once."""
        if not self._address:
            data = self.data
            if data is None:  # (host data has its array: no call to see it)
                data = self.ensure()  # a pooled array comes with its address
            if not self._address:
                self._address = address_of(data)
        return self._address

    def prepare_write(self) -> None:
        """Before writing into this buffer in place: if an array handed out still shares its
        storage, move to a copy, so that array never changes."""
        global moves
        self.version += 1  # (`rewritten`, inline: a jit replay calls this per buffer it writes)
        self.origin = None
        if self.data is None:
            return
        # the array owning the memory (a view's `base` is always the owner, never a view):
        # referenced by self.data (or self.data.base), the local, getrefcount's argument
        owner = self.data if self.data.base is None else self.data.base
        if sys.getrefcount(owner) > 3:
            moves += 1
            self.data = self.data.copy()
            self._address = 0
            self._pooled = True
            pool_stats["copied_on_write"] += 1

    def rewritten(self) -> None:
        """Its contents are about to change: a new version, and the graph it was computed from
        (`origin`) no longer says what it holds."""
        self.version += 1
        self.origin = None

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        # a pickled buffer is its data: not this storage's address (the copy's array is another:
        # an assign into an unpickled tensor wrote the original's memory, or, in another
        # process, memory of no one's), nor the graph it was computed from (which would take
        # every input of that graph along: runtime/origins.py)
        state = {k: getattr(self, k) for k in Buffer.__slots__
                 if k != "__weakref__" and hasattr(self, k)}
        state["_address"], state["origin"], state["owner"] = 0, None, None
        return None, state

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        for k, v in state[1].items():
            setattr(self, k, v)
        if self.device != "CPU":  # (counted as a buffer made on its device is)
            born_placed(self)

    def place(self, device: str) -> None:
        """Put a fresh buffer, which no graph has read yet, on `device`."""
        self.device = device
        if device != "CPU":
            born_placed(self)

    def __deepcopy__(self, memo: dict) -> Buffer:
        # a buffer is an identity (graphs and contexts name memory by it): copying a context
        # that holds one must refer to the same memory, not clone it
        return self

    @property
    def is_allocated(self) -> bool:
        return self.data is not None

    @property
    def from_host(self) -> bool:
        """Made from host data (an input, a constant argument), not allocated by a kernel."""
        return self.data is not None and not self._pooled

    def __del__(self, _refs: Any = sys.getrefcount) -> None:
        # (getrefcount bound here: at interpreter shutdown the module's `sys` may be None)
        data = self.data
        # references: self.data, `data`, getrefcount's argument; more means a view is alive
        if self._pooled and data is not None and _refs(data) == 3:
            self.data = None
            try:
                _give(data, self._address)
            except Exception:  # noqa: BLE001 - interpreter shutdown: nothing to keep warm
                pass

    def __repr__(self) -> str:
        on = "" if self.device == "CPU" else f", {self.device}"
        return f"Buffer(#{self.uid}, {self.size}, {self.dtype.name}{on})"


class Positions(Buffer):
    """A buffer holding 0, 1, ..., size-1 in its dtype, made for the scheduler's own one-hot
    masks (runtime/tensor_ops.py's `_one_hot_along_dim`: gather, indexing by tensors, one_hot,
    scatter) and never written. rangeify reads it as its index, not from memory
    (rules/rangeify.rules, `index_positions`), so a one-hot sum over it is visible to the rule
    that folds it into a load (rules/kernel.rules, `pick_load`). The data is still there for a
    reader that is not rangeify (the kernelize scheduler, a copy to another device)."""

    __slots__ = ()
    positions = True

    def __init__(self, size: int, dtype: DType, device: str = "CPU"):
        super().__init__(size, dtype, np.arange(size, dtype=dtype.np), device)


_new = object.__new__
_addressof, _from_buffer = ctypes.addressof, ctypes.c_char.from_buffer


def host_copy(data: np.ndarray, dtype: DType) -> Buffer:
    """A buffer holding its own flat copy of `data` (an ndarray of `dtype`'s values), its
    address known: what `Tensor(array)` makes of each batch of a loop. `Buffer(size, dtype,
    data.flatten())` without its checks and conversions for other data, and the address read
    now, inline, instead of by two method calls when a kernel first reads it (a fifth of a
    small program's call from fresh arrays went to making and addressing its inputs)."""
    flat = data.flatten()  # (a copy, C-ordered, of any layout)
    npdt = _np_dtypes.get(dtype)
    if npdt is None:
        npdt = _np_dtypes[dtype] = dtype.np
    if flat.dtype is not npdt:  # (another byte order, a dtype with metadata: converted)
        flat = np.ascontiguousarray(flat, dtype=npdt)
    buf = _new(Buffer)
    buf.uid, buf.size, buf.dtype, buf.device = next(_ids), flat.size, dtype, "CPU"
    buf.data, buf._pooled, buf.version, buf.origin, buf.owner = flat, False, 0, None, None
    try:
        buf._address = _addressof(_from_buffer(flat))
    except (TypeError, ValueError):  # (an empty array has no address: asked at use)
        buf._address = 0
    return buf


_known_address = attrgetter("_address")


def addresses(bufs: Iterable[Buffer]) -> list[int]:
    """Each buffer's `address()`, in one call: a buffer whose address is known (host data's,
    a pooled array's, one asked before: every input of a loop over fresh arrays) is read
    without a method call of its own (a frame per input of every run of a form plan)."""
    out = list(map(_known_address, bufs))
    if 0 in out:  # (some address not known yet, a kernel's fresh output: those asked, which
        out = [a or b.address() for a, b in zip(out, bufs)]  # allocates if need be)
    return out


def address_of(arr: np.ndarray) -> int:
    """The address of an array's first element. Read through a ctypes view of its memory: a
    quarter of `arr.ctypes.data`'s cost, which builds numpy's ctypes helper object (a
    microsecond of every call over a fresh input). That view needs a writable, non-empty,
    contiguous array; any other is asked the slow way."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(arr))
    except (TypeError, ValueError):
        return arr.ctypes.data


def result_node(buf: Buffer, shape: tuple) -> UOp:
    """What a tensor of `shape` realized into `buf` reads: BUFFER.reshape(shape); for a
    symbolic shape (bound variables in it), the bound rows of the vmax rows the buffer holds."""
    node = new_uop(UOp, _BUFFER, buf.dtype, (), buf)
    if UOp in map(type, shape):  # (no generator frame: every realized tensor's node)
        stored = tuple(int(s.vmax) if isinstance(s, UOp) else s for s in shape)
        return node.reshape(stored).shrink(tuple((0, s) for s in shape))
    return node.reshape(shape)
