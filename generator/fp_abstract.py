"""A float query with its rounded products, quotients and sums abstracted: a cheap proof for
rules whose truth rests on how rounding behaves (it is monotone and keeps signs), not on the
bits a product has.

In: a z3 formula whose unsatisfiability is a proof (a rule's premise and the negation of its
conclusion). Out: the same formula with every round-to-nearest-even fpMul, fpDiv, fpAdd and
fpSub replaced by a fresh float, beside facts that the real operation obeys for all operands
of its sort (`facts`), or None when there is nothing to abstract.

Why: bit-blasting a 24-bit multiplier, three times over, is what z3 gave up on for
`MAX(MUL(x, c), MUL(y, c)) -> MUL(MAX(x, y), c)` (30,000,000 resource units and 6 to 15
CPU-s per rule: the fuzzer's `rules` class paid it on every text). The rule holds because
rounding is monotone and a product's sign is the xor of its operands' signs, and those two
facts, stated over the products as fresh floats, decide it in a few thousand units.

Sound for proofs only: a model of the original formula gives one of the abstraction (each
fresh float takes its operation's value there, and every fact holds of the real operation),
so when the abstraction is unsatisfiable so is the original. A model of the abstraction
proves nothing (a fresh float may take a value no rounding gives): the caller then runs the
full query, whose counterexamples stand.

The facts, for m = a op b rounded to nearest even (IEEE 754; z3 has one NaN):
- NaN: m is NaN exactly when an operand is, or for 0 * inf, inf - inf, 0 / 0, inf / inf;
- sign: a non-NaN product or quotient has the sign of the xor of its operands' signs
  (zeros and infinities included); a sum of two operands of one sign has that sign;
- zeros and infinities: 0 * finite and finite / inf are zeros, inf * nonzero and
  nonzero / 0 infinite; x + 0 is x for x not zero, and 0 + 0 is -0 only for -0 + -0;
- congruence: equal operands (in either order, for + and *) give equal results;
- monotonicity, for two operations of one kind sharing an operand s (the divisor, for /):
  with neither result NaN, u <= v gives u + s <= v + s, u * s <= v * s when s > 0 and
  u * s >= v * s when s < 0 (likewise u / s): the exact result is monotone, and so is
  rounding to nearest, overflow to infinity included.
"""

from __future__ import annotations

import itertools

import z3

MAX_TERMS = 12  # rounded operations abstracted per query; more and the pairwise facts grow
_KINDS = {z3.Z3_OP_FPA_MUL: "mul", z3.Z3_OP_FPA_DIV: "div", z3.Z3_OP_FPA_ADD: "add",
          z3.Z3_OP_FPA_SUB: "add"}


class _Op:
    """One abstracted operation: its kind, operands (a - b is held as a + -b) and fresh float."""

    def __init__(self, kind: str, a: z3.FPRef, b: z3.FPRef, m: z3.FPRef):
        self.kind, self.a, self.b, self.m = kind, a, b, m


def _apps(formula: z3.ExprRef):
    """Each application in the formula once (a stack, no recursion)."""
    seen: set[int] = set()
    todo = [formula]
    while todo:
        e = todo.pop()
        if e.get_id() in seen or not z3.is_app(e):
            continue
        seen.add(e.get_id())
        yield e
        todo.extend(e.children())


def _rounded_ops(formula: z3.ExprRef) -> list[z3.ExprRef]:
    """Every fpMul/fpDiv/fpAdd/fpSub to nearest even in the formula."""
    nearest = z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN
    return [e for e in _apps(formula)
            if e.decl().kind() in _KINDS and z3.is_app_of(e.arg(0), nearest)]


def leaves(formula: z3.ExprRef) -> list[z3.ExprRef]:
    """The formula's free constants (its variables), each once."""
    return [e for e in _apps(formula)
            if e.num_args() == 0 and e.decl().kind() == z3.Z3_OP_UNINTERPRETED]


def abstracted(formula: z3.BoolRef) -> z3.BoolRef | None:
    """The formula with its rounded operations abstracted and their facts added (see the
    module docstring), or None when it holds none or too many."""
    found = _rounded_ops(formula)
    if not found or len(found) > MAX_TERMS:
        return None
    fresh = [z3.FreshConst(e.sort(), "rounded") for e in found]  # unlike any rule's name
    facts = rounding_facts(found, fresh)
    return z3.substitute(z3.And(formula, *facts), *zip(found, fresh))


def rounding_facts(terms: list[z3.ExprRef], results: list[z3.ExprRef]) -> list[z3.BoolRef]:
    """The facts (module docstring) that each rounded operation terms[i] obeys, stated of
    results[i], the float that stands for it (the term itself states them of the real
    operation: tests/test_checker_57.py proves each so)."""
    ops: list[_Op] = []
    for e, m in zip(terms, results):
        kind = _KINDS[e.decl().kind()]
        a, b = e.arg(1), e.arg(2)
        if e.decl().kind() == z3.Z3_OP_FPA_SUB:
            b = z3.fpNeg(b)
        ops.append(_Op(kind, a, b, m))
    facts = [f for op in ops for f in _own_facts(op)]
    for p, q in itertools.combinations(ops, 2):
        if p.kind == q.kind and p.m.sort() == q.m.sort():
            facts += _pair_facts(p, q)
    return facts


def _own_facts(op: _Op) -> list[z3.BoolRef]:
    a, b, m = op.a, op.b, op.m
    nan, zero, inf, neg = z3.fpIsNaN, z3.fpIsZero, z3.fpIsInf, z3.fpIsNegative
    fin = lambda v: z3.Not(z3.Or(nan(v), inf(v)))  # noqa: E731
    if op.kind == "add":
        same_sign = z3.And(z3.Not(nan(a)), z3.Not(nan(b)), neg(a) == neg(b))
        return [
            nan(m) == z3.Or(nan(a), nan(b), z3.And(inf(a), inf(b), neg(a) != neg(b))),
            z3.Implies(same_sign, neg(m) == neg(a)),
            z3.Implies(z3.And(zero(a), zero(b)), z3.And(zero(m), neg(m) == z3.And(neg(a), neg(b)))),
            z3.Implies(z3.And(zero(b), z3.Not(zero(a))), m == a),
            z3.Implies(z3.And(zero(a), z3.Not(zero(b))), m == b),
        ]
    sign = z3.Implies(z3.Not(nan(m)), neg(m) == z3.Xor(neg(a), neg(b)))
    if op.kind == "mul":
        return [
            nan(m) == z3.Or(nan(a), nan(b), z3.And(zero(a), inf(b)), z3.And(inf(a), zero(b))),
            sign,
            z3.Implies(z3.Or(z3.And(zero(a), fin(b)), z3.And(fin(a), zero(b))), zero(m)),
            z3.Implies(z3.And(z3.Or(inf(a), inf(b)), z3.Not(nan(m))), inf(m)),
        ]
    return [  # div
        nan(m) == z3.Or(nan(a), nan(b), z3.And(zero(a), zero(b)), z3.And(inf(a), inf(b))),
        sign,
        z3.Implies(z3.And(fin(a), inf(b)), zero(m)),
        z3.Implies(z3.And(zero(a), z3.Not(nan(b)), z3.Not(zero(b))), zero(m)),
        z3.Implies(z3.And(z3.Not(nan(a)), z3.Not(zero(a)), zero(b)), inf(m)),
        z3.Implies(z3.And(inf(a), fin(b)), inf(m)),
    ]


def _pair_facts(p: _Op, q: _Op) -> list[z3.BoolRef]:
    """Congruence and monotonicity of two operations of one kind and sort."""
    facts = [z3.Implies(z3.And(p.a == q.a, p.b == q.b), p.m == q.m)]
    if p.kind != "div":  # + and * commute, NaN and the sign of a zero included
        facts.append(z3.Implies(z3.And(p.a == q.b, p.b == q.a), p.m == q.m))
    both = z3.And(z3.Not(z3.fpIsNaN(p.m)), z3.Not(z3.fpIsNaN(q.m)))
    # (shared operand, p's other operand, q's other one): the divisor only, for a quotient
    shared = [(p.b, p.a, q.a, q.b)] if p.kind == "div" else [
        (p.a, p.b, q.b, q.a), (p.b, p.a, q.a, q.b), (p.a, p.b, q.a, q.b), (p.b, p.a, q.b, q.a)]
    for s, u, v, t in shared:
        if not s.eq(t):
            continue
        for lo, hi, mlo, mhi in ((u, v, p.m, q.m), (v, u, q.m, p.m)):
            le = z3.And(both, z3.fpLEQ(lo, hi))
            if p.kind == "add":
                facts.append(z3.Implies(le, z3.fpLEQ(mlo, mhi)))
            else:
                zero = z3.fpZero(s.sort(), False)
                facts.append(z3.Implies(z3.And(le, z3.fpGT(s, zero)), z3.fpLEQ(mlo, mhi)))
                facts.append(z3.Implies(z3.And(le, z3.fpLT(s, zero)), z3.fpGEQ(mlo, mhi)))
    return facts
