"""Differential fuzzing of the scheduler: random tensor programs, schedule path vs numpy oracle.

In: a seed (or a count of seeds). Out: for each program, whether running it through the
scheduler and the kernel interpreter (`RULEGRAD_BACKEND=interp`) gives the oracle's values
(`RULEGRAD_BACKEND=oracle`, which evaluates the tensor graph directly). A failing program is
shrunk (steps dropped while it still fails) and printed with its seed as runnable Python.

A program is a list of steps over a pool of tensors: inputs; movement ops (reshape, permute,
pad, shrink, flip, expand); a shrink to a bound Variable (a symbolic size, `symshrink`);
unary and binary elementwise ops; sum/max over random axes; realize
and contiguous in the middle; assigns into a realized tensor, often of a reordered view of that
same tensor (a flip, a transpose, a shift, a broadcast: the value reads the buffer being
written); several outputs realized together. Steps read earlier steps, so subgraphs get shared
by several consumers. In a share of the programs (`DEVICE_SHARE`) tensors are moved to other
virtual devices (`to`) and sharded over 2 or 4 of them (`shard`, along an axis or replicated);
wherever an op would mix devices or move data across shards, its sources are first copied to
one device, so every program is valid (`_place_devices`).

    python -m rulegrad.runtime.fuzz --n 10000          # zero mismatches expected
    python -m rulegrad.runtime.fuzz --seed 1234 -v     # one program, printed
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Shape = tuple[int, ...]


class SymDim(int):
    """A symbolic size in a generated shape: its bound value, plus the variable's name and max
    (an int, so sizes and products still compute; `_same` tells two apart by name)."""

    name: str
    vmax: int

    def __new__(cls, value: int, name: str, vmax: int) -> SymDim:
        d = super().__new__(cls, value)
        d.name, d.vmax = name, vmax
        return d

    def __reduce__(self) -> tuple:
        return (SymDim, (int(self), self.name, self.vmax))


def _dim_key(d: int) -> tuple:
    return (d.name,) if isinstance(d, SymDim) else (None, d)


def _same(a: Shape, b: Shape) -> bool:
    """Equal shapes: a symbolic size equals only itself (not a concrete size of its value)."""
    return len(a) == len(b) and all(_dim_key(x) == _dim_key(y) for x, y in zip(a, b))


def _symbolic(sh: Shape) -> bool:
    return any(isinstance(d, SymDim) for d in sh)


@dataclass(frozen=True)
class Step:
    """One line of a program: `op` applied to earlier steps `srcs` with `arg`; its shape."""

    op: str
    srcs: tuple[int, ...]
    arg: Any
    shape: Shape


@dataclass(frozen=True)
class Program:
    seed: int
    steps: tuple[Step, ...]
    outputs: tuple[int, ...]

    def source(self) -> str:
        """The program as Python a person can paste and run."""
        lines = ["import numpy as np", "from rulegrad import Tensor, Variable",
                 f"rng = np.random.default_rng({self.seed})"]
        for i, s in enumerate(self.steps):
            lines.append(f"t{i} = {_render(s)}")
        outs = ", ".join(f"t{i}" for i in self.outputs)
        lines.append(f"Tensor.realize({outs})" if self.outputs else "")
        return "\n".join(lines)


def _render(s: Step) -> str:
    a = [f"t{i}" for i in s.srcs]
    if s.op == "input":
        return f"Tensor(rng.standard_normal({s.shape}).astype(np.float32))  # input {s.arg}"
    if s.op in ("reshape", "permute", "pad", "shrink", "flip", "expand"):
        return f"{a[0]}.{s.op}({s.arg!r})"
    if s.op in ("sum", "max"):
        return f"{a[0]}.{s.op}(axis={s.arg[0]!r}, keepdim={s.arg[1]})"
    if s.op == "symshrink":
        axis, name, vmax, value = s.arg
        ends = ", ".join(f"(0, Variable({name!r}, 1, {vmax}).bind({value}))" if k == axis else
                         "None" for k in range(len(s.shape)))
        return f"{a[0]}.shrink(({ends},))"
    if s.op == "realize":
        return f"{a[0]}.contiguous().realize()"
    if s.op in ("contiguous", "relu", "sin", "neg", "abs"):
        return f"{a[0]}.{s.op}()"
    if s.op == "half":
        return f"{a[0]} * 0.5"
    if s.op in ("add", "mul", "maximum", "sub"):
        return f"{a[0]}.{s.op}({a[1]})"
    if s.op == "where":
        return f"({a[0]} > 0).where({a[1]}, {a[2]})"
    if s.op == "assign":
        view = a[0] + "".join(f".shard({arg[0]!r}, axis={arg[1]!r})" if m == "shard" else
                              f".{m}({arg!r})" for m, arg in s.arg)
        return f"{a[0]}.assign({view}{f'.add({a[1]})' if len(a) > 1 else ''})"
    if s.op == "to":
        return f"{a[0]}.to({s.arg!r})"
    if s.op == "shard":
        return f"{a[0]}.shard({s.arg[0]!r}, axis={s.arg[1]!r})"
    raise ValueError(s.op)


# ---------------------------------------------------------------------- generating
UNARY = ("relu", "sin", "neg", "abs", "half")
BINARY = ("add", "mul", "maximum", "sub")


def _factorizations(size: int, rng: random.Random) -> Shape:
    """A random shape with `size` elements, 1 to 4 axes."""
    if size == 0:
        return tuple(rng.choice([(0,), (0, 2), (2, 0)]))
    dims: list[int] = []
    rest = size
    for _ in range(rng.randint(0, 3)):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = rng.choice(divs)
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    return tuple(dims)


# steps whose tensor is a realized buffer, so it can be assigned to
BUFFERS = ("input", "realize", "assign")


def _target_view(rng: random.Random, sh: Shape) -> tuple[tuple[str, Any], ...]:
    """Movement ops that turn a tensor of shape `sh` into another of the same shape whose
    element i is (usually) some other element: a flip, a transpose through a reshape, a shift,
    a broadcast of one slice, or nothing (the plain `a.assign(a + b)`)."""
    n = math.prod(sh)
    kind = rng.choice(["flip", "transpose", "shift", "broadcast", "none"])
    if not sh or n <= 1 or kind == "none":
        return ()
    if kind == "flip":
        return (("flip", tuple(a for a in range(len(sh)) if rng.random() < 0.5) or (0,)),)
    if kind == "transpose":
        mid = _factorizations(n, rng)
        order = list(range(len(mid)))
        rng.shuffle(order)
        return (("reshape", mid), ("permute", tuple(order)),
                ("reshape", tuple(mid[o] for o in order)), ("reshape", sh))
    ax = rng.choice([a for a, s in enumerate(sh) if s > 1] or [0])
    size = sh[ax]
    if size < 2:
        return ()
    if kind == "shift":
        d = rng.randint(1, size - 1)
        lo, hi, pad = (d, size, (0, d)) if rng.random() < 0.5 else (0, size - d, (d, 0))
    else:  # broadcast: one slice along the axis, repeated
        lo = rng.randrange(size)
        hi, pad = lo + 1, None
    arg = tuple((lo, hi) if a == ax else (0, s) for a, s in enumerate(sh))
    if pad is not None:
        return (("shrink", arg), ("pad", tuple(pad if a == ax else (0, 0) for a in range(len(sh)))))
    return (("shrink", arg), ("expand", sh))


def _gen_assign(rng: random.Random, steps: list[Step]) -> Step | None:
    """`t.assign(view of t [+ u])` for a buffer-backed step t and a same-shape step u."""
    # (assigns into symbolic-size tensors are not supported)
    targets = [j for j, s in enumerate(steps) if s.op in BUFFERS and math.prod(s.shape) > 0
               and not _symbolic(s.shape)]
    if not targets:
        return None
    j = rng.choice(targets)
    sh = steps[j].shape
    view = _target_view(rng, sh)
    srcs: tuple[int, ...] = (j,)
    if not view or rng.random() < 0.4:
        srcs = (j, rng.choice([k for k, s in enumerate(steps) if _same(s.shape, sh)]))
    return Step("assign", srcs, view, sh)


def _gen_step(rng: random.Random, steps: list[Step]) -> Step | None:
    if rng.random() < 0.05:
        return _gen_assign(rng, steps)
    i = rng.randrange(len(steps))
    # prefer recent steps, so chains get long
    if rng.random() < 0.6:
        i = len(steps) - 1 - min(rng.randrange(3), len(steps) - 1)
    x = steps[i]
    sh = x.shape
    kind = rng.choice(["mop"] * 6 + ["unary"] * 2 + ["binary"] * 4 + ["reduce"] * 3 +
                      ["realize", "contiguous", "where", "input"])
    if kind == "input":
        shape = _factorizations(rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 24]), rng)
        return Step("input", (), len(steps), shape)
    if kind == "mop" and rng.random() < 0.15:  # a symbolic size: a prefix bound to a Variable
        axes = [a for a, d in enumerate(sh) if d >= 1 and not isinstance(d, SymDim)]
        if not axes:
            return None
        a = rng.choice(axes)
        value = rng.randint(1, sh[a])
        d = SymDim(value, f"v{len(steps)}", sh[a])
        return Step("symshrink", (i,), (a, d.name, d.vmax, value), sh[:a] + (d,) + sh[a + 1:])
    if kind == "mop":
        m = rng.choice(["reshape", "permute", "pad", "shrink", "flip", "expand"])
        if _symbolic(sh):  # a symbolic axis takes only these (the others are errors)
            m = rng.choice(["reshape", "permute", "pad", "expand"])
        if m == "reshape" and _symbolic(sh):
            new = sh + (1,)
            return Step("reshape", (i,), new, new)
        if m == "pad" and _symbolic(sh):
            pads = tuple((0, 0) if isinstance(s, SymDim) else (rng.randint(0, 2), rng.randint(0, 2))
                         for s in sh)
            return Step("pad", (i,), pads, tuple(s if isinstance(s, SymDim) else s + a + b
                                                 for s, (a, b) in zip(sh, pads)))
        if m == "reshape":
            new = _factorizations(math.prod(sh), rng)
            return Step("reshape", (i,), new, new)
        if not sh:
            return None
        if m == "permute":
            order = list(range(len(sh)))
            rng.shuffle(order)
            return Step("permute", (i,), tuple(order), tuple(sh[o] for o in order))
        if m == "pad":
            pads = tuple((rng.randint(0, 2), rng.randint(0, 2)) for _ in sh)
            return Step("pad", (i,), pads, tuple(s + a + b for s, (a, b) in zip(sh, pads)))
        if m == "shrink":
            arg = []
            for s in sh:
                lo = rng.randint(0, s)
                arg.append((lo, rng.randint(lo, s)))
            return Step("shrink", (i,), tuple(arg), tuple(b - a for a, b in arg))
        if m == "flip":
            axes = tuple(a for a in range(len(sh)) if rng.random() < 0.5)
            return Step("flip", (i,), axes or (0,), sh)
        ones = [a for a, s in enumerate(sh) if s == 1 and not isinstance(s, SymDim)]
        if not ones:
            new = sh + (1,)
            return Step("reshape", (i,), new, new)
        new = tuple(rng.randint(1, 4) if a in ones else s for a, s in enumerate(sh))
        return Step("expand", (i,), new, new)
    if kind == "unary":
        return Step(rng.choice(UNARY), (i,), None, sh)
    if kind in ("binary", "where"):
        same = [j for j, s in enumerate(steps) if _same(s.shape, sh)]
        j = rng.choice(same)
        if kind == "where":
            return Step("where", (i, j, rng.choice(same)), None, sh)
        return Step(rng.choice(BINARY), (i, j), None, sh)
    if kind == "reduce":
        if not sh:
            return None
        axes = tuple(a for a in range(len(sh)) if rng.random() < 0.5) or (rng.randrange(len(sh)),)
        keep = rng.random() < 0.5
        op = rng.choice(["sum", "max"])
        if op == "max" and any(sh[a] == 0 for a in axes):
            op = "sum"  # max over nothing has no value in numpy
        new = tuple(1 if a in axes else s for a, s in enumerate(sh))
        if not keep:
            new = tuple(s for a, s in enumerate(sh) if a not in axes)
        return Step(op, (i,), (axes, keep), new)
    return Step(kind, (i,), None, sh)  # realize, contiguous


# ---------------------------------------------------------------------- devices
DEVICES = ("CPU", "CPU:1", "CPU:2", "CPU:3")
DEVICE_SHARE = 0.4  # of the programs; drawn from their own stream, so the rest are unchanged
SHARDED_TARGET_SHARE = 0.5  # of the assign targets in those: sharded and realized first
Layout = tuple  # ("one", device) or ("multi", axis or None, devices)


def _home(lay: Layout) -> str:
    return lay[1] if lay[0] == "one" else lay[2][0]


def _reduced_axis(lay: Layout, sh: Shape, s: Step) -> Layout:
    """Where the sharded axis of a sum/max's source goes (rules/multi.rules: an all-reduce
    over it gives replicas; keepdim=False is a reshape after the reduction)."""
    from rulegrad.rules.multi_helpers import _reshape_axis

    (axes, keep), k, devs = s.arg, lay[1], lay[2]
    if k in axes:
        return ("multi", None, devs)
    if keep:
        return lay
    kept = tuple(1 if a in axes else d for a, d in enumerate(sh))
    return ("multi", _reshape_axis(kept, s.shape, k, len(devs)), devs)


def _layout(s: Step, lays: list[Layout], shapes: list[Shape]) -> Layout | None:
    """Where step s's result lives given its sources', or None when the op is not allowed on
    them (they mix devices, or it would move data between shards)."""
    from rulegrad.rules.multi_helpers import _reshape_axis

    op = s.op
    if op == "input":
        return ("one", DEVICES[0])
    if op in BINARY or op == "where":
        if all(lay == lays[0] for lay in lays) and lays[0][0] == "one":
            return lays[0]
        if any(lay[0] == "one" or lay[2] != lays[0][2] for lay in lays):
            return None
        axes = {lay[1] for lay in lays} - {None}
        return None if len(axes) > 1 else ("multi", axes.pop() if axes else None, lays[0][2])
    lay, sh = lays[0], shapes[0]
    if lay[0] == "one" or lay[1] is None or op not in ("reshape", "pad", "shrink", "flip",
                                                       "symshrink", "sum", "max", "permute"):
        return lay
    k, devs = lay[1], lay[2]
    if op == "permute":
        return ("multi", s.arg.index(k), devs)
    if op in ("sum", "max"):
        return _reduced_axis(lay, sh, s)
    if op == "reshape":
        new = _reshape_axis(tuple(sh), s.shape, k, len(devs))
        return None if new is None else ("multi", new, devs)
    ok = {"pad": lambda: s.arg[k] == (0, 0), "shrink": lambda: s.arg[k] == (0, sh[k]),
          "flip": lambda: k not in s.arg, "symshrink": lambda: s.arg[0] != k}[op]()
    return lay if ok else None


def _convert(rng: random.Random, sh: Shape, lay: Layout, shard: bool = False
             ) -> tuple[str, Any, Layout] | None:
    """A copy to another device, or a sharding (always, with `shard`), of a tensor of shape
    sh living at lay."""
    if lay[0] == "multi" or (not shard and rng.random() < 0.4):
        dev = rng.choice([d for d in DEVICES if lay != ("one", d)])
        return ("to", dev, ("one", dev))
    devs = DEVICES[:rng.choice([2, 4])]
    if _symbolic(sh) or not all(sh):
        return None
    axes = [a for a, d in enumerate(sh) if d % len(devs) == 0]
    axis = rng.choice(axes) if axes and rng.random() < 0.8 else None
    return ("shard", (devs, axis), ("multi", axis, devs))


def _view_layout(lay: Layout, sh: Shape, view: tuple) -> tuple[Layout | None, Shape]:
    """The layout and shape of the view ops `view` of a tensor at lay (None: not allowed)."""
    for m, arg in view:
        new = {"flip": sh, "reshape": arg, "expand": arg,
               "permute": tuple(sh[o] for o in arg) if m == "permute" else sh,
               "shrink": tuple(b - a for a, b in arg) if m == "shrink" else sh,
               "pad": tuple(d + a + b for d, (a, b) in zip(sh, arg)) if m == "pad" else sh}[m]
        lay = _layout(Step(m, (0,), arg, new), [lay], [sh])
        if lay is None:
            return None, new
        sh = new
    return lay, sh


def _sharded_view(rng: random.Random, view: tuple, lays: list[Layout], out: list[Step],
                  srcs: list[int]) -> tuple:
    """An assign into shards reads `view` of the target (+ the other source): as it is when the
    ops keep to the shards, else from a copy of the target on its first device, as
    `("to", device)` first in the view (the value is then scattered, or, without another
    source, sometimes sharded another way first: `("shard", (devices, axis))` last)."""
    lay, sh = lays[srcs[0]], out[srcs[0]].shape
    vlay, _ = _view_layout(lay, sh, view)
    ok = vlay is not None and all(
        _layout(Step("add", (0, 1), None, out[j].shape), [vlay, lays[j]], []) is not None
        for j in srcs[1:])
    if ok:
        return view
    view = (("to", _home(lay)),) + view
    if len(srcs) == 1 and rng.random() < 0.5:
        axes = [a for a, d in enumerate(sh) if d % len(lay[2]) == 0] + [None]
        view += (("shard", (lay[2], rng.choice(axes))),)
    return view


def _place_devices(rng: random.Random, steps: list[Step], outputs: tuple[int, ...]
                   ) -> tuple[list[Step], tuple[int, ...]]:
    """The program with some results copied or sharded, and each op's sources copied to one
    device where the op would not be allowed on them as they are."""
    targets = {s.srcs[0] for s in steps if s.op == "assign"}
    out: list[Step] = []
    lays: list[Layout] = []
    where: dict[int, int] = {}  # old step -> the new step holding its tensor

    def add(step: Step, lay: Layout) -> int:
        out.append(step)
        lays.append(lay)
        return len(out) - 1

    def on(j: int, dev: str) -> int:
        return j if lays[j] == ("one", dev) else add(Step("to", (j,), dev, out[j].shape),
                                                      ("one", dev))

    for i, s in enumerate(steps):
        srcs = [where[k] for k in s.srcs]
        if s.op == "assign" and lays[srcs[0]][0] == "multi":  # into shards, part by part
            lay = lays[srcs[0]]
            s = Step(s.op, s.srcs, _sharded_view(rng, s.arg, lays, out, srcs), s.shape)
            if s.arg[:1] == (("to", _home(lay)),):  # the value on one device: scattered
                srcs = srcs[:1] + [on(j, _home(lay)) for j in srcs[1:]]
        elif s.op == "assign":  # into the target's buffer: the value copied to its device
            dev = _home(lays[srcs[0]])
            lay = ("one", dev)
            srcs = srcs[:1] + [on(j, dev) for j in srcs[1:]]
        else:
            lay = _layout(s, [lays[j] for j in srcs], [out[j].shape for j in srcs])
        if lay is None:
            dev = _home(lays[srcs[0]])
            srcs = [on(j, dev) for j in srcs]
            lay = ("one", dev)
        new = add(Step(s.op, tuple(srcs), s.arg, s.shape), lay)
        if i not in targets and rng.random() < 0.2:
            conv = _convert(rng, s.shape, lay)
            if conv is not None:
                new = add(Step(conv[0], (new,), conv[1], s.shape), conv[2])
        elif i in targets and lay[0] == "one" and rng.random() < SHARDED_TARGET_SHARE:
            conv = _convert(rng, s.shape, ("one", None), shard=True)
            if conv is not None:  # assigned into as realized shards
                new = add(Step(conv[0], (new,), conv[1], s.shape), conv[2])
                new = add(Step("realize", (new,), None, s.shape), conv[2])
        where[i] = new
    return out, tuple(where[o] for o in outputs)


def generate(seed: int) -> Program:
    prog = _generate(seed)
    side = random.Random(f"devices-{seed}")  # its own stream: the program itself is unchanged
    if side.random() >= DEVICE_SHARE:
        return prog
    steps, outputs = _place_devices(side, list(prog.steps), prog.outputs)
    return Program(seed, tuple(steps), outputs)


def _generate(seed: int) -> Program:
    rng = random.Random(seed)
    steps: list[Step] = []
    for k in range(rng.randint(1, 3)):
        shape = _factorizations(rng.choice([1, 2, 4, 6, 8, 12, 24, 0 if rng.random() < .05 else 8]),
                                rng)
        steps.append(Step("input", (), k, shape))
    for _ in range(rng.randint(4, 24)):
        s = _gen_step(rng, steps)
        if s is not None and math.prod(s.shape) <= 4096:
            steps.append(s)
    n_out = min(len(steps), rng.randint(1, 3))
    late = range(len(steps) // 2, len(steps))
    outputs = tuple(sorted({len(steps) - 1} | {rng.choice(late) for _ in range(n_out - 1)}))
    return Program(seed, tuple(steps), outputs)


# ---------------------------------------------------------------------- running
SCHEDULERS = ("rangeify", "kernelize", "both")


def run(prog: Program, backend: str, scheduler: str = "rangeify") -> list[np.ndarray]:
    """The program's output values on one backend (inputs drawn from the program's seed),
    scheduled by `scheduler` (rangeify or kernelize: runtime/kernelize.py)."""
    from rulegrad.runtime.kernelize import using

    with using(scheduler):
        return _run(prog, backend)


def _run(prog: Program, backend: str) -> list[np.ndarray]:
    from rulegrad import Tensor, Variable

    saved = os.environ.get("RULEGRAD_BACKEND")
    os.environ["RULEGRAD_BACKEND"] = backend
    try:
        data = np.random.default_rng(prog.seed)
        ts: list[Any] = []
        for s in prog.steps:
            a = [ts[i] for i in s.srcs]
            if s.op == "input":
                ts.append(Tensor(data.standard_normal(s.shape).astype(np.float32)))
            elif s.op == "symshrink":
                axis, name, vmax, value = s.arg
                n = Variable(name, 1, vmax).bind(value)
                ts.append(a[0].shrink(tuple((0, n) if k == axis else None
                                            for k in range(len(s.shape)))))
            elif s.op in ("reshape", "permute", "pad", "shrink", "expand"):
                ts.append(getattr(a[0], s.op)(_as_tensor_shape(s.arg, ts, s) if s.op in
                                              ("reshape", "expand") else s.arg))
            elif s.op == "flip":
                ts.append(a[0].flip(s.arg))
            elif s.op in ("sum", "max"):
                ts.append(getattr(a[0], s.op)(axis=s.arg[0], keepdim=s.arg[1]))
            elif s.op == "realize":
                ts.append(a[0].contiguous().realize())
            elif s.op in ("contiguous", "relu", "sin", "neg", "abs"):
                ts.append(getattr(a[0], s.op)())
            elif s.op == "half":
                ts.append(a[0] * 0.5)
            elif s.op in BINARY:
                ts.append(getattr(a[0], s.op)(a[1]))
            elif s.op == "where":
                ts.append((a[0] > 0).where(a[1], a[2]))
            elif s.op == "assign":
                view = a[0]
                for m, arg in s.arg:
                    view = view.shard(*arg) if m == "shard" else getattr(view, m)(arg)
                ts.append(a[0].assign(view.add(a[1]) if len(a) > 1 else view))
            elif s.op == "to":
                ts.append(a[0].to(s.arg))
            elif s.op == "shard":
                ts.append(a[0].shard(*s.arg))
        outs = [ts[i] for i in prog.outputs]
        Tensor.realize(*outs) if len(outs) > 1 else outs[0].realize()
        return [t.numpy() for t in outs]
    finally:
        if saved is None:
            os.environ.pop("RULEGRAD_BACKEND", None)
        else:
            os.environ["RULEGRAD_BACKEND"] = saved


def _as_tensor_shape(arg: tuple, ts: list, s: Step) -> tuple:
    """A reshape/expand target with each symbolic size as the bound variable the tensor has."""
    if not _symbolic(s.shape):
        return arg
    src = ts[s.srcs[0]].shape
    bound = {d.src[0].arg[0]: d for d in src if not isinstance(d, int)}
    return tuple(bound[d.name] if isinstance(d, SymDim) else int(d) for d in arg)


def mismatch(prog: Program, backend: str = "interp", scheduler: str = "rangeify") -> str | None:
    """None when the schedule path (run by `backend`: the kernel interpreter or C) agrees with
    the oracle, else what went wrong. `scheduler="both"`: rangeify and kernelize each agree
    with the oracle and with each other."""
    want = run(prog, "oracle")
    names = ("rangeify", "kernelize") if scheduler == "both" else (scheduler,)
    got: dict[str, list[np.ndarray]] = {}
    for name in names:
        try:
            got[name] = run(prog, backend, name)
        except Exception as e:  # noqa: BLE001 - a crash of the scheduler is a finding
            return f"{_label(name, scheduler)}{type(e).__name__}: {e}"
        err = _differ(got[name], want)
        if err is not None:
            return f"{_label(name, scheduler)}{err}"
    if scheduler == "both":
        err = _differ(got["kernelize"], got["rangeify"])
        return None if err is None else f"kernelize vs rangeify: {err}"
    return None


def _label(name: str, scheduler: str) -> str:
    return f"{name}: " if scheduler == "both" else ""


def _differ(got: list[np.ndarray], want: list[np.ndarray]) -> str | None:
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape} != {w.shape}"
        if not np.allclose(g, w, rtol=1e-4, atol=1e-4, equal_nan=True):
            return f"output {k}: values differ (max abs err {np.nanmax(np.abs(g - w))})"
    return None


def shrink(prog: Program, backend: str = "interp", scheduler: str = "rangeify") -> Program:
    """Drop steps (and what reads them) while the program still fails."""
    changed = True
    while changed:
        changed = False
        for k in range(len(prog.steps) - 1, -1, -1):
            cand = _without(prog, k)
            if cand is not None and _fails(cand, backend, scheduler):
                prog, changed = cand, True
                break
    return prog


def _fails(prog: Program, backend: str, scheduler: str = "rangeify") -> bool:
    try:
        return mismatch(prog, backend, scheduler) is not None
    except Exception:  # noqa: BLE001 - an invalid shrunk program is not a failure
        return False


def _without(prog: Program, k: int) -> Program | None:
    """prog without step k and every step that depends on it (indices renumbered)."""
    dead = {k}
    for i, s in enumerate(prog.steps):
        if any(j in dead for j in s.srcs):
            dead.add(i)
    keep = [i for i in range(len(prog.steps)) if i not in dead]
    new_index = {old: new for new, old in enumerate(keep)}
    outs = tuple(new_index[o] for o in prog.outputs if o in new_index)
    if not outs:
        return None
    steps = tuple(Step(s.op, tuple(new_index[j] for j in s.srcs), s.arg, s.shape)
                  for i, s in enumerate(prog.steps) if i in new_index)
    return Program(prog.seed, steps, outs)


def fuzz(n: int, start: int = 0, verbose: bool = False, backend: str = "interp",
         progress: Callable[[int, int, int], None] | None = None, scheduler: str = "rangeify"
         ) -> list[tuple[int, str, Program]]:
    """Run seeds start..start+n-1 through `backend` and `scheduler` (rangeify, kernelize or
    both); the failures, each shrunk.
    `progress(done, n, failures)` is called after each program."""
    failures = []
    for seed in range(start, start + n):
        if progress is not None and seed > start:
            progress(seed - start, n, len(failures))
        prog = generate(seed)
        err = mismatch(prog, backend, scheduler)
        if verbose:
            print(f"--- seed {seed}: {'ok' if err is None else err}\n{prog.source()}")
        if err is not None:
            small = shrink(prog, backend, scheduler)
            failures.append((seed, err, small))
            print(f"FAIL seed {seed}: {err}\n{small.source()}\n", flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rulegrad.runtime.fuzz", description=__doc__)
    p.add_argument("--n", type=int, default=1000, help="number of programs (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every program")
    p.add_argument("--backend", choices=("interp", "c"), default="interp",
                   help="what runs the schedule: the kernel interpreter (default) or C")
    p.add_argument("--scheduler", choices=SCHEDULERS, default="rangeify",
                   help="what makes the schedule: rangeify (default), kernelize, or both "
                        "(each against the oracle and against each other)")
    args = p.parse_args(argv)
    if args.n < 1:
        p.error(f"--n must be at least 1, got {args.n}")
    t0 = time.perf_counter()

    def progress(done: int, n: int, failed: int) -> None:  # a line every ~10% on stderr
        if done % max(1, n // 10) == 0:
            print(f"[{done}/{n}] {failed} mismatches, {time.perf_counter() - t0:.0f}s",
                  file=sys.stderr, flush=True)

    failures = fuzz(args.n, args.seed, args.verbose, args.backend, progress, args.scheduler)
    dt = time.perf_counter() - t0
    print(f"{args.n} programs, {len(failures)} mismatches, {dt:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
