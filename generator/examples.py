"""Evaluation checks: a rule must give the same value as its left side on drawn instances.

In: one rule (with the rule set it belongs to and its file's helpers), an example count and a
seed. Out: an `ExampleResult`: `passed` with the number of instances the rule rewrote,
`refuted` with the counterexample (the left side as a UOp graph, the variable values,
both results, and what differed), or `unknown` when no instance the rule applies to could be
drawn.

Each example draws an instance of the left side (instances.py), rewrites its root with the rule
*alone* (a one-rule interpreted matcher, so no other rule can mask a bad one), and evaluates
both graphs with the numpy oracle (backends/oracle.py), RANGEs bound to drawn in-range values
(the element an index expression reaches must be the same; index rules are evaluated element
by element, see `IndexedEval`; a kernel's value is stored over its loops and run by the kernel
interpreter, see `kernel_values`). Equal means identical bits, every NaN identified (NaN equals
NaN, -0.0 is not 0.0), as z3 compares; a rule marked `# check: ulp N` may differ by N units in
the last place, and one marked `# check: sum` (a float sum rewritten: its left side a
REDUCE_AXIS ADD of n terms per output) by the reduction contract, 2·n·u·sum |terms| per output
(`sum_bound`). The dtype and shape must be kept. A division by zero is an instance like any
other (x // 0 and x % 0 are 0, as the oracle and C compute). A rule that raises on an instance
is an `error`, with the instance and the error shown, except a sharded instance the rule
refuses with `InvalidArgument` (what a sharded tensor cannot do): no program, not drawn again.
An instance's buffers are restored before each side is evaluated (an ASSIGN writes them).

On a few instances per rule the rule's whole set also runs to a fixed point under a small
rewrite budget: a `RewriteBudgetError` there is a loop between rules of the set, reported
with the rules that kept firing. Instances are drawn with a seeded `random.Random`
(draws.py): `seed` makes a run repeat, on any machine and under any load. The first instance
that refutes a rule is the one reported; draws favour small shapes and values, so it is small.
A rule whose guard random draws (almost) never satisfy gets hypothesis's search instead.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegrad.backends.oracle import evaluate
from rulegrad.dsl import ast as A
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.errors import InvalidArgument
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.rewrite import RewriteBudgetError, RewriteNotReady, graph_rewrite
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.view import flatten

from .draws import RandomData, Reject, assume, run_hypothesis, run_random
from .instances import Instance, draw_instance, reads_tag, rule_literals
from .joint import JointSweep

LOOP_BUDGET = 2000  # rule firings a set may make on one small instance before it is a loop
LOOP_PROBES = 5  # instances per rule on which the whole set runs
PROBE_EXAMPLES = 5  # the first, short run (see check_examples)
SWEEP_ATTEMPTS = 3  # draws of one sweep instance before it is given up (a guard says no)


@dataclass
class ExampleResult:
    verdict: str  # passed | refuted | unknown | error
    examples: int = 0  # instances the rule rewrote and that compared equal
    counterexample: str | None = None
    detail: str = ""
    loops: list[str] = field(default_factory=list)  # RewriteBudgetError messages


class Refuted(Exception):
    """Raised by one example: carries the printed counterexample."""


class _Enough(Exception):
    """Stop drawing: enough attempts (see check_examples)."""


class Raised(Exception):
    """The rule itself raised on an instance: not a wrong value, but nothing was checked.
    (Some rules raise on purpose: a last rule that reports an unhandled op, say.)"""


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def index_overflows(inst: Instance, root: UOp) -> bool:
    """Whether the exact value of some `index` node of a scalar instance leaves int64.

    z3 assumes index arithmetic never overflows (C computes it in int64, and the scheduler's
    index math stays far inside it: smt.py, INDEX_NOTE), so it proves rules that only hold
    without overflow; an example outside that assumption would refute a rule z3 rightly
    proved. Index nodes are computed exactly (Python ints, C's truncating division), every
    other node by the oracle."""
    if not any(n.dtype is dtypes.index and n.op in GroupOp.ALU for n in toposort(root)):
        return False
    exact = IndexedEval(inst)
    vals: dict[UOp, Any] = {}
    for n in toposort(root):
        if n.dtype is dtypes.index:
            try:
                vals[n] = exact._scalar(n, [vals[s] for s in n.src])
            except ValueError:  # an op index math does not have: the oracle's value
                vals[n] = _oracle_scalar(inst, n)
            if isinstance(vals[n], int) and not INT64_MIN <= vals[n] <= INT64_MAX:
                return True
        else:
            vals[n] = _oracle_scalar(inst, n)
    return False


def _oracle_scalar(inst: Instance, n: UOp) -> Any:
    return np.asarray(evaluate([inst.bind_ranges(n)], inst.var_vals)[0]).item()


def _values(inst: Instance, node: UOp) -> Any:
    if inst.buffers and any(n.op is Ops.ASSIGN for n in toposort(node)):
        inst.restore()  # each side starts from the buffers as drawn (an ASSIGN writes them)
    if inst.mode == "kernel":
        return kernel_values(inst, node)
    if inst.mode == "index":
        return IndexedEval(inst).value(node)
    return evaluate([inst.bind_ranges(node)], inst.var_vals)[0]


def _buffer_contents(inst: Instance) -> list[np.ndarray]:
    """What the instance's buffers hold now (after a side's ASSIGNs ran)."""
    return [buf.ensure().copy() for buf, _ in inst.buffers]


def kernel_values(inst: Instance, value: UOp) -> np.ndarray:
    """A kernel-level value at every point of the instance's loops: the kernel that stores it
    (row-major over the loops into slot 0), run by the kernel interpreter on copies of the
    drawn parameters."""
    from rulegrad.backends.kernel_interp import run_kernel

    sizes = tuple(int(r.src[0].arg) for r in inst.loops)
    out = np.zeros(int(np.prod(sizes, dtype=np.int64)), value.dtype.np)
    g = UOp(Ops.DEFINE_GLOBAL, value.dtype, (), 0)
    off = flatten(inst.loops, sizes, UOp.const(dtypes.index, 0))
    store = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, value.dtype, (g, off)), value,
                                         *inst.loops))
    run_kernel(UOp.sink(store), [out, *(p.copy() for p in inst.params)], inst.var_vals)
    return out.reshape(sizes)


class _Invalid:
    """The value of INVALID: an index outside a PAD's valid region (its element reads 0)."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID = _Invalid()
# nodes whose value is their first source's (a LOAD of an INDEX is the element it names)
_MARKERS = frozenset({Ops.CONTIGUOUS, Ops.COPY, Ops.NOOP, Ops.REALIZE, Ops.DETACH, Ops.FUSE,
                      Ops.CONTIGUOUS_BACKWARD, Ops.LOAD})


class IndexedEval:
    """The value of a graph that reads tensors through INDEX: the element each INDEX names.

    INDEX(x, i0..in) is x (evaluated by the oracle) at the indices, which are evaluated here
    directly with C semantics at the instance's variable values; an index that is INVALID reads
    0, and an index out of the tensor's bounds is an error (the element reached does not
    exist). Ops above INDEXes are applied to the elements by the oracle."""

    def __init__(self, inst: Instance):
        self.inst = inst

    def value(self, n: UOp) -> np.ndarray:
        if n.op is Ops.INDEX:
            return self._element(n)
        if n.op is Ops.LOAD and len(n.src) == 3:  # LOAD(INDEX(b, off), gate, alt): C's `?:`
            chosen = n.src[0] if self.index(n.src[1]) else n.src[2]
            return np.asarray(self.value(chosen), n.dtype.np)
        if not any(m.op is Ops.INDEX for m in toposort(n)):
            return np.asarray(evaluate([self.inst.bind_ranges(n)], self.inst.var_vals)[0])
        if n.op in _MARKERS:
            return self.value(n.src[0])
        srcs = [UOp.const(s.dtype, self.value(s).item()) for s in n.src]
        return np.asarray(evaluate([n.replace(src=tuple(srcs))], self.inst.var_vals)[0])

    def _element(self, n: UOp) -> np.ndarray:
        idx = [self.index(i) for i in n.src[1:]]
        if any(v is INVALID for v in idx):
            return np.zeros((), n.dtype.np)
        if n.src[0].op is Ops.BUFFERIZE:
            return self._buffered(n.src[0], idx)
        t = np.asarray(self.value(n.src[0]))
        if t.shape == ():
            return t  # a scalar read at any index is itself
        if len(idx) == t.ndim + 1 and isinstance(idx[-1], bool):
            # the kernel form INDEX(buffer, offset, valid): where not valid, the pad value 0
            if not idx[-1]:
                return np.zeros((), n.dtype.np)
            idx = idx[:-1]
        if len(idx) != t.ndim or not all(0 <= v < s for v, s in zip(idx, t.shape)):
            raise IndexError(f"INDEX at {tuple(idx)} of a tensor of shape {t.shape}")
        return np.asarray(t[tuple(idx)])

    def _buffered(self, b: UOp, idx: list[Any]) -> np.ndarray:
        """Element `idx` of BUFFERIZE(value, *ranges): the value with its ranges at idx."""
        rngs = b.src[1:]
        if len(idx) != len(rngs):
            raise IndexError(f"INDEX with {len(idx)} indices of a buffer of {len(rngs)} ranges")
        at = dict(self.inst.range_vals)
        for r, v in zip(rngs, idx):
            if r.op is Ops.RANGE:
                if not 0 <= v < r.src[0].arg:
                    raise IndexError(f"INDEX at {tuple(idx)} of a buffer over {b.shape}")
                at[r] = v
        inner = IndexedEval(dataclasses.replace(self.inst, range_vals=at))
        return np.asarray(inner.value(b.src[0]), b.dtype.np)

    def index(self, e: UOp) -> Any:
        """An index expression's value (ints, bools or INVALID)."""
        vals: dict[UOp, Any] = {}
        for n in toposort(e):
            vals[n] = self._scalar(n, [vals[s] for s in n.src])
        return vals[e]

    def _scalar(self, n: UOp, s: list[Any]) -> Any:
        op = n.op
        if op is Ops.CONST:
            return n.arg
        if op is Ops.INVALID:
            return INVALID
        if op is Ops.RANGE:
            return self.inst.range_vals[n]
        if op is Ops.DEFINE_VAR:
            return self.inst.var_vals[n.arg[0]]
        if op is Ops.WHERE:
            return s[1] if s[0] else s[2]
        if any(v is INVALID for v in s):
            return INVALID
        if op in (Ops.IDIV, Ops.MOD):
            if s[1] == 0:
                return 0  # x // 0 and x % 0 are 0, as in C and the oracle
            q = abs(s[0]) // abs(s[1])
            q = q if (s[0] < 0) == (s[1] < 0) else -q
            return q if op is Ops.IDIV else s[0] - s[1] * q
        table = {Ops.ADD: lambda: s[0] + s[1], Ops.SUB: lambda: s[0] - s[1],
                 Ops.MUL: lambda: s[0] * s[1], Ops.NEG: lambda: -s[0],
                 Ops.MAX: lambda: max(s), Ops.MIN: lambda: min(s),
                 Ops.CMPLT: lambda: s[0] < s[1], Ops.CMPNE: lambda: s[0] != s[1],
                 Ops.CMPEQ: lambda: s[0] == s[1], Ops.AND: lambda: s[0] & s[1],
                 Ops.OR: lambda: s[0] | s[1], Ops.XOR: lambda: s[0] ^ s[1],
                 Ops.CAST: lambda: s[0]}
        if op not in table:
            raise ValueError(f"{op.name} in an index expression")
        return table[op]()


def same(a: np.ndarray, b: np.ndarray, ulp: int = 0) -> bool:
    """Identical bits, every NaN identified (-0.0 is not 0.0); with `ulp` N, finite floats may
    be N units in the last place apart (infinities and two zeros' signs stay exact): the rule's
    stated tolerance."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return False
    fa, fb = np.ascontiguousarray(a[~nan_a]), np.ascontiguousarray(b[~nan_b])
    if ulp == 0:
        unsigned = f"u{a.dtype.itemsize}"
        return bool(np.array_equal(fa.view(unsigned), fb.view(unsigned)))
    ia, ib = ordinal(fa), ordinal(fb)
    exact_ones = np.isinf(fa) | np.isinf(fb) | ((fa == 0) & (fb == 0))
    exact = (np.array_equal(fa[exact_ones], fb[exact_ones])
             and np.array_equal(np.signbit(fa[exact_ones]), np.signbit(fb[exact_ones])))
    return bool(exact and np.all(np.abs(ia - ib) <= ulp))


def sum_bound(inst: Instance, lhs: UOp) -> np.ndarray | None:
    """Per output of a float REDUCE_AXIS ADD, how far two evaluations the reduction contract
    allows may be apart (docs/checker.md): any order of its n terms is within (n-1)·u·sum |x_i|
    of the exact sum, so two are within 2·n·u·sum |x_i|. None for any other left side (a max or
    min is exact in any order)."""
    if lhs.op is not Ops.REDUCE_AXIS or lhs.arg[0] is not Ops.ADD or not lhs.dtype.is_float:
        return None
    terms = np.abs(np.asarray(_values(inst, lhs.src[0]), dtype=np.float64))
    axes = tuple(lhs.arg[1])
    n = math.prod(terms.shape[i] for i in axes)
    u = float(np.finfo(lhs.dtype.np).eps) / 2
    return 2 * n * u * terms.sum(axis=axes, keepdims=True)


def within(a: np.ndarray, b: np.ndarray, bound: np.ndarray) -> bool:
    """`same` within a bound per element: NaN, infinities and the sign of two zeros exact
    (no rounding moves them), every other pair at most `bound` apart."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    exact = ~np.isfinite(a) | ~np.isfinite(b) | ((a == 0) & (b == 0))
    if not same(a[exact], b[exact]):
        return False
    rest = ~exact
    gap = np.abs(a[rest].astype(np.float64) - b[rest].astype(np.float64))
    return bool(np.all(gap <= np.broadcast_to(bound, a.shape)[rest]))


def ordinal(x: np.ndarray) -> np.ndarray:
    """Each (non-NaN) float's place on the line of floats: consecutive floats differ by 1, and
    -0.0 and 0.0 share place 0 (bit equality tells them apart)."""
    bits = np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}").astype(object)
    sign = 1 << (8 * x.dtype.itemsize - 1)
    return np.array([-(int(v) - sign) if int(v) & sign else int(v) for v in bits.ravel()],
                    dtype=object).reshape(x.shape)


def describe(inst: Instance, lhs: UOp, rhs: UOp | None, why: str, left: Any = None,
             right: Any = None) -> str:
    """The counterexample as text: the left side's graph, variable values, what differed."""
    lines = [str(lhs)]
    values = {**inst.var_vals, **{f"r{r.arg[0]}": v for r, v in inst.range_vals.items()}}
    if values:
        lines.append("with " + ", ".join(f"{k}={v}" for k, v in sorted(values.items())))
    if rhs is not None:
        lines.append("rewritten to:")
        lines.append("  " + str(rhs).replace("\n", "\n  "))
    if left is not None:
        lines.append(f"left side = {_short(left)}, right side = {_short(right)}")
    lines.append(why)
    return "\n".join(lines)


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"{np.array2string(v, threshold=12)} ({v.dtype}, shape {v.shape})"
    return repr(v)


def check_examples(rule: A.Rule, one_rule: Any, whole_set: Any | None, mode: str,
                   examples: int = 100, seed: int = 0, ulp: int = 0,
                   sum_contract: bool = False,
                   helpers: dict[str, Any] | None = None) -> ExampleResult:
    """Run the evaluation check of one rule; see the module docstring. `helpers`: the names
    the rule may call, for the sweep of a guard's constants (joint.py)."""
    result = ExampleResult("passed")
    probes = [0]
    literals = rule_literals(rule)
    sweep = JointSweep(rule, helpers or {}, literals)
    tagged = reads_tag(rule.guard)  # (a walk of the guard: once, not at every example)

    def one(data: Any) -> None:
        one_of(data, None)

    def one_of(data: Any, swept: tuple[JointSweep, int] | None) -> None:
        inst = draw_instance(data, rule.pattern, mode, literals, tagged, swept)
        lhs = inst.root
        try:
            left = _values(inst, lhs)
            left_writes = _buffer_contents(inst)
            bound = sum_bound(inst, lhs) if sum_contract else None
        except Exception:  # noqa: BLE001
            # not a graph the oracle can run (shapes that do not line up, a value out of its
            # dtype's range): a malformed instance, not the rule's fault
            assume(False)
        # the instances z3 assumes away are no counterexamples here either
        assume(mode != "scalar" or not index_overflows(inst, lhs))
        try:
            rhs = one_rule.rewrite(lhs, None)
        except RewriteNotReady:
            assume(False)
        except Exception as exc:  # noqa: BLE001 - a rule that crashes is reported, not hidden
            # what a sharded tensor cannot do (a movement that would move data between its
            # shards, ops over shards along different axes) is refused with a message, as the
            # user sees it: that instance is no program
            assume(not (mode == "sharded" and isinstance(exc, InvalidArgument)))
            raise Raised(describe(inst, lhs, None, f"the rule raised {exc!r}")) from exc
        assume(rhs is not None and rhs is not lhs)
        assume(mode != "scalar" or not index_overflows(inst, rhs))
        try:
            inst.restore()  # from the buffers as drawn, whatever the left side wrote
            right = _values(inst, rhs)
        except Exception as exc:  # noqa: BLE001
            raise Refuted(describe(inst, lhs, rhs, f"the right side cannot be evaluated: "
                                   f"{exc}")) from exc
        # an ASSIGN's effect is part of the meaning: a rewrite that drops it (or writes
        # something else) leaves other readers of the buffer another value
        right_writes = _buffer_contents(inst)
        for k, (a, b) in enumerate(zip(left_writes, right_writes, strict=True)):
            if not same(a, b, ulp):
                raise Refuted(describe(inst, lhs, rhs, f"buffer {k} is left holding another "
                                       "value (an ASSIGN's write differs)", a, b))
        left, right = np.asarray(left), np.asarray(right)
        if not (same(left, right, ulp) if bound is None else within(left, right, bound)):
            why = "the values differ" + ("" if bound is None else " past the sum contract")
            if left.dtype != right.dtype:
                why = f"the dtype changed: {left.dtype} -> {right.dtype}"
            elif left.shape != right.shape:
                why = f"the shape changed: {left.shape} -> {right.shape}"
            raise Refuted(describe(inst, lhs, rhs, why, left, right))
        result.examples += 1
        if whole_set is not None and probes[0] < LOOP_PROBES:
            probes[0] += 1
            try:
                graph_rewrite(lhs, whole_set, budget=LOOP_BUDGET)
            except RewriteBudgetError as exc:
                result.loops.append(str(exc))
            except Exception:  # noqa: BLE001 - other rules' failures are their own checks'
                pass

    try:
        # a short first run tells a rule whose guard random draws (almost) never satisfy; such
        # a rule gets hypothesis's search instead, which steers toward what the guard wants
        accepted = run_random(one, min(examples, PROBE_EXAMPLES), seed)
        if accepted == 0 and mode == "tensor":
            # a tensor rule no plain instance fires (an op over MULTIs): draw sharded ones
            mode = "sharded"
            accepted = run_random(one, min(examples, PROBE_EXAMPLES), seed)
            mode = "sharded" if accepted else "tensor"
        if accepted > 0:
            result.examples = 0
            run_random(one, examples, seed)
        else:
            run_hypothesis(one, examples, seed)
        if sweep.names:
            run_sweep(one_of, sweep)
        if result.examples == 0:
            raise _Enough
    except Refuted as exc:
        return ExampleResult("refuted", result.examples, str(exc), loops=result.loops)
    except Raised as exc:
        return ExampleResult("error", result.examples, str(exc),
                             detail="the rule raised on an instance", loops=result.loops)
    except _Enough:
        pass
    if result.examples == 0:
        return ExampleResult("unknown", 0, detail="no instance the rule applies to was drawn",
                             loops=result.loops)
    result.detail = f"{result.examples} examples"
    return result


def run_sweep(one: Any, sweep: JointSweep) -> None:
    """The sweep of a guard's constants (joint.py): instance k drawn from its own index, not
    the seed (so what it refutes is refuted at every seed), a few times over when rejected."""
    k = 0
    while k < sweep.size():
        for attempt in range(SWEEP_ATTEMPTS):
            try:
                one(RandomData(random.Random(k * SWEEP_ATTEMPTS + attempt)), (sweep, k))
                break
            except Reject:
                continue
        k += 1


class _Looped(Exception):
    pass


def probe_loop(rule: A.Rule, whole_set: Any, mode: str, examples: int = 25,
               seed: int = 0) -> str | None:
    """Run the rule's whole set on instances of the rule's left side under a small budget; the
    RewriteBudgetError message if the set does not settle on one of them, else None."""

    def one(data: Any) -> None:
        inst = draw_instance(data, rule.pattern, mode, tag_root=reads_tag(rule.guard))
        try:
            graph_rewrite(inst.root, whole_set, budget=LOOP_BUDGET)
        except RewriteBudgetError as exc:
            raise _Looped(str(exc)) from exc
        except Exception:  # noqa: BLE001 - not this check's concern
            assume(False)

    try:
        run_random(one, examples, seed)
    except _Looped as exc:
        return str(exc)
    return None


def replay(one_rule: Any, lhs: UOp, var_vals: dict[str, int], ulp: int = 0) -> str:
    """Run a z3 counterexample through the rule's matcher and the numpy oracle: an independent
    confirmation that the rewrite changes the value (or a note that it could not be shown)."""
    inst = Instance(lhs, "scalar", dict(var_vals))
    try:
        rhs = one_rule.rewrite(lhs, None)
    except Exception as exc:  # noqa: BLE001
        return f"on the oracle: the rule raised {exc!r}"
    if rhs is None or rhs is lhs:
        return "on the oracle: the rule does not fire on this instance"
    try:
        left, right = _values(inst, lhs), _values(inst, rhs)
    except Exception as exc:  # noqa: BLE001
        return f"on the oracle: cannot evaluate ({exc})"
    if same(np.asarray(left), np.asarray(right), ulp):
        return "on the oracle: both sides agree (a z3 model the oracle does not reproduce)"
    return f"confirmed by the oracle: {_short(left)} vs {_short(right)}"
