"""`rulegrad check`'s gradient method: each gradient rule against torch's autograd.

In: one rule of a rule set marked `# check: gradient` (rules/gradient.rules), run alone by the
interpreted matcher. Out: a verdict: `passed` on N drawn instances (naming, per op, the torch op
compared with), `refuted` with the instance where the rule and the reference disagree most, or
`unchecked` when an op the rule matches has no drawn instance here. A rule rooted on a node
without sources (CONST) is refused: autograd never runs it.

An instance is one op (the cases below) over leaves of drawn values and a drawn upstream
gradient `g`. The draws aim at the points where derivatives go wrong: ties of MAX and MIN and
of reduce max, zeros of prod, pow and division, kinks and integer points of TRUNC and MOD,
negative and zero bases and zero exponents of POW, NaN and overflow; every permutation of
3 and 4 axes, expands of every kind of broadcast axis; int and bool sources and results.
A source the rule writes as an op or a constant is built as one (`_source`): a bare
`c:CONST` (or a literal) is a CONST, which has shape (), so such a rule is drawn at shape ()
(one element of each draw, repeated), the constant's value at and beside the numbers the rule
is written with half the time, as the value checker draws constants. A constant source may
get no gradient (None); a gradient the rule does give it is compared with torch's.

The reference for a float op is torch's autograd of the torch op named by the case, in float64:
the case's forward value must equal ours (so the name is right), and the rule's gradient of
each source must equal torch's (rtol 1e-12: a constant rounded to float32, 8e-10 off, is
refuted), with the source's shape and dtype. Where torch gives no gradient (an int or bool
source or result, DETACH, ASSIGN) the rule must give None. Without torch (a test-only extra),
smooth draws are checked against central differences with a step chosen per point, and the
others are skipped, saying so in the verdict.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rulegrad.dsl import ast as A

MAX_EXAMPLES = 20  # instances per op (spread over its variants and draws)
RTOL_TORCH = 1e-12  # float64 against float64 autograd: only rounding differs (ulps of 2e-16)
RTOL_TORCH32 = 1e-6  # float32: a few roundings (the package's rules: 2.5e-7 of |want| + max |want|)
# float16 (drawn only for an op a rule matches in no wider float: its types admit only float16):
# the same eight eps as float32's 1e-6, of float16's eps (2^-10); each float16 op rounds once
# (runtime/semantics.py: computed through float32), so a rule's few ops stay well inside it,
# and a gradient off by 1% is refuted
RTOL_TORCH16 = 8 * float(np.finfo(np.float16).eps)
# a float32 gradient that sums the upstream one (EXPAND's sum_to, a running sum's reverse
# one) may differ from torch's by the order of each element's sum of k terms, up to
# 2·k·u·sum |terms| (`_sum_slack`); an elementwise op's sums nothing
SUM_SLACK32 = 2 * float(np.finfo(np.float32).eps)
RTOL_FD = 1e-6  # central differences at a step of eps^(1/3): error near 1e-10 relative
FD_STEP = float(np.finfo(np.float64).eps) ** (1 / 3)
# the ops of nodes that have no sources in a tensor graph: no gradient rule of theirs runs
SOURCELESS = frozenset({"CONST", "BUFFER", "DEFINE_VAR", "DEVICE", "UNIQUE"})
CONST_TRIES = 8  # draws per instance for a rule guarded on a constant's value
# instances per slot at shape () (a bare CONST source): one element of a draw, not 12, so as
# many as make the delicate points (a zero base with a zero exponent) as likely as at (3, 4)
SCALAR_REPEATS = 8


@dataclass
class GradResult:
    verdict: str  # passed | refuted | unchecked
    examples: int = 0
    detail: str = ""
    counterexample: str | None = None


# ---------------------------------------------------------------------- drawing values
Gen = np.random.Generator
SHAPE = (3, 4)


def _free(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return rng.uniform(-2, 2, shape)


def _away(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Away from zero, either sign."""
    return rng.uniform(0.5, 2, shape) * rng.choice([-1.0, 1.0], shape)


def _positive(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return rng.uniform(0.5, 2, shape)


def _with_zeros(rng: Gen, x: np.ndarray) -> np.ndarray:
    """About a third of the entries +0.0 or -0.0."""
    return np.where(rng.random(x.shape) < 0.35, rng.choice([0.0, -0.0], x.shape), x)


def _with_nan(rng: Gen, x: np.ndarray) -> np.ndarray:
    return np.where(rng.random(x.shape) < 0.25, np.nan, x)


def _few(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Values from a small set (-0.0 and +0.0 among them): ties everywhere."""
    return rng.choice([-1.0, -0.0, 0.0, 0.5, 1.0], shape)


def _distinct(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Values at least 0.1 apart: no ties within a finite difference's step."""
    n = int(np.prod(shape))
    return rng.permutation(np.arange(n) * 0.1 - n * 0.05 + rng.uniform(0, 0.01)).reshape(shape)


def _away_or_zero(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return _with_zeros(rng, _away(rng, shape))


def _ints(rng: Gen, shape: tuple[int, ...] = SHAPE, lo: int = -5, hi: int = 6) -> np.ndarray:
    return rng.integers(lo, hi, shape).astype(np.int32)


def _bools(rng: Gen, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return rng.random(shape) < 0.5


_KIND_NAMES = {_free: "free", _distinct: "distinct", _few: "ties", _away: "away",
               _away_or_zero: "zeros"}


@dataclass(frozen=True)
class Draw:
    """One kind of input of a case: its name (shown in a counterexample) and its values."""

    name: str
    fn: Callable[[Gen], list[np.ndarray]]
    smooth: bool = True  # no tie, kink, pole, NaN or overflow: finite differences hold


def _pow_zero_base(rng: Gen) -> list[np.ndarray]:
    return [rng.choice([0.0, -0.0, 0.0, 1.5], SHAPE),
            rng.choice([-2.0, -1.5, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0], SHAPE)]


def _mod_multiples(rng: Gen) -> list[np.ndarray]:
    y = rng.choice([0.25, 0.5, 1.0, -1.5, 2.0, -1.0], SHAPE)  # exact binary: k * y is exact
    return [y * rng.integers(-4, 5, SHAPE), y]


def _ties(rng: Gen) -> list[np.ndarray]:
    x = _few(rng)
    return [x, np.where(rng.random(SHAPE) < 0.5, x, _few(rng))]


def _apart(rng: Gen) -> list[np.ndarray]:
    x = _free(rng)
    return [x, x + rng.uniform(0.1, 1, SHAPE) * rng.choice([-1.0, 1.0], SHAPE)]


def _one(f: Callable[[Gen], np.ndarray]) -> Callable[[Gen], list[np.ndarray]]:
    return lambda rng: [f(rng)]


def _shaped(f: Callable[..., np.ndarray], shape: tuple[int, ...]) -> Callable[[Gen], list]:
    return lambda rng: [f(rng, shape)]


FREE = Draw("free", _one(_free))
FREE2 = Draw("free", lambda r: [_free(r), _free(r)])


# ---------------------------------------------------------------------- the cases
INT_RESULT, BOOL_RESULT = "(an int result: none flows)", "(a bool result: none flows)"
NONE_FLOWS = {INT_RESULT, BOOL_RESULT}


@dataclass(frozen=True)
class Case:
    """One op (a variant: an axis, a permutation, a dtype) over leaves, its draws, and its
    reference: the torch op whose autograd it is compared with, or `torch_fn=None` where no
    gradient flows at all (an int or bool result, ASSIGN)."""

    op: str
    label: str
    build: Callable[[list[Any]], Any]  # leaves (UOps) -> the node
    torch_op: str
    torch_fn: Callable[[Any, list[Any]], Any] | None
    draws: tuple[Draw, ...]
    stops: bool = False  # the value passes, its gradient does not (DETACH): no central difference
    # the node's source is views of marked leaves (a running sum's windows): only a rule's
    # {leaf's marker: gradient} is compared, a gradient of the views has no torch reference
    below: bool = False


def _cases() -> list[Case]:
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    def alu(op: Ops) -> Callable[[list[Any]], Any]:
        return lambda xs: xs[0].alu(op, *xs[1:])

    def mop(op: Ops, arg: Any, dtype: Any = None) -> Callable[[list[Any]], Any]:
        return lambda xs: UOp(op, dtype or xs[0].dtype, (xs[0],), arg)

    def unary(op: Ops, torch_op: str, *draws: Draw) -> Case:
        fn = lambda t, xs: getattr(t, torch_op.split(".")[1])(xs[0])  # noqa: E731
        return Case(op.name, op.name, alu(op), torch_op, fn, draws)

    def binary(op: Ops, torch_op: str, fn: Callable, *draws: Draw) -> Case:
        return Case(op.name, op.name, alu(op), torch_op, fn, draws)

    zeros = Draw("zeros", _one(lambda r: _with_zeros(r, _positive(r))), smooth=False)
    negative = Draw("negative", _one(lambda r: -_positive(r)), smooth=False)
    positive = Draw("positive", _one(_positive))
    cases = [
        unary(Ops.NEG, "torch.neg", FREE, Draw("zeros", _one(lambda r: _with_zeros(r, _free(r))))),
        unary(Ops.EXP, "torch.exp", FREE,
              Draw("overflow", _one(lambda r: _away(r) * 400), smooth=False)),
        unary(Ops.EXP2, "torch.exp2", FREE),
        unary(Ops.LOG, "torch.log", positive, zeros, negative),
        unary(Ops.LOG2, "torch.log2", positive, zeros, negative),
        unary(Ops.SQRT, "torch.sqrt", positive, zeros),
        unary(Ops.SIN, "torch.sin", FREE, Draw("large", _one(lambda r: _away(r) * 1000))),
        unary(Ops.COS, "torch.cos", FREE, Draw("large", _one(lambda r: _away(r) * 1000))),
        unary(Ops.RECIPROCAL, "torch.reciprocal", Draw("away", _one(_away)),
              Draw("zeros", _one(lambda r: _with_zeros(r, _away(r))), smooth=False)),
        unary(Ops.TRUNC, "torch.trunc",
              Draw("off integers", _one(lambda r: _ints(r) + r.uniform(0.2, 0.8, SHAPE))),
              Draw("integers", _one(lambda r: _ints(r).astype(np.float64)), smooth=False)),
        binary(Ops.ADD, "torch.add", lambda t, xs: xs[0] + xs[1], FREE2),
        binary(Ops.SUB, "torch.sub", lambda t, xs: xs[0] - xs[1], FREE2),
        binary(Ops.MUL, "torch.mul", lambda t, xs: xs[0] * xs[1], FREE2,
               Draw("zeros", lambda r: [_with_zeros(r, _free(r)), _with_zeros(r, _free(r))])),
        binary(Ops.FDIV, "torch.div", lambda t, xs: xs[0] / xs[1],
               Draw("away", lambda r: [_free(r), _away(r)]),
               Draw("zero divisors", lambda r: [_free(r), _with_zeros(r, _away(r))],
                    smooth=False)),
        binary(Ops.MOD, "torch.fmod", lambda t, xs: t.fmod(xs[0], xs[1]),
               Draw("free", lambda r: [_free(r) * 3, _away(r)]),
               Draw("multiples", _mod_multiples, smooth=False)),
        binary(Ops.IDIV, "torch.div(rounding_mode='trunc')",
               lambda t, xs: t.div(xs[0], xs[1], rounding_mode="trunc"),
               Draw("free", lambda r: [_free(r) * 3, _away(r)])),
        binary(Ops.POW, "torch.pow", lambda t, xs: t.pow(xs[0], xs[1]),
               Draw("positive base", lambda r: [_positive(r), _free(r)]),
               Draw("zero base", _pow_zero_base, smooth=False),
               Draw("zero exponent", lambda r: [_with_zeros(r, _free(r)),
                                                r.choice([0.0, -0.0], SHAPE)], smooth=False),
               Draw("negative base", lambda r: [-_positive(r), r.uniform(-2, 3, SHAPE)
                                                * (r.random(SHAPE) < 0.5).round()
                                                + r.integers(-2, 3, SHAPE)], smooth=False)),
        binary(Ops.MAX, "torch.maximum", lambda t, xs: t.maximum(xs[0], xs[1]),
               Draw("apart", _apart), Draw("ties", _ties, smooth=False),
               Draw("nan", lambda r: [_with_nan(r, _free(r)), _free(r)], smooth=False)),
        binary(Ops.MIN, "torch.minimum", lambda t, xs: t.minimum(xs[0], xs[1]),
               Draw("apart", _apart), Draw("ties", _ties, smooth=False),
               Draw("nan", lambda r: [_free(r), _with_nan(r, _free(r))], smooth=False)),
        Case("MULACC", "MULACC", alu(Ops.MULACC), "torch.addcmul(c, a, b)",
             lambda t, xs: t.addcmul(xs[2], xs[0], xs[1]),
             (Draw("free", lambda r: [_free(r), _with_zeros(r, _free(r)), _free(r)]),)),
        Case("WHERE", "WHERE", alu(Ops.WHERE), "torch.where", lambda t, xs: t.where(*xs),
             (Draw("free", lambda r: [_bools(r), _free(r), _free(r)]),)),
    ]
    # casts: a float source gets the gradient back in its own dtype; an int or bool one none
    to_torch = {dtypes.float64: "float64", dtypes.float32: "float32", dtypes.float16: "float16"}
    for src, dst in ((np.float64, dtypes.float32), (np.float64, dtypes.float16),
                     (np.float32, dtypes.float64), (np.int32, dtypes.float64),
                     (np.bool_, dtypes.float32)):
        draw = {np.int32: _ints, np.bool_: _bools}.get(
            src, lambda r, src=src: _free(r).astype(src))
        name = to_torch[dst]
        cases.append(Case("CAST", f"CAST({np.dtype(src).name} -> {dst.name})",
                          mop(Ops.CAST, None, dst), f"Tensor.to({name})",
                          lambda t, xs, name=name: xs[0].to(getattr(t, name)),
                          (Draw("free", _one(draw)),)))
    cases.append(Case("BITCAST", "BITCAST(int64 -> float64)", mop(Ops.BITCAST, None,
                      dtypes.float64), "Tensor.view(float64)", None,
                      (Draw("ints", _one(lambda r: _ints(r).astype(np.int64))),)))
    cases += _reduce_cases(Ops, UOp)
    cases += _movement_cases(Ops, UOp)
    cases += [Case(op.name, op.name, mop(op, None), "Tensor.contiguous",
                   lambda t, xs: xs[0].contiguous(), (FREE,))
              for op in (Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE)]
    cases += [
        # to another device and back: the value, and the gradient, are the same numbers
        Case("COPY", "COPY(to CPU:1)",
             lambda xs: UOp(Ops.COPY, xs[0].dtype, (xs[0], UOp(Ops.DEVICE, arg="CPU:1"))),
             "Tensor.to(device)", lambda t, xs: xs[0].clone(), (FREE,)),
        *_multi_cases(Ops, UOp),
        Case("DETACH", "DETACH", mop(Ops.DETACH, None), "Tensor.detach",
             lambda t, xs: xs[0].detach(), (FREE,), stops=True),
        Case("ASSIGN", "ASSIGN", lambda xs: UOp(Ops.ASSIGN, xs[0].dtype, tuple(xs)),
             "(none: an assign is a side effect)", None, (FREE2,)),
    ]
    # the float ops once more in float32: a rule right in float64 only is wrong
    cases += [_in_float32(c) for c in cases if c.op not in ("CAST", "BITCAST")]
    return cases + _flat_cases(Ops, UOp, dtypes)


def _half_cases() -> list[Case]:
    """The float ops in float16, drawn only for an op that a rule matches in no wider float
    (`EXP(x):float16`): else such a rule was `unchecked`. Their reference is torch's autograd
    in float64 at the float16 inputs' values. Not the draw made to overflow (EXP's): there
    float16's value is inf where float64's is finite, and `0 * inf` is NaN in the rule only."""
    out = []
    for c in _cases():
        if c.torch_fn is not None and c.op not in ("CAST", "BITCAST") and \
                "in float32" not in c.label:
            draws = tuple(d for d in c.draws if d.name != "overflow")
            out.append(_in_float32(Case(c.op, c.label, c.build, c.torch_op, c.torch_fn, draws,
                                        c.stops, c.below), np.float16))
    return out


def _multi_cases(Ops: Any, UOp: Any) -> list[Case]:
    """A sharded value, MULTI(MSTACK(part on each device)), over leaves that are its parts: its
    torch op joins them (torch.cat), or for replicas (axis None, equal parts) is the first. The
    rule's gradient of the MSTACK is a stack of the parts' (`_parts_of`)."""
    devs = ("CPU", "CPU:1")

    def build(axis: int | None) -> Callable[[list[Any]], Any]:
        def multi(xs: list[Any]) -> Any:
            parts = (xs[0], UOp(Ops.COPY, xs[1].dtype, (xs[1], UOp(Ops.DEVICE, arg=devs[1]))))
            stack = UOp(Ops.MSTACK, xs[0].dtype, parts, devs)
            return UOp(Ops.MULTI, xs[0].dtype, (stack,), (axis, devs))
        return multi

    replicas = Draw("replicas", lambda r: [x := _free(r), x.copy()])
    return [Case("MULTI", "MULTI(axis None)", build(None), "torch.clone(first replica)",
                 lambda t, xs: xs[0].clone(), (replicas,))] + \
        [Case("MULTI", f"MULTI(axis {a})", build(a), f"torch.cat(dim={a})",
              lambda t, xs, a=a: t.cat(xs, dim=a), (FREE2,)) for a in (0, 1)]


def _parts_of(node: Any, out: tuple) -> tuple[list[Any], list[Any]]:
    """A MULTI's sources and gradients as its parts' (the MSTACK is a tuple of parts, and
    runtime/autograd.py hands part i its gradient): a part given zeros, a replica after the
    first, is one no gradient flows into (torch: unused)."""
    from rulegrad.runtime.ops import Ops

    parts = list(node.src[0].src)
    grads = list(out[0].src) if out[0] is not None and out[0].op is Ops.MSTACK else [out[0]]
    base = [g.base if g is not None else None for g in grads]
    return parts, [None if b is not None and b.op is Ops.CONST and b.arg == 0 else g
                   for g, b in zip(grads, base)]


def _in_float32(case: Case, to: Any = np.float32) -> Case:
    """The case with its float64 draws rounded to `to` (float32, or float16)."""
    def draw(d: Draw) -> Draw:
        fn = lambda r: [a.astype(to) if a.dtype == np.float64 else a  # noqa: E731
                        for a in d.fn(r)]
        return Draw(d.name, fn, d.smooth)

    return Case(case.op, f"{case.label} in {np.dtype(to).name}", case.build, case.torch_op,
                case.torch_fn, tuple(draw(d) for d in case.draws), case.stops, case.below)


def _reduce_cases(Ops: Any, UOp: Any) -> list[Case]:
    def torch_reduce(t: Any, x: Any, name: str, axes: tuple[int, ...]) -> Any:
        if name != "prod":
            return getattr(t, name)(x, dim=axes, keepdim=True)
        for a in axes:  # torch.prod takes one dim at a time
            x = t.prod(x, dim=a, keepdim=True)
        return x

    out = []
    for rop, name, kinds in ((Ops.ADD, "sum", ((_free, True),)),
                             (Ops.MAX, "amax", ((_distinct, True), (_few, False))),
                             (Ops.MIN, "amin", ((_distinct, True), (_few, False))),
                             (Ops.MUL, "prod", ((_away, True), (_away_or_zero, True)))):
        for shape, axes in (((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)),
                            ((2, 3, 4), (2,)), ((2, 3, 4), (0, 2))):
            # prod is multilinear, so central differences hold at its zeros too
            draws = tuple(Draw(_KIND_NAMES[f], _shaped(f, shape), smooth) for f, smooth in kinds)
            arg = (rop, axes)
            out.append(Case("REDUCE_AXIS", f"REDUCE_AXIS({rop.name}, {axes}) of {shape}",
                            lambda xs, arg=arg: UOp(Ops.REDUCE_AXIS, xs[0].dtype, (xs[0],), arg),
                            f"torch.{name}(dim={axes}, keepdim=True)",
                            lambda t, xs, name=name, axes=axes: torch_reduce(t, xs[0], name, axes),
                            draws))
    # a max over windows marked CONTIGUOUS_BACKWARD (max_pool2d without indices): one window
    # per (batch, channel), so torch's max_pool2d over the whole window is the reference (the
    # first maximum gets it all, the last NaN in a window holding one)
    for shape in ((1, 1, 2, 2), (1, 1, 3, 2), (2, 1, 3, 3)):
        draws = (Draw("distinct", _shaped(_distinct, shape), True),
                 Draw("ties", _shaped(_few, shape), False),
                 Draw("ties and NaN", lambda rng, shape=shape: [_with_nan(rng, _few(rng, shape))],
                      False))
        out.append(Case("REDUCE_AXIS", f"REDUCE_AXIS(MAX, (2, 3)) of CONTIGUOUS_BACKWARD {shape}",
                        lambda xs: UOp(Ops.REDUCE_AXIS, xs[0].dtype,
                                       (xs[0].f(Ops.CONTIGUOUS_BACKWARD),), (Ops.MAX, (2, 3))),
                        "F.max_pool2d(kernel_size=the window)",
                        lambda t, xs: t.nn.functional.max_pool2d(xs[0], tuple(xs[0].shape[2:])),
                        draws))
    # the same over one axis of windows whose offsets are stacked (Tensor._window_max): the
    # leaf's last axis cut into its elements and stacked again (the same values), so torch's
    # max_pool2d over a window of the last axis alone is the reference
    from rulegrad.runtime.window_stack import window_stack

    def stacked(x: Any) -> Any:
        *outer, k = x.shape
        whole = tuple((0, n) for n in outer)
        parts = [x.shrink(whole + ((j, j + 1),)).reshape(tuple(outer)) for j in range(k)]
        return UOp(Ops.REDUCE_AXIS, x.dtype, (window_stack(parts).f(Ops.CONTIGUOUS_BACKWARD),),
                   (Ops.MAX, (len(outer),)))

    for shape in ((1, 1, 2, 2), (1, 2, 3, 3), (2, 1, 4, 5)):
        draws = (Draw("distinct", _shaped(_distinct, shape), True),
                 Draw("ties", _shaped(_few, shape), False),
                 Draw("ties and NaN", lambda rng, shape=shape: [_with_nan(rng, _few(rng, shape))],
                      False))
        out.append(Case("REDUCE_AXIS", f"REDUCE_AXIS(MAX, (3,)) of CONTIGUOUS_BACKWARD of a "
                        f"window stack {shape}", lambda xs: stacked(xs[0]),
                        "F.max_pool2d(kernel_size=(1, the last axis))",
                        lambda t, xs: t.nn.functional.max_pool2d(xs[0], (1, xs[0].shape[3])),
                        draws))
    # a running sum's marked windows (runtime/running_sum.py): torch's cumsum is the reference,
    # and the rule's gradient is its marked leaf's ({node below: gradient})
    from rulegrad.runtime.running_sum import running_product, running_sum

    for shape in ((2,), (3, 5), (2, 3, 7)):
        draws = (Draw("free", _shaped(_free, shape), True),
                 Draw("with zeros", lambda rng, shape=shape: [_with_zeros(rng, _free(rng, shape))],
                      True))
        out.append(Case("REDUCE_AXIS", f"REDUCE_AXIS(ADD) of a running sum's windows {shape}",
                        lambda xs: running_sum(xs[0]).src[0], "torch.cumsum(dim=-1)",
                        lambda t, xs: t.cumsum(xs[0], -1).unsqueeze(-1), draws, below=True))
        out.append(Case("REDUCE_AXIS", f"REDUCE_AXIS(MUL) of a running product's windows "
                        f"{shape}", lambda xs: running_product(xs[0]).src[0],
                        "torch.cumprod(dim=-1)",
                        lambda t, xs: t.cumprod(xs[0], -1).unsqueeze(-1), draws, below=True))
    # a float32 running max read from its key's bits (runtime/running_max.py): the marked
    # values, whose rule gives the marked leaf torch's scatter to the index (ties: the last
    # maximum; NaN: the last NaN so far); a float16 one of float16 leaves (`_half_cases`)
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.tensor import Tensor

    for shape in ((2,), (3, 5), (2, 3, 7)):
        draws = (Draw("distinct", _shaped(_distinct, shape), True),
                 Draw("ties", _shaped(_few, shape), False),
                 Draw("ties and NaN", lambda rng, shape=shape: [_with_nan(rng, _few(rng, shape))],
                      False))
        out.append(Case("CONTIGUOUS_BACKWARD", f"a float32 running max's marked values {shape}",
                        lambda xs: Tensor(xs[0].cast(dtypes.float16 if xs[0].dtype is
                                                     dtypes.float16 else dtypes.float32)
                                          ).cummax(-1)[0].uop,
                        "torch.cummax(dim=-1)", lambda t, xs: t.cummax(xs[0], -1)[0], draws,
                        below=True))
    return out


def _movement_cases(Ops: Any, UOp: Any) -> list[Case]:
    def mop(op: Any, arg: Any) -> Callable[[list[Any]], Any]:
        return lambda xs: UOp(op, xs[0].dtype, (xs[0],), arg)

    out = []
    for shape, new in (((3, 4), (2, 6)), ((3, 4), (12,)), ((3, 4), (2, 2, 3)),
                       ((2, 3, 4), (4, 6))):
        out.append(Case("RESHAPE", f"RESHAPE({shape} -> {new})", mop(Ops.RESHAPE, new),
                        "torch.reshape", lambda t, xs, new=new: xs[0].reshape(new),
                        (Draw("free", _shaped(_free, shape)),)))
    # every permutation of 2, 3 and 4 axes, not only the self-inverse ones
    for shape in ((3, 4), (2, 3, 4), (2, 3, 4, 5)):
        for p in itertools.permutations(range(len(shape))):
            out.append(Case("PERMUTE", f"PERMUTE{p}", mop(Ops.PERMUTE, p), "torch.permute",
                            lambda t, xs, p=p: xs[0].permute(p),
                            (Draw("free", _shaped(_free, shape)),)))
    for shape, new in (((3, 1), (3, 4)), ((1, 4), (3, 4)), ((1, 1), (3, 4)),
                       ((2, 1, 3), (2, 5, 3)), ((1, 3, 1), (4, 3, 2)), ((1, 1, 1), (2, 3, 4)),
                       ((1,), (6,)), ((2, 3), (2, 3))):
        out.append(Case("EXPAND", f"EXPAND({shape} -> {new})", mop(Ops.EXPAND, new),
                        "torch.expand", lambda t, xs, new=new: xs[0].expand(new),
                        (Draw("free", _shaped(_free, shape)),)))
    for shape, pad in (((3, 4), ((1, 0), (2, 1))), ((3, 4), ((0, 0), (0, 3))),
                       ((2, 3, 4), ((2, 2), (0, 0), (1, 3)))):
        flat = [v for before, after in reversed(pad) for v in (before, after)]
        out.append(Case("PAD", f"PAD{pad}", mop(Ops.PAD, pad), "torch.nn.functional.pad",
                        lambda t, xs, flat=flat: t.nn.functional.pad(xs[0], flat),
                        (Draw("free", _shaped(_free, shape)),)))
    for shape, win in (((3, 4), ((1, 3), (0, 2))), ((3, 4), ((0, 3), (2, 4))),
                       ((2, 3, 4), ((1, 2), (0, 3), (1, 3)))):
        out.append(Case("SHRINK", f"SHRINK{win}", mop(Ops.SHRINK, win), "slicing",
                        lambda t, xs, win=win: xs[0][tuple(slice(b, e) for b, e in win)],
                        (Draw("free", _shaped(_free, shape)),)))
    for shape in ((3, 4), (2, 3, 4)):
        for flags in itertools.product((False, True), repeat=len(shape)):
            dims = [i for i, f in enumerate(flags) if f]
            out.append(Case("FLIP", f"FLIP{flags}", mop(Ops.FLIP, flags), "torch.flip",
                            lambda t, xs, dims=dims: t.flip(xs[0], dims),
                            (Draw("free", _shaped(_free, shape)),)))
    return out


def _flat_cases(Ops: Any, UOp: Any, dtypes: Any) -> list[Case]:
    """Ops whose result is an int or a bool: no gradient flows into any source."""
    def alu(op: Any) -> Callable[[list[Any]], Any]:
        return lambda xs: xs[0].alu(op, *xs[1:])

    def mop(op: Any, arg: Any, dtype: Any = None) -> Callable[[list[Any]], Any]:
        return lambda xs: UOp(op, dtype or xs[0].dtype, (xs[0],), arg)

    ints2 = Draw("ints", lambda r: [_ints(r), _ints(r, lo=1, hi=4)])
    bools2 = Draw("bools", lambda r: [_bools(r), _bools(r)])
    out = [Case(op.name, f"{op.name}(int32)", alu(op), INT_RESULT, None, (ints2,))
           for op in (Ops.ADD, Ops.SUB, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW,
                      Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL,
                      Ops.SHR)]
    out += [Case(op.name, f"{op.name}(bool)", alu(op), BOOL_RESULT, None, (bools2,))
            for op in (Ops.AND, Ops.OR, Ops.XOR, Ops.CMPNE, Ops.CMPEQ, Ops.MAX, Ops.MIN)]
    out += [Case(op.name, f"{op.name}(float64) -> bool", alu(op), BOOL_RESULT, None,
                 (FREE2,)) for op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ)]
    out += [Case(op.name, f"{op.name}(int32)", alu(op), INT_RESULT, None,
                 (Draw("ints", _one(_ints)),)) for op in (Ops.NEG, Ops.TRUNC)]
    out += [
        Case("MULACC", "MULACC(int32)", alu(Ops.MULACC), INT_RESULT, None,
             (Draw("ints", lambda r: [_ints(r), _ints(r), _ints(r)]),)),
        Case("WHERE", "WHERE(int32)", alu(Ops.WHERE), INT_RESULT, None,
             (Draw("ints", lambda r: [_bools(r), _ints(r), _ints(r)]),)),
        Case("CAST", "CAST(float64 -> int32)", mop(Ops.CAST, None, dtypes.int32),
             INT_RESULT, None, (FREE,)),
        Case("CAST", "CAST(float64 -> bool)", mop(Ops.CAST, None, dtypes.bool),
             BOOL_RESULT, None, (FREE,)),
        Case("BITCAST", "BITCAST(float64 -> int64)", mop(Ops.BITCAST, None, dtypes.int64),
             INT_RESULT, None, (FREE,)),
        Case("REDUCE_AXIS", "REDUCE_AXIS(ADD, (1,)) of int32",
             mop(Ops.REDUCE_AXIS, (Ops.ADD, (1,))), INT_RESULT, None,
             (Draw("ints", _one(_ints)),)),
        Case("REDUCE_AXIS", "REDUCE_AXIS(MAX, (0,)) of bool",
             mop(Ops.REDUCE_AXIS, (Ops.MAX, (0,))), BOOL_RESULT, None,
             (Draw("bools", _one(_bools)),)),
    ]
    for op, arg in ((Ops.RESHAPE, (2, 6)), (Ops.PERMUTE, (1, 0)), (Ops.EXPAND, (3, 4)),
                    (Ops.PAD, ((1, 0), (0, 2))), (Ops.SHRINK, ((0, 2), (1, 3))),
                    (Ops.FLIP, (True, False))):
        shape = (3, 1) if op is Ops.EXPAND else SHAPE
        out.append(Case(op.name, f"{op.name}(int32)", mop(op, arg), INT_RESULT, None,
                        (Draw("ints", _shaped(_ints, shape)),)))
    return out


# ---------------------------------------------------------------------- references
def _leaf(arr: np.ndarray, device: Any = "CPU") -> Any:
    from rulegrad.runtime.buffer import Buffer
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    dt = dtypes.from_np(arr.dtype)
    buf = Buffer(arr.size, dt, np.ascontiguousarray(arr).reshape(-1), device=device or "CPU")
    return UOp(Ops.BUFFER, dt, (), buf).reshape(arr.shape)


def _value(node: Any) -> np.ndarray:
    from rulegrad.backends.oracle import evaluate

    return np.asarray(evaluate([node])[0])


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def _torch_reference(torch: Any, case: Case, xs: list[np.ndarray], ours: np.ndarray,
                     g: np.ndarray) -> list[np.ndarray | None]:
    """torch's gradient of each source (None: none flows), after checking that the torch op
    computes our op's value (else the case names the wrong op: the checker's own error)."""
    # (float16: torch's autograd in float64, at the float16 values; its value rounded to
    # float16, so that one past float16's range is inf, as ours is)
    ts = [torch.tensor(x.astype(np.float64) if x.dtype == np.float16 else x,
                       requires_grad=x.dtype.kind == "f") for x in xs]
    assert case.torch_fn is not None
    out = case.torch_fn(torch, ts)
    theirs = out.detach().numpy().astype(ours.dtype)
    same = {8: 1e-12, 4: 1e-5}.get(ours.dtype.itemsize, RTOL_TORCH16)
    if theirs.shape != ours.shape or not np.allclose(theirs, ours, rtol=same, atol=same,
                                                      equal_nan=True):
        raise AssertionError(f"gradient check: {case.torch_op} does not compute {case.label} "
                             f"(ours {ours!r}, torch's {theirs!r})")
    wanted = [t for t in ts if t.requires_grad]
    grads: list[Any] = [None] * len(wanted)
    if out.requires_grad and wanted:
        upstream = torch.tensor(g).to(out.dtype)
        grads = list(torch.autograd.grad(out, wanted, upstream, allow_unused=True))
    it = iter(grads)
    return [None if not t.requires_grad else
            (None if (v := next(it)) is None else v.to(torch.float64).numpy()) for t in ts]


def _fd_reference(case: Case, xs: list[np.ndarray], g: np.ndarray
                  ) -> list[np.ndarray | None]:
    """Central differences of sum(g * op(inputs)) in each float input element, with a step
    chosen per element, the differences taken elementwise before the sum (no cancellation
    against the whole sum)."""
    leaves = [_leaf(x) for x in xs]
    out: list[np.ndarray | None] = []
    for i, x in enumerate(xs):
        if x.dtype.kind != "f":
            out.append(None)
            continue
        d = np.zeros(x.shape)
        for j in np.ndindex(x.shape):
            # eps^(1/3) balances truncation (h^2) against rounding (eps / h); far from 0 a
            # few ulps of x at least, so that x + h and x - h differ from x
            h = max(FD_STEP, 64 * float(np.spacing(np.abs(x[j]))))
            sides = []
            for step in (h, -h):
                moved = x.copy()
                moved[j] += step
                sides.append((moved[j], _value(case.build(
                    [_leaf(moved) if k == i else leaves[k] for k in range(len(xs))]))))
            d[j] = np.sum(g * (sides[0][1].astype(np.float64) - sides[1][1])) / float(
                sides[0][0] - sides[1][0])
        out.append(d)
    return out


# ---------------------------------------------------------------------- checking
def _instance_text(node: Any, draw: Draw, xs: list[np.ndarray], g: np.ndarray, i: int,
                   got: np.ndarray, want: np.ndarray, against: str) -> str:
    # the worst element: the largest difference, a NaN or inf on one side only counting most
    with np.errstate(invalid="ignore"):
        err = np.where(np.isnan(got) & np.isnan(want), 0.0, np.abs(got - want))
    err = np.where(got == want, 0.0, np.nan_to_num(err, nan=np.inf))
    k = np.unravel_index(int(np.argmax(err)), got.shape)
    lines = [f"op: {node!r}", f"draw: {draw.name}"]
    lines += [f"source {n}: {np.array2string(x, precision=4)}" for n, x in enumerate(xs)]
    lines.append(f"upstream gradient: {np.array2string(g, precision=4)}")
    lines.append(f"gradient of source {i} by the rule: {np.array2string(got, precision=6)}")
    lines.append(f"by {against}: {np.array2string(want, precision=6)}")
    lines.append(f"worst at {tuple(int(v) for v in k)}: rule {got[k]!r}, {against} {want[k]!r}")
    return "\n".join(lines)


def _sum_slack(g: np.ndarray, shape: tuple[int, ...], below: bool) -> float:
    """How far two float32 orders of one gradient element's sum may differ: 2·k·u·sum |terms|,
    k the terms summed into one element (the upstream elements per source element: EXPAND's
    sum_to; a running sum's or max's last axis, summed in reverse), the terms' sum at most
    k·max |g| and at most sum |g|. Per element, not 2·n·u·sum |g| over the whole upstream
    gradient: that let a PERMUTE of 120 elements off by 5e-4 pass (k is 1: it sums nothing)."""
    k = max(1, g.size // max(int(np.prod(shape)), 1), shape[-1] if below and shape else 1)
    g = np.abs(g[np.isfinite(g)])
    if g.size == 0:
        return 0.0
    return SUM_SLACK32 * k * min(float(g.sum()), k * float(g.max()))


def _agrees(got: np.ndarray, want: np.ndarray, rtol: float, slack: float = 0.0) -> bool:
    finite = np.isfinite(want)
    scale = float(np.abs(want[finite]).max()) if finite.any() else 0.0
    return bool(np.all(np.isclose(got, want, rtol=rtol, atol=rtol * max(scale, 1e-3) + slack,
                                  equal_nan=True)))


def _broadcast_const(p: Any, ops: set[Any]) -> bool:
    """Whether the source pattern is a constant broadcast: EXPAND of RESHAPE of CONST."""
    names = {op.name for op in ops}
    if names != {"EXPAND"} or not p.srcs:
        return False
    q = p.srcs[0]
    while isinstance(q, A.PBind):
        q = q.pattern
    if not isinstance(q, A.PNode) or {r.name for r in q.ops} != {"RESHAPE"} or not q.srcs:
        return False
    c = q.srcs[0]
    while isinstance(c, A.PBind):
        c = c.pattern
    return isinstance(c, A.PConst) or (isinstance(c, A.PNode)
                                       and {r.name for r in c.ops} == {"CONST"})


def _unbound(p: Any) -> tuple[Any, str | None]:
    """The pattern under its `name:` bindings, and the name (the outermost)."""
    name = None
    while isinstance(p, A.PBind):
        name = name or p.name
        p = p.pattern
    return p, name


def _is_const(p: Any) -> bool:
    """A bare constant pattern: `c:CONST`, `CONST(arg=...)` or a literal such as `2.0`."""
    return isinstance(p, A.PConst) or (isinstance(p, A.PNode)
                                       and {r.name for r in p.ops} == {"CONST"})


def bare_consts(pattern: Any) -> bool:
    """Whether a source pattern is a bare CONST (not the RESHAPE of a broadcast constant): a
    CONST has shape (), so only an instance at shape () matches it (a 0-d tensor is one: the
    Tensor API makes `Tensor(3.0) * 2.0` a MUL of two CONSTs)."""
    stack: list[tuple[Any, frozenset[str]]] = [(pattern, frozenset())]
    while stack:
        q, parent = stack.pop()
        q, _ = _unbound(q)
        if parent and "RESHAPE" not in parent and _is_const(q):
            return True
        if isinstance(q, A.PNode):
            names = frozenset(r.name for r in q.ops)
            stack.extend((s, names) for s in q.srcs or ())
    return False


def _const_value(p: Any, dt: Any, rng: Gen, literals: tuple[Any, ...],
                 default: Any = None) -> Any:
    """The value of a constant the pattern `p` matches: a literal pattern's own; else, as the
    value checker draws constants (generator/instances.py), half the time one at or beside a
    number the rule is written with (`c.arg > 2.5`: 2.5 and the floats next to it), else the
    case's drawn value (a tie, a zero base) or a free one."""
    from .instances import guard_values

    if isinstance(p, A.PConst):
        return p.value
    if isinstance(p, A.PNode) and isinstance(p.arg, A.ELit):
        return p.arg.value
    near = guard_values(literals, dt)
    if near and rng.random() < 0.5:
        return near[int(rng.integers(len(near)))]
    if default is not None:
        return default.item()
    return bool(rng.random() < 0.5) if dt.is_bool else float(rng.uniform(-2, 2))


def _source(p: Any, shape: tuple[int, ...], np_dtype: Any, rng: Gen,
            literals: tuple[Any, ...], bound: dict[str, Any], default: Any = None) -> Any | None:
    """A node the source pattern `p` names, over leaves of drawn values, or None where `p` is a
    fresh capture (the caller's leaf) or names no op drawn here:
    - a constant: `c:CONST` at shape () (`_const_value`), `EXPAND(RESHAPE(c:CONST))`, a
      constant as the API broadcasts it;
    - ALU ops (`EXP(y)` in `MUL(x, EXP(y))`): a rule over several ops states the gradient of
      the root's sources, so its reference is the root's torch op at those sources' values,
      whatever computed them;
    - a name bound before (`MAX(MUL(x, c), MUL(y, c))`): the same node.
    (Recursion over the pattern's depth, a few levels, never over a graph.)"""
    from rulegrad.dsl.names import resolve_ops
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import ARITY, GroupOp
    from rulegrad.runtime.uop import UOp

    p, name = _unbound(p)
    if isinstance(p, A.PVar):
        return bound.get(p.name) if p.name is not None else None
    dt = dtypes.from_np(np.dtype(np_dtype))
    node = None
    if _is_const(p):
        if shape == ():
            node = UOp.const(dt, _const_value(p, dt, rng, literals, default))
    elif isinstance(p, A.PNode) and dt.is_float:
        ops = set().union(*(resolve_ops(r.name) or set() for r in p.ops))
        if _broadcast_const(p, ops):  # `EXPAND(RESHAPE(c:CONST))`, as the API builds it
            floats = [v for v in literals if isinstance(v, float)] or [float(rng.uniform(-2, 2))]
            c = UOp.const(dt, floats[int(rng.integers(len(floats)))])
            node = c.reshape((1,) * len(shape)).expand(shape)
        else:
            alu = sorted((op for op in ops if op in GroupOp.ALU and op not in GroupOp.Comparison
                          and op.name not in ("CAST", "BITCAST", "WHERE") and op in ARITY),
                         key=lambda op: op.value)
            if alu:
                node = _alu_source(p, alu[int(rng.integers(len(alu)))], shape, np_dtype, rng,
                                   literals, bound)
    if node is not None and name is not None:
        bound[name] = node
    return node


def _alu_source(p: A.PNode, op: Any, shape: tuple[int, ...], np_dtype: Any, rng: Gen,
                literals: tuple[Any, ...], bound: dict[str, Any]) -> Any:
    """`op` over the sources `p` names: each built by `_source`, or a leaf of drawn values
    (LOG, LOG2 and SQRT of positive values, the others of any: a finite value)."""
    from rulegrad.runtime.ops import ARITY

    low = 0.5 if op.name in ("LOG", "LOG2", "SQRT") else -2.0
    srcs = []
    for q in (list(p.srcs or ()) + [None] * ARITY[op])[:ARITY[op]]:
        u = None if q is None else _source(q, shape, np_dtype, rng, literals, bound)
        if u is None:
            u = _leaf(np.asarray(rng.uniform(low, 2, shape)).astype(np_dtype))
            if (name := _capture_name(q)) is not None:
                bound[name] = u
        srcs.append(u)
    return srcs[0].alu(op, *srcs[1:])


def _capture_name(p: Any) -> str | None:
    """The name a source pattern binds (`x`, `x:PAT`, `PAT as x`), if any."""
    inner, name = _unbound(p)
    return name or (inner.name if isinstance(inner, A.PVar) else None)


def _is_constant(node: Any) -> bool:
    """A CONST, or the broadcast of one: a source no gradient is wanted of (a rule may give
    it None; a gradient it does give is compared)."""
    while node.op.name in ("EXPAND", "RESHAPE"):
        node = node.src[0]
    return node.op.name == "CONST"


def _check_one(matcher: Any, case: Case, draw: Draw, rng: Gen, torch: Any,
               pattern: Any = None, literals: tuple[Any, ...] = (), scalar: bool = False
               ) -> tuple[bool, bool, str | None]:
    """(matched, compared, counterexample) for one drawn instance: whether the rule applies
    to it, whether a reference was had (no torch: only smooth draws), and how the rule's
    gradient disagrees with the reference (None: it agrees). A source the rule's `pattern`
    writes as an op (`EXP(y)`) or a constant (`c:CONST`) is built as one (`_source`), and its
    value is the source's value. `scalar`: the instance is one element of the draw, at shape
    () (a pattern with a bare CONST source matches nothing larger)."""
    from rulegrad.runtime.device import device_of
    from rulegrad.runtime.ops import GroupOp

    xs = draw.fn(rng)
    if scalar:  # one element of every source, the same one: a tie or a zero base stays one
        k = int(rng.integers(xs[0].size))
        xs = [np.asarray(x.reshape(-1)[k]) for x in xs]
    leaves = [_leaf(x) for x in xs]
    while isinstance(pattern, A.PBind):
        pattern = pattern.pattern
    constant: set[int] = set()  # sources that are constants: a gradient of them may be None
    if isinstance(pattern, A.PNode) and pattern.srcs:
        bound: dict[str, Any] = {}
        for i, q in enumerate(pattern.srcs[:len(xs)]):
            sub = _source(q, xs[i].shape, xs[i].dtype, rng, literals, bound, default=xs[i])
            if sub is None:  # a capture: the drawn leaf, the same for its name's every use
                if (name := _capture_name(q)) is not None:
                    bound[name] = leaves[i]
                continue
            leaves[i], xs[i] = sub, _value(sub)
            if _is_constant(sub):
                constant.add(i)
    node = case.build(leaves)
    g = rng.uniform(-1, 1, node.shape) if node.dtype.is_float else np.ones(node.shape)
    if rng.random() < 0.5:  # zeros upstream: `ctx * where(..)` and `where(.., ctx * ..)` differ
        g = np.where(rng.random(g.shape) < 0.3, 0.0, g)
    ctx = _leaf(g, device_of(node)).cast(node.dtype)  # the gradient lives where the node does
    out = matcher.rewrite(node, ctx)
    if out is None:
        return False, False, None
    srcs = list(node.src)
    if case.below and not isinstance(out, dict):
        return True, False, None
    if isinstance(out, dict):  # {node below: gradient}: one per leaf, each its marker's
        srcs, out = list(out), tuple(out.values())
        if len(srcs) != len(xs):
            return True, True, f"op: {node!r}\nthe rule gave {out!r}, not one gradient per leaf"
    elif not isinstance(out, tuple) or len(out) != len(node.src):
        return True, True, f"op: {node!r}\nthe rule gave {out!r}, not one gradient per source"
    if node.op.name == "MULTI":  # (checked part by part)
        srcs, out = _parts_of(node, out)
        if len(srcs) != len(xs):
            return True, True, f"op: {node!r}\nthe rule gave {out!r}, not a stack of parts"
    if case.torch_fn is None or (case.stops and torch is None):  # none flows into any source
        wants: list[np.ndarray | None] = [None] * len(xs)
        against = case.torch_op
    elif torch is not None:
        g = np.asarray(_value(ctx), dtype=np.float64)  # g as the node's dtype rounds it
        wants = _torch_reference(torch, case, xs, _value(node), g)
        against = f"torch's autograd of {case.torch_op}"
    elif draw.smooth and all(x.itemsize == 8 for x in [*xs, np.empty(0, node.dtype.np)]
                             if x.dtype.kind == "f"):
        # (float64 only: a step in float32 is too coarse for a tight central difference)
        g = np.asarray(_value(ctx), dtype=np.float64)
        wants = _fd_reference(case, xs, g)
        against = "central differences"
    else:
        return True, False, None
    for i, (src, want, v) in enumerate(zip(srcs, wants, out)):
        if i in constant and v is None:
            continue
        if want is None:
            if v is not None:
                return True, True, (f"op: {node!r}\nno gradient flows into source {i} "
                                    f"({src.dtype.name}; {case.torch_op}), but the rule gives "
                                    f"{v!r}")
            continue
        if v is None:
            got = np.zeros(src.shape)
        elif v.shape != src.shape or v.dtype is not src.dtype:
            return True, True, (f"op: {node!r}\nthe rule's gradient of source {i} is "
                                f"{v.dtype.name}{list(v.shape)}, the source "
                                f"{src.dtype.name}{list(src.shape)}")
        elif None not in (device_of(v), device_of(src)) and device_of(v) != device_of(src):
            # (None: a constant, anywhere; a constant source's gradient lives where ctx is)
            return True, True, (f"op: {node!r}\nthe rule's gradient of source {i} is on "
                                f"{device_of(v)}, the source on {device_of(src)}")
        else:
            got = np.asarray(_value(v), dtype=np.float64)
        wide = src.dtype.itemsize == 8
        rtol = {8: RTOL_TORCH, 4: RTOL_TORCH32, 2: RTOL_TORCH16}[src.dtype.itemsize] \
            if torch is not None else RTOL_FD
        if src.dtype.itemsize == 2:  # float64's gradient as float16 holds it: past 65504, inf
            want = want.astype(np.float16).astype(np.float64)
        slack = 0.0
        if not wide and torch is not None and node.op not in GroupOp.Elementwise:
            slack = _sum_slack(np.asarray(_value(ctx), dtype=np.float64), src.shape, case.below)
        if not _agrees(got, want, rtol, slack):
            return True, True, _instance_text(node, draw, xs, g, i, got, want, against)
    return True, True, None


def check_gradient_rule(matcher: Any, examples: int, seed: int, pattern: Any = None,
                        literals: tuple[Any, ...] = ()) -> GradResult:
    """Run one gradient rule (alone, in `matcher`) on drawn instances of every case of every
    op it matches; each op is reported on its own, and an op it matches that no case draws
    leaves the rule unchecked."""
    from rulegrad.runtime.ops import GroupOp

    rule_ops = {op.name for op in (matcher.table or {})}
    if rule_ops and rule_ops <= SOURCELESS:
        return GradResult("refuted", 0, f"it is rooted on {', '.join(sorted(rule_ops))}, which "
                          "has no sources: runtime/autograd.py never asks a node without "
                          "sources for the gradients of its sources, so this rule can never "
                          "run (a constant's gradient flows nowhere: write no rule for it)")
    rng = np.random.default_rng(seed)
    torch = _torch()
    # a bare CONST source: the elementwise ops are drawn at shape (), where a CONST fits
    scalar = bare_consts(pattern)
    elementwise = {op.name for op in GroupOp.Elementwise}
    n = max(1, min(examples, MAX_EXAMPLES))
    cases = _cases()
    # an op's instances are shared among its variants (24 permutations of 4 axes need not
    # each take n), each variant taking at least one of each of its draws
    variants = Counter(c.op for c in cases)
    per_op: dict[str, set[str]] = {}  # op -> the torch ops compared with
    count = skipped = 0
    # float16 last, for an op the rule matched in no wider float (its types admit float16 only)
    for case in cases + _half_cases():
        if case.label.endswith(" in float16") and case.op in per_op:
            continue
        for k in range(max(-(-n // variants[case.op]), len(case.draws))):
            draw = case.draws[k % len(case.draws)]
            # a guard on a constant's value (`c.arg > 2.5`) holds for few draws: each slot
            # tries again (a handful of times) for an instance the rule applies to
            one = scalar and case.op in elementwise and case.op in rule_ops
            for _ in range(SCALAR_REPEATS if one else 1):
                for _ in range(CONST_TRIES if one and literals else 1):
                    matched, compared, bad = _check_one(matcher, case, draw, rng, torch,
                                                        pattern, literals, one)
                    if matched:
                        break
                if not matched:
                    continue
                per_op.setdefault(case.op, set()).add(case.torch_op)
                count += compared
                skipped += not compared
                if bad is not None:
                    return GradResult("refuted", count, f"{case.label}: the rule disagrees "
                                      f"with {case.torch_op}", bad)
    missing = sorted(rule_ops - set(variants))
    if not per_op:
        return GradResult("unchecked", 0, "no drawable instance of the ops it matches: "
                          + ", ".join(sorted(rule_ops)))
    if missing:
        return GradResult("unchecked", count, "no instance drawn of " + ", ".join(missing))
    how = "torch's autograd" if torch is not None else "central differences (torch is not " \
        f"installed: {skipped} instances at ties, kinks and poles skipped)"
    compared = [f"{op} vs {', '.join(sorted(t - NONE_FLOWS))}" for op, t in per_op.items()
                if t - NONE_FLOWS]
    flat = [op for op, t in per_op.items() if t & NONE_FLOWS]
    text = (f"vs {how}: " + "; ".join(compared)) if compared else ""
    if flat:
        text += ("; " if text else "") + "no gradient flows (int or bool): " + ", ".join(flat)
    return GradResult("passed", count, text)
