"""`rulegrad check`'s gradient method: gradient rules against central finite differences.

In: one rule of a rule set marked `# check: gradient` (rules/gradient.rules), run alone by the
interpreted matcher. Out: a verdict: `passed` on N drawn instances, or `refuted` with the
instance (op, inputs, the rule's gradient and the finite difference where they disagree most).

For each op the rule matches, an instance is the op over float64 leaves of drawn values (in the
op's domain: positive logarithms, no ties at MAX, values away from integers at TRUNC, ...) and
a drawn upstream gradient `g`. The rule gives one gradient per source; the oracle
(backends/oracle.py) evaluates each, and the finite difference of `sum(g * op(inputs))` in each
input element, (L(x + h) - L(x - h)) / 2h, must agree with it. A source the rule gives no
gradient (None) must have a zero finite difference. A result that is not a float (comparisons,
integer ops) has no gradient: the rule must give None for every source.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rulegrad.dsl import ast as A

GRADIENT_MARK = re.compile(r"#.*\bcheck:\s*gradient\b")
MAX_EXAMPLES = 20  # each example is tens of oracle runs; 20 draws per op find a wrong rule
STEP = 1e-6
RTOL, ATOL = 1e-4, 1e-6


@dataclass
class GradResult:
    verdict: str  # passed | refuted | unchecked
    examples: int = 0
    detail: str = ""
    counterexample: str | None = None


def gradient_rules(rf: A.RulesFile) -> set[tuple[int, int]]:
    """The (line, col) of every rule in a set whose `rules NAME = ...` line, or the comment
    block just above it, carries `# check: gradient`."""
    lines = rf.source.splitlines()

    def marked(line: int) -> bool:
        k = line
        while 1 <= k <= len(lines):
            if GRADIENT_MARK.search(lines[k - 1]):
                return True
            k -= 1
            if not (1 <= k and lines[k - 1].lstrip().startswith("#")):
                return False
        return False

    return {(r.span.line, r.span.col) for rs in rf.rulesets if marked(rs.span.line)
            for term in rs.terms if isinstance(term, A.RuleBlock) for r in term.rules}


# ---------------------------------------------------------------------- drawing instances
Draw = Callable[[np.random.Generator], list[np.ndarray]]
SHAPE = (3, 4)


def _free(rng: np.random.Generator, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return rng.uniform(-2, 2, shape)


def _away_from_zero(rng: np.random.Generator, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return rng.uniform(0.5, 2, shape) * rng.choice([-1.0, 1.0], shape)


def _positive(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0.5, 2, SHAPE)


def _distinct(rng: np.random.Generator, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Values at least 0.1 apart: no ties for MAX/MIN within the finite difference's step."""
    n = int(np.prod(shape))
    return rng.permutation(np.arange(n) * 0.1 - n * 0.05 + rng.uniform(0, 0.01)).reshape(shape)


def _apart(rng: np.random.Generator) -> list[np.ndarray]:
    x = _free(rng)
    return [x, x + rng.uniform(0.1, 1, SHAPE) * rng.choice([-1.0, 1.0], SHAPE)]


def _off_integers(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(-3, 3, SHAPE) + rng.uniform(0.2, 0.8, SHAPE)


@dataclass(frozen=True)
class Case:
    """How to build one op over leaves, and draw its float inputs."""

    op: str
    draw: Draw
    build: Callable[[list[Any]], Any]  # leaves (UOps) -> the node
    rtol: float = RTOL
    step: float = STEP  # larger where the result is rounded to float32


def _cases() -> list[Case]:
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    def alu(op: Ops) -> Callable[[list[Any]], Any]:
        return lambda xs: xs[0].alu(op, *xs[1:])

    def mop(op: Ops, arg: Any) -> Callable[[list[Any]], Any]:
        return lambda xs: UOp(op, xs[0].dtype, (xs[0],), arg)

    one = lambda f: lambda rng: [f(rng)]  # noqa: E731
    cases = [Case(op.name, one(_free), alu(op)) for op in (Ops.NEG, Ops.EXP, Ops.SIN, Ops.EXP2)]
    cases += [Case(op.name, one(_positive), alu(op)) for op in (Ops.LOG, Ops.LOG2, Ops.SQRT)]
    cases += [
        Case("RECIPROCAL", one(_away_from_zero), alu(Ops.RECIPROCAL)),
        Case("TRUNC", one(_off_integers), alu(Ops.TRUNC)),
        Case("CAST", one(_free), lambda xs: xs[0].cast(dtypes.float32), rtol=1e-3, step=1e-2),
        Case("CAST", one(_free), lambda xs: xs[0].cast(dtypes.int32)),
        Case("ADD", lambda r: [_free(r), _free(r)], alu(Ops.ADD)),
        Case("SUB", lambda r: [_free(r), _free(r)], alu(Ops.SUB)),
        Case("MUL", lambda r: [_free(r), _free(r)], alu(Ops.MUL)),
        Case("FDIV", lambda r: [_free(r), _away_from_zero(r)], alu(Ops.FDIV)),
        Case("POW", lambda r: [_positive(r), _free(r)], alu(Ops.POW)),
        Case("MAX", _apart, alu(Ops.MAX)),
        Case("MIN", _apart, alu(Ops.MIN)),
        Case("MULACC", lambda r: [_free(r), _free(r), _free(r)], alu(Ops.MULACC)),
        Case("WHERE", lambda r: [_free(r), _free(r), _free(r)],
             lambda xs: xs[0].alu(Ops.CMPLT, 0.0).alu(Ops.WHERE, xs[1], xs[2])),
    ]
    cases += [Case(op.name, lambda r: [_free(r), _free(r)], alu(op))
              for op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ)]
    for rop, axes in ((Ops.ADD, (1,)), (Ops.ADD, (0, 1)), (Ops.MAX, (0,)), (Ops.MIN, (1,)),
                      (Ops.MUL, (1,))):
        draw = _away_from_zero if rop is Ops.MUL else _distinct
        cases.append(Case("REDUCE_AXIS", one(draw), mop(Ops.REDUCE_AXIS, (rop, axes))))
    cases += [
        Case("RESHAPE", one(_free), mop(Ops.RESHAPE, (2, 6))),
        Case("PERMUTE", one(_free), mop(Ops.PERMUTE, (1, 0))),
        Case("EXPAND", one(lambda r: _free(r, (3, 1))), mop(Ops.EXPAND, (3, 4))),
        Case("PAD", one(_free), mop(Ops.PAD, ((1, 0), (2, 1)))),
        Case("SHRINK", one(_free), mop(Ops.SHRINK, ((1, 3), (0, 2)))),
        Case("FLIP", one(_free), mop(Ops.FLIP, (True, False))),
    ]
    cases += [Case(op.name, one(_free), mop(op, None))
              for op in (Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE)]
    return cases


# ---------------------------------------------------------------------- checking
def _leaf(arr: np.ndarray) -> Any:
    from rulegrad.runtime.buffer import Buffer
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    buf = Buffer(arr.size, dtypes.float64, arr)
    return UOp(Ops.BUFFER, dtypes.float64, (), buf).reshape(arr.shape)


def _value(node: Any) -> np.ndarray:
    from rulegrad.backends.oracle import evaluate

    return np.asarray(evaluate([node])[0], dtype=np.float64)


def _finite_difference(case: Case, xs: list[np.ndarray], i: int, g: np.ndarray) -> np.ndarray:
    out = np.zeros_like(xs[i])
    for j in np.ndindex(xs[i].shape):
        sides = []
        for h in (case.step, -case.step):
            moved = [x.copy() for x in xs]
            moved[i][j] += h
            sides.append(float(np.sum(g * _value(case.build([_leaf(m) for m in moved])))))
        out[j] = (sides[0] - sides[1]) / (2 * case.step)
    return out


def _instance_text(case: Case, node: Any, xs: list[np.ndarray], g: np.ndarray, i: int,
                   got: np.ndarray, want: np.ndarray) -> str:
    k = np.unravel_index(int(np.argmax(np.abs(got - want))), got.shape)
    lines = [f"op: {node!r}"]
    lines += [f"source {n}: {np.array2string(x, precision=4)}" for n, x in enumerate(xs)]
    lines.append(f"upstream gradient: {np.array2string(g, precision=4)}")
    lines.append(f"gradient of source {i} by the rule: {np.array2string(got, precision=5)}")
    lines.append(f"by finite differences:        {np.array2string(want, precision=5)}")
    lines.append(f"worst at {tuple(int(v) for v in k)}: rule {got[k]:.6g}, "
                 f"finite difference {want[k]:.6g}")
    return "\n".join(lines)


def _check_one(matcher: Any, case: Case, rng: np.random.Generator) -> tuple[bool, str | None]:
    """(matched, counterexample): whether the rule applies to this case's op, and how the
    rule's gradient disagrees with finite differences on one drawn instance (None: it agrees)."""
    xs = case.draw(rng)
    node = case.build([_leaf(x) for x in xs])
    g = rng.uniform(-1, 1, node.shape) if node.dtype.is_float else np.ones(node.shape)
    ctx = _leaf(g).cast(node.dtype)
    out = matcher.rewrite(node, ctx)
    if out is None:
        return False, None
    if not isinstance(out, tuple) or len(out) != len(node.src):
        return True, f"op: {node!r}\nthe rule gave {out!r}, not one gradient per source"
    if not node.dtype.is_float:
        bad = [i for i, v in enumerate(out) if v is not None]
        return True, (f"op: {node!r}\nits result is {node.dtype.name}: no gradient flows, but "
                      f"the rule gives one for source(s) {bad}") if bad else None
    for i, src in enumerate(node.src):
        if not src.dtype.is_float:
            continue
        got = np.zeros(xs[i].shape) if out[i] is None else _value(out[i])
        if got.shape != xs[i].shape:
            return True, (f"op: {node!r}\nthe rule's gradient for source {i} has shape "
                          f"{got.shape}, the source {xs[i].shape}")
        want = _finite_difference(case, xs, i, g)
        if not np.allclose(got, want, rtol=case.rtol, atol=ATOL + case.rtol * np.abs(want).max()):
            return True, _instance_text(case, node, xs, g, i, got, want)
    return True, None


def _gradient_stop(matcher: Any, rng: np.random.Generator) -> GradResult:
    """A rule for DETACH or ASSIGN: these stop the gradient by definition (no finite difference
    applies), so what is checked is that the rule gives no gradient to any source."""
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    x = _leaf(rng.uniform(-1, 1, (3,)))
    for op, srcs in ((Ops.DETACH, (x,)), (Ops.ASSIGN, (x, x))):
        node = UOp(op, x.dtype, srcs)
        out = matcher.rewrite(node, _leaf(np.ones(3)).cast(x.dtype))
        if out is None:
            continue
        if isinstance(out, tuple) and len(out) == len(srcs) and all(v is None for v in out):
            return GradResult("passed", 1, f"{op.name} stops the gradient: the rule gives none")
        return GradResult("refuted", 1, f"{op.name} stops the gradient, but the rule gives "
                          f"{out!r}", f"op: {node!r}\nthe rule gave {out!r}")
    return GradResult("unchecked", detail="no drawable instance of the ops it matches")


def check_gradient_rule(matcher: Any, examples: int, seed: int) -> GradResult:
    """Run one gradient rule (alone, in `matcher`) on drawn instances of every op it matches."""
    rng = np.random.default_rng(seed)
    n = min(examples, MAX_EXAMPLES)
    ops: list[str] = []
    count = 0
    for case in _cases():
        for _ in range(n):
            matched, bad = _check_one(matcher, case, rng)
            if not matched:
                break
            count += 1
            if bad is not None:
                return GradResult("refuted", count, f"{case.op}: finite differences disagree",
                                  bad)
        else:
            ops.append(case.op)
    if not ops:
        return _gradient_stop(matcher, rng)
    return GradResult("passed", count, "vs finite differences on " + ", ".join(dict.fromkeys(ops)))
