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

    python -m rulegrad.tools.fuzz --n 10000          # zero mismatches expected
    python -m rulegrad.tools.fuzz --seed 1234 -v     # one program, printed

Those are class `schedule`. The other classes (`--class NAME`, or `all`) are the kinds of
program issue 31 found wrong answers in, each generated as runnable Python with an independent
oracle and run on C (`Case`, the "classes of programs" section below): `mixed` (mixed dtypes
around reductions and products, at sizes past the optimizer's thresholds), `sort` (sort,
argsort and topk with NaN and -0.0, against torch), `assign` (assigns into views of sharded or
unsharded tensors that read the target), `rules` (a user rule guarded on a constant's value,
replayed over several constants), `symbolic` (every reduction over a symbolic axis), `pick`
(gathers, indices, scatters) and `ops` (the IR's ops the others never build: cos, exp2, log2,
reciprocal, trunc, pow, integer and float division and remainder, xor, shifts, bitcasts, casts,
in every dtype the Tensor API gives them, uint8 and bool included, on safe inputs). A crash
or a refusal counts as a failure. Per class it prints programs, passed and failed; `--opt`
runs class `opt` (every family in each program) and prints, per optimizer action, the
programs it fired on (at least 200 each are asked for: `--opt --n 300`). A progress line,
`[done/n] failed, seconds`, goes to stderr every tenth of the run and at least every 30 s.

    rulegrad fuzz --class all --n 500                  # per-class counts
    rulegrad fuzz --opt --n 300                        # each optimizer action on 200+
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rulegrad.tools.args import count, seed_number
from rulegrad.tools.setup_errors import setup_errors

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
    from rulegrad.rules.multi_helpers import reshape_axis

    (axes, keep), k, devs = s.arg, lay[1], lay[2]
    if k in axes:
        return ("multi", None, devs)
    if keep:
        return lay
    kept = tuple(1 if a in axes else d for a, d in enumerate(sh))
    return ("multi", reshape_axis(kept, s.shape, k, len(devs)), devs)


def _layout(s: Step, lays: list[Layout], shapes: list[Shape]) -> Layout | None:
    """Where step s's result lives given its sources', or None when the op is not allowed on
    them (they mix devices, or it would move data between shards)."""
    from rulegrad.rules.multi_helpers import reshape_axis

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
        new = reshape_axis(tuple(sh), s.shape, k, len(devs))
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
    from rulegrad.runtime.env import env_set
    from rulegrad.runtime.tensor import Tensor
    from rulegrad.runtime.variable import Variable

    with env_set({"RULEGRAD_BACKEND": backend}):
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
        except setup_errors():
            raise  # (a bad setting is no finding about the program: the run stops)
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




# ====================================================================== classes of programs
# Beside the random programs above (class "schedule"), each class below generates one kind of
# program that has given wrong answers (issue 31), as runnable Python: the source builds the
# rulegrad tensors `outs` and the independent oracle's values `want` (numpy, or torch for
# sort), plus the tolerance's inputs. The reproducer printed for a failure is that source.
#
#   rulegrad fuzz --class all --n 50      # per class: programs, passed, failed
#   rulegrad fuzz --opt --n 300           # every optimizer action on >= 200 programs
@dataclass(frozen=True)
class Case:
    """One generated program of a class: `source` defines `outs` (Tensors, or arrays read
    back after the program ran: `got`), `want` (arrays), `low` (the least precise float dtype
    involved, for the tolerance) and, where a float sum is involved, `mag` (the values with
    every input made absolute: the sum's error bound scales with it). `exact` means bits."""

    cls: str
    seed: int
    source: str
    exact: bool = False

    def program(self, output: int | None = None) -> str:
        """The reproducer: the source (only the part computing `output` where the program is
        made of parts, each with its own random stream), then what it is compared with."""
        src = self.source
        if output is not None and PART in src:
            head, *parts = src.split(PART)
            src = head + PART + parts[output]
            src += "" if src.endswith("low = None\n") else "low = None\n"
        return src + "\ngot = [o.numpy() for o in outs]  # compare with `want`\n"


PART = "# part\n"  # starts each part of a mixed or opt program

F32, F64, F16 = "np.float32", "np.float64", "np.float16"
FLOATS = (F32, F32, F32, F64, F16)  # float32 most often: the packed and vector paths' dtype
PRIMES = (3, 5, 7, 11, 13, 17, 31, 37, 41, 53, 67, 71, 97, 101, 131, 257)
_HEAD = ("import numpy as np\nfrom rulegrad import Tensor\nrng = np.random.default_rng({seed})\n"
         "relu = lambda t: np.where(t < 0, 0, t)  # torch's: NaN and -0.0 kept\n")


def _arr(name: str, shape: Shape, dt: str, rng: random.Random, special: bool = False) -> str:
    """Source for an input array: normal floats (a NaN and a -0.0 in when `special`), or
    small ints."""
    if "int" in dt:
        line = f"{name} = rng.integers(-9, 9, {shape}).astype({dt})\n"
    else:
        line = f"{name} = rng.standard_normal({shape}).astype({dt})\n"
        if special and math.prod(shape) > 2:
            line += (f"{name}.flat[{rng.randrange(math.prod(shape))}] = np.nan; "
                     f"{name}.flat[{rng.randrange(math.prod(shape))}] = -0.0\n")
    return line


def _low(*dts: str) -> str:
    order = [F16, F32, F64]
    fl = [d for d in dts if d in order]
    return min(fl, key=order.index) if fl else "None"


def _gen_mixed(seed: int) -> Case:
    """Mixed dtypes around reductions and products, at prime and broadcast sizes past the
    optimizer's thresholds, two to four parts per program (outputs realized together):
    products (pack, interchange), row and column reductions (vector accumulators,
    interchange), a scaled max (unscale), pooling windows (unroll), long full reductions
    (threads), wide elementwise loops (upcast, parallel), attention (flash). Each output has
    its own tolerance: `lows[k]` and `mag[k]`, bits where `exact[k]`."""
    rng = random.Random(f"mixed-{seed}")
    src = _HEAD.format(seed=seed) + "outs, want, mag, lows, exact = [], [], [], [], []\n"
    for part in range(rng.randint(2, 4)):
        src += f"{PART}rng = np.random.default_rng(({seed}, {part}))\n"
        src += _mixed_part(rng, str(part), rng.choice(MIXED_FAMILIES))
    return Case("mixed", seed, src + "low = None\n")


def _gen_opt(seed: int) -> Case:
    """A mixed program with one part of every family (`rulegrad fuzz --opt`): each optimizer
    action has a family whose sizes cross its threshold, so each fires on most programs."""
    rng = random.Random(f"opt-{seed}")
    src = _HEAD.format(seed=seed) + ("outs, want, mag, lows, exact, writes = "
                                     "[], [], [], [], [], []\n")
    # (two scaled maxes: one in four has a lifted scale, which max_scale leaves alone; and a
    # pool that is always padded: peel_loops acts on about half of the padded pools)
    fams = sorted(set(MIXED_FAMILIES)) + ["scaledmax", "padpool"]
    rng.shuffle(fams)
    for part, fam in enumerate(fams):
        src += f"{PART}rng = np.random.default_rng(({seed}, {part}))\n"
        src += _mixed_part(rng, str(part), fam)
    # a reduce of a transposed output, whose interchange first moves the range its reads are
    # contiguous along last; drawn by its own generator, so every other part stays as it was
    src += f"{PART}rng = np.random.default_rng(({seed}, {len(fams)}))\n"
    src += _mixed_part(random.Random(f"opt-tcols-{seed}"), str(len(fams)), "tcols")
    # an elementwise transposed output, transpose_store's tile; its own generator too
    src += f"{PART}rng = np.random.default_rng(({seed}, {len(fams) + 1}))\n"
    src += _mixed_part(random.Random(f"opt-ttile-{seed}"), str(len(fams) + 1), "ttile")
    # an in-place update through a transpose (transpose_store over a kernel that reads the
    # buffer it writes: a block stored twice reads its own update back), its own generator too
    src += f"{PART}rng = np.random.default_rng(({seed}, {len(fams) + 3}))\n"
    src += _mixed_part(random.Random(f"opt-tinplace-{seed}"), str(len(fams) + 3), "tinplace")
    # and a scan (scan_store), by its own generator as well
    src += f"{PART}rng = np.random.default_rng(({seed}, {len(fams) + 2}))\n"
    src += _mixed_part(random.Random(f"opt-scan-{seed}"), str(len(fams) + 2), "scan")
    # a reduce over a split prime axis and the contiguous last one (unnest_reduce), its own
    # generator too
    src += f"{PART}rng = np.random.default_rng(({seed}, {len(fams) + 8}))\n"
    src += _mixed_part(random.Random(f"opt-unnest-{seed}"), str(len(fams) + 8), "unnest")
    # softmaxes of scores masked to -inf (mask_actions' exp of a select, each of its forms),
    # each by its own generator too
    for i, fam in enumerate(("masked-f32", "masked-f32-then", "masked-f16", "masked-f16-then")):
        part = len(fams) + 4 + i
        src += f"{PART}rng = np.random.default_rng(({seed}, {part}))\n"
        src += _mixed_part(random.Random(f"opt-{fam}-{seed}"), str(part), fam)
    # selects on one condition nested under a MUL or an ADD (select_actions), its own
    # generator too
    src += f"{PART}rng = np.random.default_rng(({seed}, {len(fams) + 10}))\n"
    src += _mixed_part(random.Random(f"opt-selects-{seed}"), str(len(fams) + 10), "selects")
    # int reduces over padding only (sym keeps their update), by its own generator too
    part = len(fams) + 8
    src += f"{PART}rng = np.random.default_rng(({seed}, {part}))\n"
    src += _mixed_part(random.Random(f"opt-padonly-{seed}"), str(part), "padonly")
    # a normalization over short rows (rows_across), by its own generator too
    part = len(fams) + 9
    src += f"{PART}rng = np.random.default_rng(({seed}, {part}))\n"
    src += _mixed_part(random.Random(f"opt-shortrows-{seed}"), str(part), "shortrows")
    return Case("opt", seed, src + "low = None\n")


# matmul, conv: pack (interchange for ints); rows: vector accumulators; cols: interchange;
# scaledmax: unscale; pool: unroll and upcast; full: threads; big: parallel loops; attention:
# flash; normlin: stage_operands; chnorm: merge_reduce (a batch norm's planes); chscale:
# merge_store (a per-channel scale over N, C, H, W: each H*W plane one run of a plain store; a
# norm's own store reads its mean inside the kernel now, so it is no plain store)
MIXED_FAMILIES = ("matmul", "matmul", "conv", "rows", "cols", "scaledmax", "pool", "full",
                  "ewise", "big", "attention", "attention", "normlin", "chnorm", "chscale")


def _inplace_part(rng: random.Random, t: str, dt: str, special: bool) -> str:
    """An in-place update whose value reads a transpose, into the realized target `a` (rows
    r, columns c) or a view of it: `a += b.T`, `a.assign(a.T + 1)` (square), `a[1:] += ...`,
    `a[:, 1:] = a[:, 1:] + ...`. The rows (no multiple of a vector's width, so
    transpose_store's last block overlaps the one before) and the columns (past half of L1
    per pass of a float32 row) cross its thresholds. Each write is listed in `writes` (its
    target and value, as graphs), so the optimizer's check schedules the in-place kernel."""
    a, b = "a" + t, "b" + t
    rows, cols = rng.choice([41, 97, 37]), rng.choice([521, 600, 1000])
    how = rng.choice(["add", "square", "rows", "setitem"])
    if how == "square":
        cols = rows = rng.choice([521, 601])
    src = _arr(a + "0", (rows, cols), dt, rng, special) + _arr(b, (cols, rows), dt, rng)
    src += f"{a} = Tensor({a}0.copy()).realize()\nwant_{a} = {a}0.astype(np.float64).copy()\n"
    if how == "add":
        target, value = a, f"{a} + Tensor({b}).T"
        src += f"want_{a} += {b}.T\n"
    elif how == "square":
        target, value = a, f"{a}.T + 1"
        src += f"want_{a} = want_{a}.T + 1\n"
    elif how == "rows":
        target, value = f"{a}[1:]", f"{a}[1:] + Tensor({b}).T[1:]"
        src += f"want_{a}[1:] += {b}.T[1:]\n"
    else:
        target, value = f"{a}[:, 1:]", f"{a}[:, 1:] + Tensor({b}).T[:, 1:] * 2"
        src += f"want_{a}[:, 1:] += {b}.T[:, 1:].astype(np.float64) * 2\n"
    src += f"tgt_{a}, val_{a} = {target}, {value}\nwrites += [(tgt_{a}.uop, val_{a}.uop)]\n"
    src += (f"tgt_{a}.assign(val_{a})\n" if how != "setitem" else
            f"{a}[:, 1:] = val_{a}\n")
    # (the magnitude of what each output element reads: a square's a at its transpose, so a
    # NaN drawn into a0 leaves the tolerance NaN where the output reads it, not where it was)
    read = f"{a}0.T" if how == "square" else f"{a}0"
    src += (f"outs += [{a}]\nwant += [want_{a}]\nmag += [np.abs({read}.astype(np.float64)) + "
            f"np.abs({b}.astype(np.float64)).T * 2 + 1]\n")
    return src + f"lows += [{_low(dt)}]\nexact += [False]\n"


def _mixed_part(rng: random.Random, t: str, fam: str) -> str:
    """One part of family `fam` of a mixed program; its arrays' names end in `t`."""
    p = lambda: rng.choice(PRIMES)  # noqa: E731
    special = rng.random() < 0.3
    d1, d2 = rng.choice(FLOATS), rng.choice(FLOATS + ("np.int32",))
    a, b, c, x, w, y = (n + t for n in "abcxwy")
    if fam == "matmul":
        m, k, n = rng.choice([p(), 1, 64]), rng.choice([p(), 64, 128]), rng.choice([p(), 48, 96])
        if m * k * n < 1 << 15 and rng.random() < 0.85:  # past pack's MIN_WORK, mostly
            m = max(m, (1 << 15) // (k * n) + rng.randrange(1, 9))
        if rng.random() < 0.2:
            d1 = d2 = "np.int32"
        src = _arr(a, (m, k), d1, rng, special) + _arr(b, (k, n), d2, rng, special)
        bias = rng.random() < 0.5
        src += _arr(c, (n,), d1, rng) if bias else ""
        epi = rng.choice(["", ".relu()", " * 0.5"])
        src += f"outs += [((Tensor({a}) @ Tensor({b})){f' + Tensor({c})' if bias else ''}){epi}]\n"
        ref = f"{a}.astype(np.float64) @ {b}.astype(np.float64)"
        ref += f" + {c}.astype(np.float64)" if bias else ""
        # relu is torch's: a NaN stays NaN, -0.0 stays -0.0
        ref = {"": ref, ".relu()": f"relu({ref})", " * 0.5": f"({ref}) * 0.5"}[epi]
        src += (f"want += [{ref}]\nmag += [np.abs({a}.astype(np.float64)) @ "
                f"np.abs({b}.astype(np.float64))"
                f"{f' + np.abs({c}.astype(np.float64))' if bias else ''}]\n")
        return src + f"lows += [{_low(d1, d2)}]\nexact += [{d1 == d2 == 'np.int32'}]\n"
    if fam == "normlin":  # a row's layernorm read by a product: stage_operands (its row once)
        k, n = rng.choice([64, 100, p()]), rng.choice([p(), 20, 48])
        src = _arr(x, (1, k), d1, rng, special) + _arr(w, (k, n), d1, rng)
        src += f"outs += [Tensor({x}).layernorm() @ Tensor({w})]\n"
        ln = (f"(({x}.astype(np.float64) - {x}.astype(np.float64).mean(-1, keepdims=True)) / "
              f"np.sqrt({x}.astype(np.float64).var(-1, keepdims=True) + 1e-5))")
        src += (f"want += [{ln} @ {w}.astype(np.float64)]\n"
                f"mag += [np.abs({ln}) @ np.abs({w}.astype(np.float64))]\n")
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam == "conv":
        n, ch, o = rng.choice([1, 2]), rng.choice([1, 3, 4]), rng.choice([5, 8, 16])
        h, wd, ks = rng.choice([9, 13, 17]), rng.choice([11, 16, 19]), rng.choice([1, 3, 5])
        src = _arr(x, (n, ch, h, wd), d1, rng, special) + _arr(w, (o, ch, ks, ks), d1, rng)
        src += f"outs += [Tensor({x}).conv2d(Tensor({w}))]\n"
        win = (f"np.lib.stride_tricks.sliding_window_view({x}.astype(np.float64), ({ks}, {ks}), "
               "axis=(2, 3))")
        src += (f"want += [np.einsum('nchwyx,ocyx->nohw', {win}, {w}.astype(np.float64))]\n"
                f"mag += [np.einsum('nchwyx,ocyx->nohw', np.abs({win}), "
                f"np.abs({w}.astype(np.float64)))]\n")
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam in ("rows", "cols", "scaledmax"):
        r, cl = rng.choice([1, 3, p()]), rng.choice([64, 100, 131, 257, 1000, p()])
        if fam == "cols":
            r, cl = rng.choice([64, 101, 257]), rng.choice([p(), 16, 33])
        src = _arr(x, (r, cl), d1, rng, special)
        axis = 0 if fam == "cols" else -1
        op = rng.choice(["sum", "max", "min"]) if fam != "scaledmax" else rng.choice(["max", "min"])
        # (0.37 is a lifted constant, runtime/float_params.py: not a CONST for max_scale)
        scale = rng.choice([" * 0.37", " * 3.0", " * 0.125", " * 0.5"]) \
            if fam == "scaledmax" else ""
        cast = rng.choice(["", "", f".cast('{d2[3:]}')"]) if "int" not in d2 else ""
        src += f"outs += [(Tensor({x}){cast}{scale}).{op}(axis={axis})]\n"
        base = f"{x}.astype({d2})" if cast else x
        src += f"want += [({base}.astype(np.float64){scale}).{op}(axis={axis})]\n"
        src += (f"mag += [np.abs({base}.astype(np.float64){scale})"
                f".{'sum' if op == 'sum' else 'max'}(axis={axis})]\n")
        return src + f"lows += [{_low(d1, d2 if cast else d1)}]\nexact += [False]\n"
    if fam == "scan":  # a cumsum, cumprod or running max along any axis: scan_store
        shape = [rng.choice([1, 3, p()]), rng.choice([17, 64, p(), p()]), rng.choice([2, p()])]
        axis = rng.randrange(3)
        shape[axis] = max(shape[axis], 17)  # (past unroll_reduce's windows)
        src = _arr(x, tuple(shape), d1, rng, special)
        op = rng.choice(["cumsum", "cumprod", "cummax"])
        got = f"Tensor({x}).{op}({axis})" + ("[0]" if op == "cummax" else "")
        if op == "cumprod":  # (values near 1: a product of 257 normals is 0 or inf)
            src += f"{x} = (1 + {x} / 16).astype({d1})\n"
        ref = {"cumsum": "np.cumsum", "cumprod": "np.cumprod",
               "cummax": "np.maximum.accumulate"}[op]
        src += f"outs += [{got}]\nwant += [{ref}({x}.astype(np.float64), {axis})]\n"
        src += f"mag += [{ref}(np.abs({x}.astype(np.float64)), {axis})]\n"
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam.startswith("masked"):  # softmax(where(m, x, -inf)) or its mirror, in float32 or
        # float16 (cast around the difference): mask_actions' exp of a select
        r, n = rng.choice([1, 7, 64, p()]), rng.choice([8, 77, 128, p()])
        dt = F16 if "f16" in fam else F32
        src = _arr(x, (r, n), dt, rng)
        # every row keeps a value (a row of -inf only is NaN, in torch too)
        src += f"m{t} = rng.random(({r}, {n})) < 0.6\nm{t}[:, rng.integers(0, {n})] = True\n"
        got = (f"Tensor(~m{t}).where(-np.inf, Tensor({x}))" if fam.endswith("then") else
               f"Tensor(m{t}).where(Tensor({x}), -np.inf)")
        src += f"s{t} = np.where(m{t}, {x}.astype(np.float64), -np.inf)\n"
        src += f"e{t} = np.exp(s{t} - s{t}.max(-1, keepdims=True))\n"
        src += f"outs += [({got}).softmax(-1)]\nwant += [e{t} / e{t}.sum(-1, keepdims=True)]\n"
        return src + f"mag += [np.ones(({r}, {n}))]\nlows += [{_low(dt)}]\nexact += [False]\n"
    if fam == "tcols":  # out[c, a] = op over r of x[a, r, c]: interchange_store's reorder
        n, r, cl = rng.choice([3, 8, p()]), rng.choice([29, 64, 101]), rng.choice([p(), 16, 33])
        src = _arr(x, (n, r, cl), d1, rng, special)
        op = rng.choice(["sum", "max", "min"])
        src += f"outs += [Tensor({x}).permute(2, 0, 1).{op}(axis=2)]\n"
        src += f"want += [{x}.astype(np.float64).transpose(2, 0, 1).{op}(axis=2)]\n"
        src += (f"mag += [np.abs({x}.astype(np.float64)).transpose(2, 0, 1)"
                f".{'sum' if op == 'sum' else 'max'}(axis=2)]\n")
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam == "unnest":  # op over axes 0 and 3 of (n, a, b, c), n prime: split into partials
        # fused back into one kernel, a reduce of a reduce (unnest_reduce); float32, so the
        # nest is one op's (a float16 sum's partials are rounded between the two)
        n, cl = rng.choice([1021, 2039, 997]), rng.choice([17, 33, 64])
        src = _arr(x, (n, rng.choice([2, 5]), rng.choice([1, 3]), cl), "np.float32", rng,
                   special)
        op = rng.choice(["sum", "max", "min"])
        src += f"outs += [Tensor({x}).{op}(axis=(0, 3))]\n"
        src += f"want += [{x}.astype(np.float64).{op}(axis=(0, 3))]\n"
        src += (f"mag += [np.abs({x}.astype(np.float64))"
                f".{'sum' if op == 'sum' else 'max'}(axis=(0, 3))]\n")
        return src + "lows += [np.float32]\nexact += [False]\n"
    if fam == "tinplace":
        return _inplace_part(rng, t, d1, special)
    if fam == "ttile":  # out[a, c, b] = 2 x[a, b, c] + y[b, c]: transpose_store's tile
        # (rows of 521 to 1000: a pass over them reads more lines than half of L1 holds, and
        # the output's rows of float32 are less than a page apart)
        n, r, cl = rng.choice([1, 2]), rng.choice([521, 600, 1000]), rng.choice([41, 64, 97])
        src = _arr(x, (n, r, cl), d1, rng, special) + _arr(y, (r, cl), d1, rng)
        src += f"outs += [Tensor({x}).transpose(1, 2) * 2 + Tensor({y}).transpose(0, 1)]\n"
        src += (f"want += [{x}.astype(np.float64).transpose(0, 2, 1) * 2 + "
                f"{y}.astype(np.float64).T]\n")
        src += (f"mag += [np.abs({x}.astype(np.float64)).transpose(0, 2, 1) * 2 + "
                f"np.abs({y}.astype(np.float64)).T]\n")
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam in ("pool", "padpool"):
        ch, h, wd = rng.choice([1, 2, 3]), rng.choice([8, 9, 13]), rng.choice([16, 19, 32])
        ks = rng.choice([2, 3, 4])
        # (a stride of the kernel half the time: overlapping windows are a max or sum of
        # strided views, tensor_ops._window_max / _window_sum, not a small reduce, so only
        # windows that do not overlap unroll; max twice as often as avg)
        st = rng.choice([1, 2, ks, ks])
        # padded two times in three (torch's most, half the window): a padded window's reads
        # are gated, and opt.rules' peel_loops runs the border apart so the rest is upcast
        pd = rng.choice([0, ks // 2, ks // 2]) if fam == "pool" else max(1, ks // 2)
        op = rng.choice(["max_pool2d", "max_pool2d", "avg_pool2d"])
        src = _arr(x, (1, ch, h, wd), d1, rng, special)
        src += f"outs += [Tensor({x}).{op}({ks}, stride={st}, padding={pd})]\n"
        fill = "-np.inf" if op == "max_pool2d" else "0"  # (avg counts the padding, as torch)
        padded = (f"np.pad({x}.astype(np.float64), ((0, 0), (0, 0), ({pd}, {pd}), ({pd}, {pd})), "
                  f"constant_values={fill})")
        win = (f"np.lib.stride_tricks.sliding_window_view({padded}, ({ks}, {ks}), "
               f"axis=(2, 3))[:, :, ::{st}, ::{st}]")
        red = "max" if op == "max_pool2d" else "mean"
        src += f"want += [{win}.{red}(axis=(-2, -1))]\n"
        # (the magnitudes over the windows padded with 0: -inf's would be no bound)
        mag = win.replace(f"constant_values={fill}", "constant_values=0")
        src += f"mag += [np.abs({mag}).max(axis=(-2, -1))]\n"
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam == "shortrows":  # softmax, log_softmax, logsumexp or layernorm over rows of 5..16
        # values (rows_across: float32 rows across lanes; float64 keeps rows), NaN/-0.0 in some
        # (rows of 2..4 are upcast_store's and upcast_across's already)
        r, n = rng.choice([8, 61, 1000, p()]), rng.randint(5, 16)
        dt = rng.choice([F32, F32, F32, F32, F64])
        src = _arr(x, (r, n), dt, rng, special)
        op = rng.choice(["softmax", "log_softmax", "logsumexp", "layernorm"])
        x64 = f"{x}.astype(np.float64)"
        src += f"m{t} = {x64}.max(-1, keepdims=True)\n"
        src += f"s{t} = np.log(np.exp({x64} - m{t}).sum(-1, keepdims=True))\n"
        src += f"d{t} = {x64} - {x64}.mean(-1, keepdims=True)\n"
        got = {"softmax": "softmax(-1)", "log_softmax": "log_softmax(-1)",
               "logsumexp": "logsumexp(-1)", "layernorm": "layernorm()"}[op]
        want = {"softmax": f"np.exp({x64} - m{t} - s{t})",
                "log_softmax": f"{x64} - m{t} - s{t}",
                "logsumexp": f"(s{t} + m{t})[:, 0]",
                "layernorm": f"d{t} / np.sqrt((d{t} * d{t}).mean(-1, keepdims=True) + 1e-5)"}[op]
        # (each value's magnitude and its row's: the row sums' error bound scales with them)
        mag = {"softmax": f"np.ones(({r}, {n}))",
               "log_softmax": f"np.abs({x64}) + np.abs({x64}).max(-1, keepdims=True) + 1",
               "logsumexp": f"np.abs({x64}).max(-1) + 1",
               "layernorm": f"np.abs(d{t}) / np.sqrt((d{t} * d{t}).mean(-1, keepdims=True) "
                            "+ 1e-5) + 1"}[op]
        src += f"outs += [Tensor({x}).{got}]\nwant += [{want}]\nmag += [{mag}]\n"
        return src + f"lows += [{_low(dt)}]\nexact += [False]\n"
    if fam == "selects":  # a select in the other arm of one on the same condition, under a
        # MUL and an ADD, either arm (select_actions: the inner condition is known there); the
        # four forms summed, one output (a part is one output)
        shape = (rng.choice([1, 7, p()]), rng.choice([5, 64, p()]))
        dt = rng.choice([F32, F32, F64])
        src = "".join(_arr(n, shape, dt, rng, special) for n in (x, a, b, y))
        src += (f"c{t}, ta{t}, tb{t}, tp{t} = Tensor({x}) > 0, Tensor({a}), Tensor({b}), "
                f"Tensor({y})\nk{t}, a{t}64, b{t}64, p{t}64 = {x} > 0, {a}.astype(np.float64), "
                f"{b}.astype(np.float64), {y}.astype(np.float64)\n")
        got = " + ".join(f"c{t}.where(ta{t}, tb{t} {op} c{t}.where(tp{t}, ta{t})) + "
                         f"c{t}.where(tb{t} {op} c{t}.where(tp{t}, ta{t}), ta{t})" for op in "*+")
        want = " + ".join(f"np.where(k{t}, a{t}64, b{t}64 {op} a{t}64) + "
                          f"np.where(k{t}, b{t}64 {op} p{t}64, a{t}64)" for op in "*+")
        # (the magnitude of what each element reads: a NaN in an arm not read is no bound)
        mag = (f"4 * np.where(k{t}, (np.abs(a{t}64) + 1) * (np.abs(b{t}64) + 1) * "
               f"(np.abs(p{t}64) + 1), (np.abs(a{t}64) + 1) * (np.abs(b{t}64) + 1))")
        src += f"outs += [{got}]\nwant += [{want}]\nmag += [{mag}]\n"
        return src + f"lows += [{_low(dt)}]\nexact += [False]\n"
    if fam == "padonly":  # an int sum and product of rows all padding: sym keeps acc + 0
        r, cl, top = rng.choice([2, 5, p()]), rng.choice([3, 8, p()]), rng.choice([1, 2])
        dt = rng.choice(["np.int32", "np.int64", "np.int8"])
        src = f"{x} = rng.integers(-3, 4, ({r}, {cl})).astype({dt})\n"
        pad = f"(({top}, 1), (2, 2))"
        rows = f"Tensor({x}).pad({pad}).shrink(((0, {top}), (0, {cl + 4})))"
        want = f"np.pad({x}, {pad})[:{top}].astype(np.float64)"
        src += f"outs += [{rows}.sum(1) + {rows}.prod(1)]\n"
        src += f"want += [{want}.sum(1) + {want}.prod(1)]\n"
        return src + "mag += [None]\nlows += [None]\nexact += [True]\n"
    if fam == "full":
        # past two threads' shares of the region's cost (rules/pack_helpers.py's
        # `region_threads`): split and threaded (2^20 values, one share, ran on one core)
        size = rng.choice([(2 << 20) + 7, (2 << 20) + 13, 2053 * 1031])
        op = rng.choice(["sum", "max", "min"])
        dt = rng.choice([F32, F64, "np.int32"])
        # small whole numbers: every partial sum is exact in float32 (< 2^24) in any order,
        # so a sum of 2^21 values is checked bit for bit (a lost or doubled value shows)
        src = f"{x} = rng.integers(-3, 4, {size}).astype({dt})\n"
        src += f"outs += [Tensor({x}).{op}()]\nwant += [{x}.astype(np.float64).{op}()]\n"
        return src + f"mag += [None]\nlows += [{_low(dt)}]\nexact += [True]\n"
    if fam == "chnorm":  # centred per channel over (N, H, W): each image's H*W plane one run
        shape = (rng.choice([1, 2, 3]), rng.choice([1, 3, 5]), rng.choice([2, 7, 8]),
                 rng.choice([3, 13, 16, p()]))
        src = _arr(x, shape, d1, rng, special)
        src += f"outs += [(Tensor({x}) - Tensor({x}).mean(axis=(0, 2, 3), keepdim=True)).relu()]\n"
        x64 = f"{x}.astype(np.float64)"
        src += (f"want += [relu({x64} - {x64}.mean(axis=(0, 2, 3), keepdims=True))]\n"
                f"mag += [np.abs({x64}) + np.abs({x64}).mean(axis=(0, 2, 3), keepdims=True)]\n")
        return src + f"lows += [{_low(d1)}]\nexact += [False]\n"
    if fam == "chscale":  # per channel scale and shift: a plain store of N*C runs of H*W
        shape = (rng.choice([1, 2, 3]), rng.choice([2, 3, 5]), rng.choice([2, 7, 8]),
                 rng.choice([3, 13, 16, p()]))
        src = _arr(x, shape, d1, rng, special) + _arr(w, (shape[1], 1, 1), d2, rng)
        src += f"outs += [(Tensor({x}) * Tensor({w}) + 0.5).relu()]\n"
        src += (f"want += [relu({x}.astype(np.float64) * {w}.astype(np.float64) + 0.5)]\n"
                f"mag += [np.abs({x}.astype(np.float64) * {w}.astype(np.float64)) + 0.5]\n")
        return src + f"lows += [{_low(d1, d2)}]\nexact += [False]\n"
    if fam in ("ewise", "big"):
        r, cl = rng.choice([1, 7, 33, p(), 1031]), rng.choice([8, 13, 64, p(), 1021])
        if fam == "big":  # past PARALLEL_MIN_WORK: a loop nest split across cores
            r, cl = rng.choice([1031, 2053, 4099]), rng.choice([257, 521, 1021])
        src = _arr(x, (r, cl), d1, rng, special) + _arr(y, (cl,), d2, rng)
        op = rng.choice(["+", "*", "-"])
        src += f"outs += [(Tensor({x}) {op} Tensor({y})).relu()]\n"
        src += f"want += [relu({x}.astype(np.float64) {op} {y}.astype(np.float64))]\n"
        return src + f"mag += [None]\nlows += [{_low(d1, d2)}]\nexact += [False]\n"
    # attention: q, k, v (float32 most often), scores scaled by a Python, numpy float64 or
    # numpy float32 scalar (a float64 one makes the softmax float64: issue 31's first item)
    s, n, d = rng.choice([6, 13, 37, 64, 97]), rng.choice([6, 17, 64, 101]), rng.choice([4, 8, 16])
    dq = rng.choice([F32, F32, F64, F16])
    q, k, v = "q" + t, "k" + t, "v" + t
    src = _arr(q, (s, d), dq, rng, special) + _arr(k, (n, d), dq, rng) + _arr(v, (n, d), dq, rng)
    scale = rng.choice(["(1 / np.sqrt(8))", "0.25", "np.float32(0.3)", "np.float16(0.25)"])
    src += f"outs += [((Tensor({q}) @ Tensor({k}).T) * {scale}).softmax(-1) @ Tensor({v})]\n"
    q64, k64, v64 = (f"{z}.astype(np.float64)" for z in (q, k, v))
    src += (f"sc = ({q64} @ {k64}.T) * float({scale})\n"
            "e = np.exp(sc - sc.max(-1, keepdims=True))\n"
            f"want += [e / e.sum(-1, keepdims=True) @ {v64}]\n"
            # a score's rounding error moves its weight by as much, relative: the bound on the
            # scores, times the output's magnitude
            f"mag += [np.abs(e / e.sum(-1, keepdims=True)) @ np.abs({v64}) * (1 + "
            f"np.nanmax(np.abs({q64}) @ np.abs({k64}).T) * abs(float({scale})))]\n")
    return src + f"lows += [{_low(dq)}]\nexact += [False]\n"


def _gen_sort(seed: int) -> Case:
    """sort / argsort / topk over rows holding NaN, -0.0, 0.0 and ties, against torch
    (NaN largest, -0.0 equal to 0.0 and kept, stable)."""
    rng = random.Random(f"sort-{seed}")
    shape = rng.choice([(rng.randint(1, 9),), (rng.randint(1, 4), rng.randint(1, 9)),
                        (2, rng.randint(1, 5), 3)])
    dim = rng.randrange(-len(shape), len(shape))
    dt = rng.choice(["np.float32", "np.float32", "np.float64", "np.float16"])
    src = _HEAD.format(seed=seed) + "import torch\n"
    src += (f"x = rng.choice(np.array([np.nan, -0.0, 0.0, 1.0, -1.0, 2.5, np.inf, -np.inf]), "
            f"{shape}).astype({dt})\n")
    op = rng.choice(["sort", "argsort", "topk"])
    desc = rng.random() < 0.5
    if op == "topk":
        k = rng.randint(0, shape[dim])
        # torch's topk does not pin the order of equal values (0.0 and -0.0 come in either
        # order), ours is "in sort's order": the first k of torch's stable sort, and torch's
        # topk agrees with it as numbers
        src += (f"v, i = Tensor(x).topk({k}, dim={dim}, largest={desc})\noutsv = [v, i]\n"
                f"tv, ti = torch.from_numpy(x).sort(dim={dim}, descending={desc}, stable=True)\n"
                f"tv, ti = tv.narrow({dim}, 0, {k}), ti.narrow({dim}, 0, {k})\n"
                f"tk = torch.from_numpy(x).topk({k}, dim={dim}, largest={desc}).values.numpy()\n")
    elif op == "sort":
        src += (f"v, i = Tensor(x).sort(dim={dim}, descending={desc})\noutsv = [v, i]\n"
                f"tv, ti = torch.from_numpy(x).sort(dim={dim}, descending={desc}, stable=True)\n")
    else:
        src += (f"i = Tensor(x).argsort(dim={dim}, descending={desc})\noutsv = [i]\n"
                f"tv, ti = torch.from_numpy(x).sort(dim={dim}, descending={desc}, stable=True)\n")
    src += ("outs = outsv\n"
            f"want = [tv.numpy(), ti.numpy()]{'[1:]' if op == 'argsort' else ''}\n"
            f"dim = {dim}\nlow = None\nmag = None\n")
    return Case("sort", seed, src, exact=True)


def _gen_pick(seed: int) -> Case:
    """A pick: gather, tensor indices, scatter or masked_select, each a masked sum over a
    one-hot that must give the picked element bit for bit (-0.0 kept), over values holding
    -0.0, 0.0, NaN and both infinities; on the default device, on another, or sharded by rows;
    now and then along an axis long enough that the pick's sum is split in two kernels.
    Oracle: numpy's indexing."""
    rng = random.Random(f"pick-{seed}")
    dt = rng.choice(["np.float32", "np.float32", "np.float64", "np.float16"])
    rows, cols = (2, 40000) if rng.random() < 0.1 else (rng.choice([2, 4]), rng.randint(1, 9))
    src = _HEAD.format(seed=seed)
    src += (f"x = rng.choice(np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1.5, -2.0]), "
            f"({rows}, {cols})).astype({dt})\n")
    op = rng.choice(["gather", "index", "index2", "scatter", "masked_select"])
    place = rng.choice(["", "", ".to('CPU:1')"] +
                       ([".shard(('CPU', 'CPU:1'), axis=0)"] if op != "masked_select" else []))
    put = ".shard(('CPU', 'CPU:1'))" if "shard" in place else place  # indices: replicas
    k = rng.randint(1, min(cols, 6))
    if op == "gather":
        src += (f"i = rng.integers(0, {cols}, ({rows}, {k})).astype(np.int32)\n"
                f"outs = [Tensor(x){place}.gather(1, Tensor(i){put})]\n"
                "want = [np.take_along_axis(x, i, 1)]\n")
    elif op == "index":
        src += (f"i = rng.integers(-{cols}, {cols}, ({k},)).astype(np.int32)\n"
                f"outs = [Tensor(x){place}[:, Tensor(i){put}]]\nwant = [x[:, i]]\n")
    elif op == "index2":
        src += (f"r = rng.integers(0, {rows}, ({k},)).astype(np.int32)\n"
                f"c = rng.integers(0, {cols}, ({k},)).astype(np.int32)\n"
                f"outs = [Tensor(x){place}[Tensor(r){put}, Tensor(c){put}]]\nwant = [x[r, c]]\n")
    elif op == "scatter":  # distinct columns per row (numpy's put has no "last wins" rule)
        src += (f"i = np.argsort(rng.random(({rows}, {cols})), 1)[:, :{k}].astype(np.int32)\n"
                f"s = rng.choice(np.array([-0.0, 0.0, np.nan, -np.inf, 3.0]), ({rows}, {k}))"
                f".astype({dt})\n"
                f"outs = [Tensor(x){place}.scatter(1, Tensor(i){put}, Tensor(s){put})]\n"
                "w = x.copy()\nnp.put_along_axis(w, i, s, 1)\nwant = [w]\n")
    else:
        src += (f"m = rng.random(({rows}, {cols})) < 0.5\n"
                f"outs = [Tensor(x){place}.masked_select(Tensor(m){put})]\nwant = [x[m]]\n")
    return Case("pick", seed, src + "low = None\nmag = None\n", exact=True)


def _view_src(ops: Sequence[tuple[str, Any]], nd: int) -> tuple[str, str]:
    """(tensor method chain, the same on a numpy array) for view ops (flip, permute, shrink,
    reshape) of a tensor of `nd` axes."""
    t, n = "", ""
    for op, arg in ops:
        if op == "flip":
            t += f".flip({arg})"
            n += f"[{', '.join('::-1' if a in arg else ':' for a in range(nd))}]"
        elif op == "permute":
            t, n = t + f".permute({arg})", n + f".transpose({arg})"
        elif op == "shrink":
            t += f".shrink({arg})"
            n += f"[{', '.join(f'{lo}:{hi}' for lo, hi in arg)}]"
        else:
            t, n = t + f".reshape({arg})", n + f".reshape({arg})"
            nd = len(arg)
    return t, n


def _view_ops(rng: random.Random, shape: Shape, keep: int | None, count: int
              ) -> tuple[list[tuple[str, Any]], Shape, int | None]:
    """`count` random view ops of a tensor of `shape` (flips, permutes, shrinks and, unless
    an axis `keep` must stay whole (a sharded one), reshapes); the view's shape and where
    `keep` went."""
    ops: list[tuple[str, Any]] = []
    for _ in range(count):
        nd = len(shape)
        # flips and permutes most: they send element i somewhere else, which aliasing needs
        kind = rng.choice(["flip", "flip", "permute", "permute", "shrink"] +
                          (["reshape"] if keep is None else []))
        if kind == "flip":
            axes = tuple(a for a in range(nd) if a != keep and rng.random() < 0.6)
            if axes:
                ops.append(("flip", axes))
        elif kind == "permute":
            order = tuple(rng.sample(range(nd), nd))
            while nd > 1 and order == tuple(range(nd)):  # not the identity
                order = tuple(rng.sample(range(nd), nd))
            ops.append(("permute", order))
            shape = tuple(shape[o] for o in order)
            keep = None if keep is None else order.index(keep)
        elif kind == "shrink":
            arg = []
            for a, s in enumerate(shape):
                lo = 0 if a == keep else rng.randrange(s)
                arg.append((lo, s if a == keep else rng.randint(lo + 1, s)))
            ops.append(("shrink", tuple(arg)))
            shape = tuple(hi - lo for lo, hi in arg)
        else:
            shape = _factorizations(math.prod(shape), rng)
            ops.append(("reshape", shape))
    return ops, shape, keep


def _gen_assign_case(seed: int) -> Case:
    """An assign whose value reads its own target through another view: into a view of a
    sharded tensor (over 2 or 4 devices, along an axis or replicated; views that keep each
    shard whole, as Tensor.assign documents), or into an unsharded realized buffer. numpy
    reads the whole value first, then writes."""
    rng = random.Random(f"assign-{seed}")
    nd = rng.choice([2, 3])
    shape = tuple(rng.choice([2, 3, 4, 6]) for _ in range(nd))
    src = _HEAD.format(seed=seed) + _arr("a", shape, rng.choice([F32, F64, "np.int32"]), rng)
    if random.Random(f"assign-constant-{seed}").random() < 0.2:  # (other seeds unchanged)
        return _assign_into_constant(seed, rng, src, shape)
    shard = rng.random() < 0.6
    x, keep = "Tensor(a)", None
    if shard:
        devs = ("CPU", "CPU:1") if rng.random() < 0.7 else ("CPU", "CPU:1", "CPU:2", "CPU:3")
        axes = [k for k, s in enumerate(shape) if s % len(devs) == 0]
        keep = rng.choice(axes + [None]) if axes else None
        x += f".shard({devs}, axis={keep})"
    src += f"x = {x}.realize()\n"
    # the target: a view of a sharded tensor, the buffer itself otherwise (an unsharded view
    # is not assignable: Tensor.assign)
    tops, vshape, vkeep = _view_ops(rng, shape, keep, rng.randint(1, 2)) if shard \
        else ([], shape, None)
    # the value: the target read through another view of the written view's shape: the
    # tensor itself, a permute of it, or the written view; then maybe a flip. Never along a
    # sharded axis (that moves data between shards: Tensor.shard's views refuse it)
    cands: list[tuple[list[tuple[str, Any]], int | None]] = [(tops, vkeep)]
    if vshape == shape:  # the tensor itself (x.flip(1).assign(x): issue 31's example)
        cands += [([], keep)] * 2
    for _ in range(3):
        order = tuple(rng.sample(range(nd), nd))
        if tuple(shape[o] for o in order) == vshape:
            cands.append(([("permute", order)], None if keep is None else order.index(keep)))
    rops, rkeep = rng.choice(cands)
    axes = [a for a in range(len(vshape)) if a != rkeep]
    if vshape == shape and tops and rng.random() < 0.5:
        rops = []  # the tensor itself, written through another view: each kernel reads what
        # another of its iterations writes (x.flip(1).assign(x))
    elif axes and (rng.random() < 0.6 or rops == tops):
        rops = rops + [("flip", tuple(sorted(rng.sample(axes, rng.randint(1, len(axes))))))]
    tview, nview = _view_src(tops, nd)
    rt, rn = _view_src(rops, nd)
    plus = rng.choice(["", " + 1"])
    src += f"x{tview}.assign(x{rt}{plus})\noutsv = [x]\n"
    src += ("want = [a.copy()]\nidx = np.arange(a.size).reshape(a.shape)\n"
            f"want[0].flat[idx{nview}.ravel()] = (a{rn}{plus}).ravel()\n")
    return Case("assign", seed, src + "outs = outsv\nlow = None\nmag = None\n", exact=True)


def _assign_into_constant(seed: int, rng: random.Random, src: str, shape: Shape) -> Case:
    """An assign into a realized constant (a buffer on no device) of a value on another
    device, maybe reading the target, with other devices in use (a sharded tensor realized)
    and a view of the target taken before: the target stays on no device (`device` "CPU"),
    written in place, so the view reads every later write (the assign moved it to the
    value's device, a new buffer, and the view went stale)."""
    fill = rng.choice([0, 1, -2])
    if rng.random() < 0.5:
        make = f"Tensor.full({shape}, {fill}, dtype=Tensor(a).dtype)"
    else:
        make, fill = f"Tensor.zeros(*{shape}, dtype=Tensor(a).dtype)", 0
    dev = rng.choice(["CPU:1", "CPU:2"])
    reads = rng.random() < 0.5
    src += (f"x = {make}.realize()\n"
            "Tensor(a).shard(('CPU', 'CPU:1'), axis=None).realize()  # other devices in use\n"
            f"v = x.reshape(-1)\n"
            f"x.assign(Tensor(a, device={dev!r}){' + x' if reads else ''})\n"
            "x.assign(x * 2)\n"
            "assert x.device == 'CPU', f'the assign moved its target to {x.device}'\n"
            "outsv = [x, v]\n"
            f"w = ({'a + np.asarray(' + str(fill) + ', a.dtype)' if reads else 'a'}) * 2\n"
            "want = [w, w.reshape(-1)]\n")
    return Case("assign", seed, src + "outs = outsv\nlow = None\nmag = None\n", exact=True)


def _gen_rules(seed: int) -> Case:
    """A user rule guarded on a constant's value (`c.arg` compared with a threshold), through
    add_rules, run for several constants of the program (lifted float constants among them:
    runtime/float_params.py) in one process, so the schedule cache replays across them.

    The rule texts are a small family (two ops, three guards): add_rules keeps its check's
    verdict by content, so each text is proved once per process, while what the replay bug
    lives in, the constants, their order, the sizes and the stage, varies every program."""
    rng = random.Random(f"rules-{seed}")
    op, np_op = rng.choice([("MAX", "maximum"), ("MIN", "minimum")])
    # float32 only, c finite and not 0 in float32: on ints x * c wraps, a float16 CONST of
    # 1e-118 is 0, -0.0 * inf is NaN; such rules are refuted, and add_rules refuses them
    cmp, thr = rng.choice([(">", rng.choice(["1e-30", "0.5"])), ("<", "-1e-30")])
    x = "x:float32"
    # (c finite: -0.0 * inf is NaN, and the rule would be refuted, so add_rules refuses it)
    guard = f"c.arg {cmp} {thr} and c.arg < 1e30 and c.arg > -1e30"
    rule = f"{op}(MUL({x}, c:CONST), MUL(y, c)) if {guard} -> MUL({op}(x, y), c)"
    if cmp == "<":  # a negative c swaps max and min, so the sound rule for c < 0 swaps
        other = "MIN" if op == "MAX" else "MAX"
        rule = f"{op}(MUL({x}, c:CONST), MUL(y, c)) if {guard} -> MUL({other}(x, y), c)"
    # constants the guard accepts, then ones it refuses: a replayed schedule must run the
    # guard again (round ones stay CONSTs, the others are lifted: runtime/float_params.py)
    pick = lambda: rng.choice([0.5, 0.3, 0.7, 1.3, round(rng.uniform(0.05, 3), 3)])  # noqa
    consts = [pick(), pick(), -pick(), -pick()]
    if cmp == "<":
        consts = [-c for c in consts]
    if rng.random() < 0.3:
        rng.shuffle(consts)
    n = rng.choice([4, 7, 16])
    src = _HEAD.format(seed=seed) + "import os, tempfile, rulegrad\n"
    src += f"a = rng.standard_normal({n}).astype(np.float32)\n"
    src += f"b = rng.standard_normal({n}).astype(np.float32)\n"
    src += ("d = tempfile.mkdtemp()\npath = os.path.join(d, 'guard.rules')\n"
            f"open(path, 'w').write('rules guard = {{\\n  g: {rule}\\n}}\\n')\n"
            "outs, want = [], []\n"
            f"with rulegrad.add_rules(path, {rng.choice(['before', 'after'])}="
            f"{rng.choice(['earliest', 'pm_rangeify', 'pm_rangeify', 'pm_cleanups'])!r}):\n"
            f"    for c in {consts}:\n"
            f"        outs.append(((Tensor(a) * c).{np_op}(Tensor(b) * c)).realize())\n"
            f"        want.append(np.{np_op}(a * np.float32(c), b * np.float32(c)))\n")
    return Case("rules", seed, src + "low = np.float32\nmag = None\n", exact=True)


SYM_OPS = ("sum", "max", "min", "mean", "var", "std", "prod", "argmax", "argmin", "softmax",
           "log_softmax", "logsumexp", "cumsum", "cumprod", "cummax", "sort", "any", "all")


def _gen_symbolic(seed: int) -> Case:
    """Every reduction over a tensor with a symbolic axis (a Variable bound to a value), along
    that axis or another; against numpy on the bound prefix."""
    rng = random.Random(f"symbolic-{seed}")
    rows, cols = rng.choice([3, 5, 8]), rng.choice([4, 6, 9])
    vmax_axis = rng.choice([0, 1])
    full = (rows, cols)
    value = rng.randint(1, full[vmax_axis])
    op = SYM_OPS[seed % len(SYM_OPS)]  # every reduction, in turn
    axis = rng.choice([0, 1, -1])
    src = _HEAD.format(seed=seed) + "from rulegrad import Variable\n"
    src += _arr("a", full, F32, rng)
    ends = ", ".join(f"(0, Variable('n', 1, {full[k]}).bind({value}))" if k == vmax_axis
                     else "None" for k in range(2))
    src += f"x = Tensor(a).shrink(({ends}))\n"
    sl = f"a[:{value}]" if vmax_axis == 0 else f"a[:, :{value}]"
    src += f"p = {sl}.astype(np.float64)\n"
    t_call, n_ref = {
        "sum": (f".sum(axis={axis})", f"p.sum(axis={axis})"),
        "max": (f".max(axis={axis})", f"p.max(axis={axis})"),
        "min": (f".min(axis={axis})", f"p.min(axis={axis})"),
        "mean": (f".mean(axis={axis})", f"p.mean(axis={axis})"),
        "var": (f".var(axis={axis})", f"p.var(axis={axis}, ddof=1)"),
        "argmax": (f".argmax(axis={axis})", f"p.argmax(axis={axis})"),
        "softmax": (f".softmax({axis})", f"np.exp(p - p.max({axis}, keepdims=True)) / "
                                          f"np.exp(p - p.max({axis}, keepdims=True)).sum({axis}, "
                                          "keepdims=True)"),
        "log_softmax": (f".log_softmax({axis})", f"p - p.max({axis}, keepdims=True) - np.log("
                                                  f"np.exp(p - p.max({axis}, keepdims=True))"
                                                  f".sum({axis}, keepdims=True))"),
        "cumsum": (f".cumsum({axis})", f"p.cumsum({axis})"),
        "sort": (f".sort({axis})[0]", f"np.sort(p, {axis})"),
        "std": (f".std(axis={axis})", f"p.std(axis={axis}, ddof=1)"),
        "prod": (f".prod(axis={axis})", f"p.prod(axis={axis})"),
        "argmin": (f".argmin(axis={axis})", f"p.argmin(axis={axis})"),
        "logsumexp": (f".logsumexp(axis={axis})", f"np.log(np.exp(p).sum(axis={axis}))"),
        "cumprod": (f".cumprod({axis})", f"p.cumprod({axis})"),
        "cummax": (f".cummax({axis})[0]", f"np.maximum.accumulate(p, {axis})"),
        "any": (f"(x > 0).any(axis={axis})", f"(p > 0).any(axis={axis})"),
        "all": (f"(x > 0).all(axis={axis})", f"(p > 0).all(axis={axis})"),
    }[op]
    expr = f"x{t_call}" if t_call.startswith(".") else t_call
    src += f"outs = [{expr}]\nwant = [{n_ref}]\n"
    return Case("symbolic", seed, src + f"mag = [{_sym_mag(op, axis, n_ref)}]\nlow = np.float32\n")


def _sym_mag(op: str, axis: int, n_ref: str) -> str:
    """The magnitude an op's float32 error is measured against (numpy, over `p`): a sum's is
    the sum of its terms' magnitudes (the semantics table's reduction contract: a sum that
    cancels to near 0 still carries the rounding of its terms), and a log's absolute error is
    its argument's relative error, so it gets 1 more (plus the max added back). The others
    (max, prod, var, softmax, ...) round relative to their result."""
    by_op = {"sum": f"np.abs(p).sum(axis={axis})", "mean": f"np.abs(p).mean(axis={axis})",
             "cumsum": f"np.abs(p).cumsum({axis})",
             "logsumexp": f"np.abs(p).max(axis={axis}) + np.abs({n_ref}) + 1",
             "log_softmax": f"np.abs({n_ref}) + 1"}
    return by_op.get(op, f"np.abs({n_ref})")


# The IR's ALU ops (runtime/ops.py) the classes above never build, each from the Tensor method
# that builds it, on inputs where numpy's value is the op's (runtime/semantics.py): exp below
# overflow, log of positive values, a pow of a positive base, divisions by nonzero, shifts within
# the width. (name, tensor expression, numpy expression, dtypes, domain of a and of b.) {A}, {B}
# are the rulegrad tensors; {a}, {b} numpy's arrays: float64 copies for a float op, the inputs
# themselves for the exact ones (ints, casts, and the float ops that round nothing).
I32, I64, U8, BOOL = "np.int32", "np.int64", "np.uint8", "np.bool_"
_FL = (F32, F32, F64, F16)
OPS_UNARY = (
    ("cos", "{A}.cos()", "np.cos({a})", _FL, "trig"),
    ("sin", "{A}.sin()", "np.sin({a})", (F64, F16), "trig"),
    ("exp", "{A}.exp()", "np.exp({a})", _FL, "exp"),
    ("log", "{A}.log()", "np.log({a})", _FL, "pos"),
    ("exp2", "{A}.exp2()", "np.exp2({a})", _FL, "exp"),
    ("log2", "{A}.log2()", "np.log2({a})", _FL, "pos"),
    ("sqrt", "{A}.sqrt()", "np.sqrt({a})", _FL, "nonneg"),
    ("reciprocal", "{A}.reciprocal()", "1 / {a}", _FL, "nonzero"),
    ("neg", "-{A}", "-{a}", (F64, F16, I32, I64), "any"),
    ("trunc", "{A}.trunc()", "np.trunc({a})", _FL, "halves"),
    ("floor", "{A}.floor()", "np.floor({a})", _FL, "halves"),
    ("ceil", "{A}.ceil()", "np.ceil({a})", _FL, "halves"),
    ("round", "{A}.round()", "np.round({a})", _FL, "halves"),
    ("not", "{A}.logical_not()", "np.logical_not({a})", (BOOL,), "any"),
    ("bitcast", "{A}.bitcast('int32')", "{a}.view(np.int32)", (F32,), "any"),
    ("bitcastf", "{A}.bitcast('float32')", "{a}.view(np.float32)", (I32,), "any"),
    ("tofloat16", "{A}.cast('float16')", "{a}.astype(np.float16)", (F32, F64, I32), "any"),
    # (runtime/semantics.py's CAST: NaN gives 0 and +-inf saturate, where numpy leaves them to
    # the CPU: INT_MIN on x86)
    ("toint", "{A}.cast('int32')", "np.nan_to_num(np.trunc({a}.astype(np.float64)), nan=0, "
     "posinf=2**31 - 1, neginf=-2**31).astype(np.int64).astype(np.int32)", (F32, F64, F16),
     "halves"),
)
OPS_BINARY = (
    ("pow", "{A} ** {B}", "np.power({a}, {b})", _FL, "base", "exponent"),
    ("div", "{A} / {B}", "{a} / {b}", (F64, F16), "any", "nonzero"),
    ("floordiv", "{A} // {B}", "np.floor_divide({a}, {b})", (*_FL, I32, I64, U8), "any",
     "nonzero"),
    ("mod", "{A} % {B}", "np.remainder({a}, {b})", (*_FL, I32, I64, U8), "any", "nonzero"),
    ("truncdiv", "{A}.div({B}, rounding_mode='trunc')", "np.trunc({a} / {b})", (F32, F64),
     "any", "nonzero"),
    ("itruncdiv", "{A}.div({B}, rounding_mode='trunc')",
     "np.sign({a}) * np.sign({b}) * (np.abs({a}) // np.abs({b}))", (I32, I64), "any", "nonzero"),
    ("ipow", "{A} ** {B}", "{a} ** {b}", (I32, I64), "small", "shift"),
    ("xor", "{A} ^ {B}", "{a} ^ {b}", (I32, I64, U8, BOOL), "any", "any"),
    ("shl", "{A} << {B}", "{a} << {b}", (I32, I64, U8), "any", "shift"),
    ("shr", "{A} >> {B}", "{a} >> {b}", (I32, I64, U8), "any", "shift"),
    ("and", "{A} & {B}", "{a} & {b}", (I32, I64, U8, BOOL), "any", "any"),
    ("or", "{A} | {B}", "{a} | {b}", (I32, I64, U8, BOOL), "any", "any"),
    ("where", "({A} > {B}).where({A}, {B})", "np.where({a} > {b}, {a}, {b})",
     (F16, I64, U8, BOOL), "any", "any"),
    ("add", "{A} + {B}", "{a} + {b}", (F16, U8, BOOL), "any", "any"),
    ("mul", "{A} * {B}", "{a} * {b}", (F16, I64, U8, BOOL), "any", "any"),
    ("maximum", "{A}.maximum({B})", "np.maximum({a}, {b})", (F64, F16, I32, U8, BOOL), "any",
     "any"),
    ("minimum", "{A}.minimum({B})", "np.minimum({a}, {b})", (F64, F16, I32, I64, U8, BOOL), "any",
     "any"),
    ("sub", "{A} - {B}", "{a} - {b}", (F64, F16, I32, U8), "any", "any"),
    ("lt", "{A} < {B}", "{a} < {b}", (F16, F64, I64, U8, BOOL), "any", "any"),
    ("ne", "{A} != {B}", "{a} != {b}", (F16, F64, I64, U8, BOOL), "any", "any"),
    ("eq", "{A} == {B}", "{a} == {b}", (F16, F64, I32, U8, BOOL), "any", "any"),
)
# the ops whose value is exact (bits compared): everything on ints and bools, the casts, and
# the float ops that round nothing
OPS_EXACT = ("neg", "trunc", "floor", "ceil", "round", "not", "bitcast", "bitcastf",
             "tofloat16", "toint", "floordiv", "mod", "xor", "shl", "shr", "maximum", "minimum",
             "lt", "ne", "eq", "and", "or", "where")
OPS_SHAPES = ((1,), (7,), (3, 97), (64, 100), (131, 257), (1031, 521))


def _ops_input(name: str, shape: Shape, dt: str, domain: str, rng: random.Random) -> str:
    """Source for an input of `domain`: values where the op's numpy value is its own."""
    if dt == BOOL:
        return f"{name} = rng.random({shape}) < 0.5\n"
    if "int" in dt:
        lo, hi = {"shift": (0, 8), "nonzero": (1, 40), "small": (-5, 6)}.get(domain,
                                                                             (-1000, 1000))
        line = f"{name} = rng.integers({lo}, {hi}, {shape}).astype({dt})\n"
        if domain == "nonzero" and dt != U8:  # (a negative divisor too, where there is one)
            line += f"{name} *= rng.choice(np.array([-1, 1], {dt}), {shape})\n"
        return line
    draw = {"trig": "rng.uniform(-100, 100, {s})", "exp": "rng.uniform(-10, 10, {s})",
            "pos": "np.exp(rng.uniform(-6, 6, {s}))",
            "nonneg": "np.abs(rng.standard_normal({s})) * 4",
            "nonzero": "rng.choice([-1, 1], {s}) * rng.uniform(0.25, 8, {s})",
            "halves": "rng.integers(-80, 80, {s}) / rng.choice([1, 2, 4, 10], {s})",
            "base": "rng.uniform(0.1, 4, {s})", "exponent": "rng.uniform(-3, 3, {s})",
            "any": "rng.standard_normal({s}) * 3"}[domain]
    return f"{name} = ({draw.format(s=shape)}).astype({dt})\n"


def _gen_ops(seed: int) -> Case:
    """The IR's ops no other class builds (OPS_UNARY, OPS_BINARY: cos, exp2, log2, reciprocal,
    trunc, pow, integer and float division and remainder, xor, shifts, bitcasts, casts to
    float16, ...), in every dtype the Tensor API gives them, two to four parts per program
    (outputs realized together), each an op over sizes from 1 to past the threads' threshold,
    then now and then a reduction (sum, max, min) over its last axis or all of it."""
    rng = random.Random(f"ops-{seed}")
    src = _HEAD.format(seed=seed) + "outs, want, mag, lows, exact = [], [], [], [], []\n"
    for part in range(rng.randint(2, 4)):
        src += f"{PART}rng = np.random.default_rng(({seed}, {part}))\n"
        src += _ops_part(rng, str(part))
    return Case("ops", seed, src + "low = None\n")


def _ops_part(rng: random.Random, t: str) -> str:
    entry = rng.choice(OPS_UNARY + OPS_BINARY)
    name, texpr, nexpr, dts, doms = entry[0], entry[1], entry[2], entry[3], entry[4:]
    dt, shape = rng.choice(dts), rng.choice(OPS_SHAPES)
    a, b = "a" + t, "b" + t
    src = f"# {name} on {dt}\n"
    src += "".join(_ops_input(n, shape, dt, d, rng) for n, d in zip((a, b), doms))
    if "float" in dt and rng.random() < 0.3:  # IEEE's special values in a, now and then
        src += (f"{a}.flat[rng.integers(0, {a}.size, 4)] = "
                "rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]), 4)\n")
    exact = name in OPS_EXACT or dt in (I32, I64, U8, BOOL)
    # an exact op's oracle reads the inputs themselves (numpy's op in their dtype); a rounding
    # one's reads float64 copies, and the result is held to the input dtype's tolerance
    na, nb = (a, b) if exact else (f"{a}.astype(np.float64)", f"{b}.astype(np.float64)")
    out = texpr.format(A=f"Tensor({a})", B=f"Tensor({b})")
    ref = nexpr.format(a=na, b=nb)
    red = rng.choice(["", "", "", "sum", "max", "min"])
    if red and (name in ("bitcastf", "not", "xor", "and", "or", "lt", "ne", "eq") or dt == BOOL or
                (red == "sum" and (exact or dt == F16))):
        # (not drawn: NaN payloads, bools, int sums whose dtype numpy widens, and float16 sums,
        # which overflow to inf where float64's does not)
        red = ""
    if red:
        axis = rng.choice(["-1", "None"])
        out, ref = f"({out}).{red}(axis={axis})", f"({ref}).{red}(axis={axis})"
    src += f"outs += [{out}]\nwant += [{ref}]\n"
    mag = f"np.abs({nexpr.format(a=na, b=nb)}).sum(axis={axis})" if red == "sum" else "None"
    return src + f"mag += [{mag}]\nlows += [{_low(dt)}]\nexact += [{exact}]\n"


CLASS_GENERATORS: dict[str, Callable[[int], Case]] = {
    "mixed": _gen_mixed, "sort": _gen_sort, "assign": _gen_assign_case, "rules": _gen_rules,
    "symbolic": _gen_symbolic, "opt": _gen_opt, "pick": _gen_pick, "ops": _gen_ops,
}
CLASSES = ("schedule", *CLASS_GENERATORS)
# a float sum's result may differ from the exact one by its terms' count times eps times the
# sum of their magnitudes (runtime/semantics.py's reduction contract); the programs' sums are
# of at most ~2^20 terms summed in blocks, so this many eps of `mag` bounds every backend's
SUM_EPS = 64


def _execute(case: Case, backend: str, scheduler: str) -> dict[str, Any]:
    """Run the case's source with `backend` and `scheduler`; its namespace, `got` filled."""
    from rulegrad.runtime.env import env_set
    from rulegrad.runtime.kernelize import using

    with env_set({"RULEGRAD_BACKEND": backend}):
        with using(scheduler), np.errstate(all="ignore"):
            ns: dict[str, Any] = {}
            exec(compile(case.source, f"<{case.cls} seed {case.seed}>", "exec"), ns)  # noqa: S102
            outs = ns["outs"]
            if len(outs) > 1 and case.cls in ("mixed", "opt", "ops"):
                from rulegrad.runtime.tensor import Tensor
                Tensor.realize(*outs)
            ns["got"] = [np.asarray(o.numpy()) for o in outs]
            return ns


def _bits_equal(g: np.ndarray, w: np.ndarray) -> np.ndarray:
    if g.dtype.kind == "f" and w.dtype.kind == "f":
        g, w = g.astype(np.float64), w.astype(np.float64)
        return (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
    return g == w


def _compare(case: Case, ns: dict[str, Any]) -> str | None:
    """None when the case's outputs are its oracle's, else what differs."""
    got, want = ns["got"], [np.asarray(w) for w in ns["want"]]
    if len(got) != len(want):
        return f"{len(got)} outputs, the oracle has {len(want)}"
    if case.cls == "sort" and "topk" in case.source:
        return _compare_topk(ns, got, want)
    for k, (g, w) in enumerate(zip(got, want)):
        ns["bad"] = k  # (read when this returns a failure: which output, so which kernels)
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape}, the oracle's {w.shape}"
        if g.dtype.kind == "f" and w.dtype.kind != "f":  # (a float for an index: argmax)
            return f"output {k}: dtype {g.dtype}, the oracle's {w.dtype}"
        if case.exact or g.dtype.kind != "f" or (ns.get("exact") or [False] * k + [0])[k]:
            ok = _bits_equal(g, w)
        else:
            ok = _within(g, w, ns, k)
        if not ok.all():
            i = int(np.flatnonzero(~ok.reshape(-1))[0])
            return (f"output {k}: {int((~ok).sum())} of {ok.size} values differ; at flat index "
                    f"{i}: {g.reshape(-1)[i]!r}, the oracle's {w.reshape(-1)[i]!r}")
    return None


def _within(g: np.ndarray, w: np.ndarray, ns: dict[str, Any], k: int) -> np.ndarray:
    low = (ns["lows"][k] if ns.get("lows") else ns.get("low")) or np.float32
    eps = float(np.finfo(low).eps)
    mag = ns.get("mag")
    scale = np.abs(w.astype(np.float64))
    if mag is not None and mag[k] is not None:
        scale = np.maximum(scale, np.abs(np.asarray(mag[k], np.float64)))
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    tol = SUM_EPS * eps * scale + np.finfo(low).tiny
    with np.errstate(invalid="ignore"):
        close = np.isfinite(g64) & np.isfinite(w64) & (np.abs(g64 - w64) <= tol)
    return close | _bits_equal(g64, w64)


def _compare_topk(ns: dict[str, Any], got: list, want: list) -> str | None:
    """topk: values and indices are the first k of torch's stable sort, bit for bit, and
    torch's own topk has the same values as numbers (it does not pin which of equal values,
    0.0 or -0.0, comes first)."""
    gv, tk = got[0], np.asarray(ns["tk"])
    for k, (g, w) in enumerate(zip(got, want)):
        ns["bad"] = k
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape}, torch's stable sort's {w.shape}"
        if not _bits_equal(g, w).all():
            return f"output {k}: {g.tolist()}, torch's stable sort's first k {w.tolist()}"
    same = (gv == tk) | (np.isnan(gv) & np.isnan(tk))
    if not same.all():
        return f"values {gv.tolist()}, torch's topk {tk.tolist()}"
    return None


@dataclass
class Outcome:
    """One program's result: `ok`, or `fail` (a wrong value, a crash or a refusal)."""

    cls: str
    seed: int
    status: str
    message: str = ""
    actions: frozenset[str] = frozenset()  # the optimizer rules that fired on its kernels
    blamed: frozenset[str] = frozenset()   # those of the kernels of a wrong output
    output: int | None = None  # the wrong output
    seconds: float = 0.0  # (printed with -v: which programs are slow)


def run_case(case: Case, backend: str = "c", scheduler: str = "rangeify",
             count_actions: bool = False) -> Outcome:
    """The case on `backend`, against its oracle; with `count_actions`, the optimizer rules
    that changed a kernel of its schedule (scheduled without running, before it runs)."""
    per_output: list[frozenset[str]] = []
    ns: dict[str, Any] = {}
    try:
        if count_actions:
            per_output = [frozenset(fired_actions(items))
                          for items in _schedule_outputs(case, scheduler)]
        ns = _execute(case, backend, scheduler)
        err = _compare(case, ns)
    except setup_errors():
        raise  # (a bad setting is no finding about the program: the run stops)
    except Exception as e:  # noqa: BLE001 - a crash or a refusal no doc promises: a failure
        err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    actions = frozenset().union(*per_output)
    # a wrong output blames the actions of its own kernels; a crash, every action
    # (an output written in place has no kernels of its own: its write's are listed last)
    writes = frozenset().union(*per_output[len(ns.get("outs", ())):])
    blamed = (per_output[ns["bad"]] or writes) if err and "bad" in ns and per_output \
        else actions
    return Outcome(case.cls, case.seed, "ok" if err is None else "fail", err or "", actions,
                   blamed if err else frozenset(), ns.get("bad") if err else None)


def _schedule_outputs(case: Case, scheduler: str) -> list[list[Any]]:
    """The schedule of each of the case's outputs on its own."""
    from rulegrad.runtime.kernelize import using
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.tensor import Tensor
    from rulegrad.runtime.uop import UOp

    ns: dict[str, Any] = {}
    with using(scheduler), np.errstate(all="ignore"):
        exec(compile(case.source, f"<{case.cls} seed {case.seed}>", "exec"), ns)  # noqa: S102
        # (an in-place write ran when the program did: its kernel, reading the buffer it
        # writes, is scheduled from the graphs the program listed)
        writes = [Tensor(UOp(Ops.ASSIGN, v.dtype, (t, v))) for t, v in ns.get("writes", ())]
        return [list(o.schedule()) for o in ns["outs"]] + [list(w.schedule()) for w in writes]


def opt_schedule(seed: int) -> list[Any]:
    """The schedule items of the optimizer fuzzer's program `seed` (class "opt")."""
    return [it for items in _schedule_outputs(_gen_opt(seed), "rangeify") for it in items]


def fired_actions(items: list[Any]) -> set[str]:
    """The names of the optimizer rules (rules/opt*.rules) that changed a kernel of `items`."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.runtime.rewrite import tracing

    names: set[str] = set()
    for it in items:
        with tracing() as t:
            optimize_kernel(lower_only(it.ast))
        names |= {f.rule.name for f in t.firings
                  if f.rule is not None and f.after is not f.before
                  and f.rule.location.startswith("rules/opt")}
    return names


def optimizer_rule_names() -> list[str]:
    """The optimizer's own rules, in file order."""
    from rulegrad.rules import matcher

    return [r.name for r in matcher("opt", "opt").rules if r.location.startswith("rules/opt")]


def _schedule_outcome(seed: int, backend: str, scheduler: str) -> Outcome:
    """A program of class "schedule" (the random programs above) against the oracle."""
    try:
        err = mismatch(generate(seed), "interp" if backend == "interp" else backend, scheduler)
    except setup_errors():
        raise  # (a bad setting is no finding about the program: the run stops)
    except Exception as e:  # noqa: BLE001
        err = f"{type(e).__name__}: {e}"
    return Outcome("schedule", seed, "ok" if err is None else "fail", err or "")


def run_classes(classes: Sequence[str], n: int, start: int = 0, backend: str = "c",
                scheduler: str = "rangeify", count_actions: bool = False,
                report: Callable[[Outcome, str], None] | None = None,
                verbose: bool = False,
                progress: Callable[[int, int, int], None] | None = None) -> list[Outcome]:
    """n programs of each class (seeds start..start+n-1), the classes taken in turn for each
    seed, so that a run stopped early (a 10,000-program run takes hours) has as many programs
    of every class; `report(outcome, reproducer)` is called on each failure (on every program
    with `verbose`), `progress(done, programs, failed)` after each program."""
    out: list[Outcome] = []
    for seed in range(start, start + n):
        for cls in classes:
            t0 = time.perf_counter()
            if cls == "schedule":
                res = _schedule_outcome(seed, backend, scheduler)
                repro = generate(seed).source()
            else:
                case = CLASS_GENERATORS[cls](seed)
                res = run_case(case, backend, scheduler, count_actions)
                repro = case.program(res.output)
            res.seconds = time.perf_counter() - t0
            out.append(res)
            if report is not None and (res.status != "ok" or verbose):
                report(res, repro)
            if progress is not None:
                progress(len(out), n * len(classes), sum(o.status != "ok" for o in out))
    return out


def class_table(outcomes: Sequence[Outcome]) -> str:
    """Per class: programs, passed, failed."""
    lines = [f"{'class':<10s} {'programs':>8s} {'passed':>7s} {'failed':>7s}"]
    for cls in dict.fromkeys(o.cls for o in outcomes):
        mine = [o for o in outcomes if o.cls == cls]
        ok = sum(o.status == "ok" for o in mine)
        lines.append(f"{cls:<10s} {len(mine):>8d} {ok:>7d} {len(mine) - ok:>7d}")
    return "\n".join(lines)


def action_table(outcomes: Sequence[Outcome], want: int) -> tuple[str, bool]:
    """Per optimizer rule: the programs it fired on, and of those how many had a wrong output
    computed by a kernel it changed (or crashed); and whether each fired on at least `want`
    programs."""
    lines = [f"{'action':<20s} {'programs':>8s} {'failed':>7s}"]
    enough = True
    for name in optimizer_rule_names():
        on = [o for o in outcomes if name in o.actions]
        bad = sum(o.status != "ok" and name in o.blamed for o in on)
        short = len(on) < want
        enough &= not short
        lines.append(f"{name:<20s} {len(on):>8d} {bad:>7d}" + (f"  (< {want})" if short else ""))
    return "\n".join(lines), enough


# ---------------------------------------------------------------------- the command
OPT_MIN_PROGRAMS = 200  # `--opt`: each optimizer action fires on at least this many programs


def main(argv: list[str] | None = None) -> int:
    """`rulegrad fuzz`; a bad setting (RULEGRAD_MAX_WORK=many) stops it at the first program
    that reads it, with the setting's own words and exit 1, before any program counts."""
    from rulegrad.runtime.limits import max_buffer_bytes, max_work

    try:
        # the limits first: a program reads them only past a size (most never do), and one
        # class passed every program under RULEGRAD_MAX_WORK=many while another failed on it
        max_work()
        max_buffer_bytes()
        return _main(argv)
    except setup_errors() as e:
        print(f"rulegrad fuzz: {e}", file=sys.stderr)
        return 1


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rulegrad fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=count, default=1000,
                   help="programs per class (default 1000)")
    p.add_argument("--seed", type=seed_number, default=0, help="first seed (default 0)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every program")
    p.add_argument("--backend", choices=("interp", "c"), default=None,
                   help="what runs the schedule: the kernel interpreter or C (the default for "
                        "every class but `schedule`, whose default is the interpreter)")
    p.add_argument("--scheduler", choices=SCHEDULERS, default="rangeify",
                   help="what makes the schedule: rangeify (default), kernelize, or both "
                        "(each against the oracle and against each other; class schedule)")
    p.add_argument("--class", dest="classes", action="append", choices=(*CLASSES, "all"),
                   help="a class of programs (repeatable; `all`: every class); default: "
                        "schedule, the random programs")
    p.add_argument("--opt", action="store_true",
                   help="the optimizer's programs (class mixed, on C): each optimizer action "
                        f"must fire on at least {OPT_MIN_PROGRAMS} programs (--n 300)")
    args = p.parse_args(argv)
    classes = list(args.classes or (["opt"] if args.opt else ["schedule"]))
    if "all" in classes:
        classes = [c for c in CLASSES if c != "opt"]
    if args.scheduler == "both" and classes != ["schedule"]:
        p.error("--scheduler both is for class schedule; run the others once per scheduler")
    t0 = time.perf_counter()
    if classes == ["schedule"] and not args.opt:
        return _main_schedule(args, t0)
    backend = args.backend or "c"

    def report(o: Outcome, repro: str) -> None:
        head = "FAIL" if o.status != "ok" else "ok"
        print(f"{head} {o.cls} seed {o.seed} ({o.seconds:.1f}s)"
              f"{': ' + o.message if o.message else ''}\n{repro}", flush=True)

    outcomes = run_classes(classes, args.n, args.seed, backend, args.scheduler,
                           count_actions=args.opt, report=report, verbose=args.verbose,
                           progress=progress_printer(t0, "failed"))
    print(class_table(outcomes))
    failed = sum(o.status != "ok" for o in outcomes)
    enough = True
    if args.opt:
        table, enough = action_table(outcomes, OPT_MIN_PROGRAMS)
        print(table)
        if not enough:
            print(f"some action fired on fewer than {OPT_MIN_PROGRAMS} programs")
    print(f"{len(outcomes)} programs, {failed} failed, {time.perf_counter() - t0:.1f}s")
    return 1 if failed or not enough else 0


PROGRESS_SECONDS = 30.0  # a progress line at least this often (a cold program can take a while)


def progress_printer(t0: float, failed: str) -> Callable[[int, int, int], None]:
    """A `progress(done, n, failures)` that prints `[done/n] failures <failed>, seconds` on
    stderr every tenth of the run, and when PROGRESS_SECONDS passed since its last line, so a
    long run is visibly alive."""
    last = [t0]

    def progress(done: int, n: int, failures: int) -> None:
        now = time.perf_counter()
        if done % max(1, n // 10) == 0 or now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            print(f"[{done}/{n}] {failures} {failed}, {now - t0:.0f}s", file=sys.stderr,
                  flush=True)

    return progress


def _main_schedule(args: argparse.Namespace, t0: float) -> int:
    """The random programs (class schedule), shrunk on failure, as before."""
    failures = fuzz(args.n, args.seed, args.verbose, args.backend or "interp",
                    progress_printer(t0, "mismatches"), args.scheduler)
    dt = time.perf_counter() - t0
    bad = {seed for seed, _, _ in failures}
    print(class_table([Outcome("schedule", s, "fail" if s in bad else "ok")
                       for s in range(args.seed, args.seed + args.n)]))
    print(f"{args.n} programs, {len(failures)} mismatches, {dt:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
