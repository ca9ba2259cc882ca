"""The optimizer check's rounding bound (generator/roundoff.py): a forward error analysis over
the kernel AST, per nesting level of sums.

Three things: the bound holds (a kernel's C output and its interpreter's are each within half
of it from an exact oracle, numpy's long double, on inputs of mixed magnitudes, for kernels
that nest sums in sums through exp and division); it holds where the old one failed (an
attention row with an infinite score, whose magnitudes kernel was NaN); and it is tight enough
that a wrong optimizer action is refuted (a scale off by 1e-4 relative, ln 2 as 0.6932, a
dropped last term, swapped operands)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends import kernel_interp
from rulegrad.backends.c.lower import lower_kernel
from rulegrad.dsl import ast as A
from rulegrad.dsl import load
from rulegrad.generator import optdiff
from rulegrad.generator.interp import interpret_ruleset
from rulegrad.generator.roundoff import kernel_bound
from rulegrad.generator.soundness import Checker
from rulegrad.rules import RULES_DIR
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

OPT = load(str(RULES_DIR / "opt.rules"))
LD = np.longdouble


def _kernel(t: Tensor) -> optdiff.OptKernel:
    (k,) = optdiff.corpus_of(t.schedule(), "program")
    return k


@pytest.fixture(scope="module")
def alone():
    """The matcher of one optimizer rule alone (as `rulegrad check` builds it)."""
    rules = {r.name: r for rs in OPT.rulesets for r in rs.rules if r.span.path == OPT.file.path}
    helpers = Checker().helpers(OPT)
    path = OPT.rulesets[0].path
    return lambda name: interpret_ruleset(A.CheckedRuleSet(name, (rules[name],), path), helpers)


def _attention(nq: int, nk: int, d: int, dt: type) -> Tensor:
    z = np.zeros
    q, k, v = Tensor(z((nq, d), dt)), Tensor(z((nk, d), dt)), Tensor(z((nk, d), dt))
    return ((q @ k.T) * 0.25).softmax(-1) @ v


def _attention_exact(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        s = (q.astype(LD) @ k.astype(LD).T) * LD(0.25)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ v.astype(LD)


# ---------------------------------------------------------------------- the bound holds
def _cases():
    """(program of zeros of the right shapes, its exact value of the inputs in long double)."""
    def att(nq, nk, d, dt):
        return (lambda: _attention(nq, nk, d, dt),
                lambda ins: _attention_exact(ins[1].reshape(nq, d), ins[2].reshape(nk, d),
                                             ins[3].reshape(nk, d)))

    def layernorm_linear(n, d, m):
        def exact(ins):
            x, w = ins[1].reshape(n, d).astype(LD), ins[2].reshape(d, m).astype(LD)
            mu = x.mean(-1, keepdims=True)
            eps = LD(ins[3][0])  # (the layernorm's eps is a buffer: the test sets it to 1e-5)
            y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
            return y @ w
        return (lambda: Tensor(np.zeros((n, d), np.float32)).layernorm()
                @ Tensor(np.zeros((d, m), np.float32)), exact)

    def log_softmax(n, m):
        def exact(ins):
            x = ins[1].reshape(n, m).astype(LD)
            s = x - x.max(-1, keepdims=True)
            return s - np.log(np.exp(s).sum(-1, keepdims=True))
        return lambda: Tensor(np.zeros((n, m), np.float32)).log_softmax(-1), exact

    return {"attention f32 13x6x8": att(13, 6, 8, np.float32),
            "attention f64 64x6x8": att(64, 6, 8, np.float64),
            "attention f32 7x37x16": att(7, 37, 16, np.float32),
            "layernorm linear 5x64x11": layernorm_linear(5, 64, 11),
            "log_softmax 7x131": log_softmax(7, 131)}


@pytest.mark.parametrize("case", sorted(_cases()))
@pytest.mark.parametrize("wide", [False, True])
def test_the_bound_holds_against_an_exact_oracle(case, wide):
    """C (optimized as the heuristic does) and the kernel interpreter each lie within half the
    bound of the exact value, per output (the bound is on the difference of two evaluations)."""
    program, exact = _cases()[case]
    k = _kernel(program())
    ins = optdiff.draw_inputs(k.bufs, np.random.default_rng(7), special=False, wide=wide)
    if case.startswith("layernorm"):
        ins[3][:] = 1e-5
    bound = kernel_bound(k.ast, ins)
    want = exact(ins).reshape(-1)
    c, py = [a.copy() for a in ins], [a.copy() for a in ins]
    optdiff.run_c([lower_kernel(k.ast)], [c])
    kernel_interp.run_kernel(k.ast, py)
    for got in (c[0], py[0]):
        err = np.abs(got.astype(LD) - want)
        assert (err <= bound / 2).all(), (case, float((err / bound).max()))
    # and it is not vacuous (the refutations below show how tight it is)
    assert np.isfinite(bound).all()
    if not wide:
        assert bound.max() < 1e-3 * np.abs(want).max()


def test_a_sum_alone_gets_the_contracts_bound():
    """One float sum of n terms: exactly the reduction contract, 2 n u sum |x| (+ n subnormal
    spacings), computed independently here from numpy's magnitudes."""
    k = _kernel(Tensor(np.zeros((3, 131), np.float32)).sum(-1))
    ins = optdiff.draw_inputs(k.bufs, np.random.default_rng(1), special=False)
    u = float(np.finfo(np.float32).eps) / 2
    want = 2 * 131 * u * np.abs(ins[1].reshape(3, 131).astype(np.float64)).sum(-1) \
        + 131 * float(np.finfo(np.float32).smallest_subnormal)
    np.testing.assert_allclose(kernel_bound(k.ast, ins), want, rtol=1e-12)


def test_the_bound_is_asked_for_only_where_bits_differ():
    """`optdiff.agree`: outputs with the same bits everywhere (NaNs of other payloads, -0.0 as
    -0.0) agree without the bound (its kernel run is the check's largest cost); one element
    off by an ulp asks for it and is judged by it, as numpy's arithmetic says."""
    rng = np.random.default_rng(3)
    want = rng.standard_normal(64).astype(np.float32)
    want[[3, 9]] = [np.nan, -0.0]
    got = want.copy()
    got.view(np.uint32)[3] |= 1  # another NaN payload: still the same value
    asked: list[int] = []

    def bound(width: float) -> Callable[[], np.ndarray]:
        def f() -> np.ndarray:
            asked.append(1)
            return np.full(64, width)
        return f

    assert optdiff.agree(got, want, bound(0.0)).all() and not asked
    got[7] = np.nextafter(want[7], np.float32(np.inf))
    ulp = float(got[7]) - float(want[7])
    ok = optdiff.agree(got, want, bound(ulp))
    assert ok.all() and len(asked) == 1
    ok = optdiff.agree(got, want, bound(ulp / 2))
    assert list(np.flatnonzero(~ok)) == [7] and len(asked) == 2
    got[9] = 0.0  # +0.0 for -0.0: 0 apart, but wrong where nothing may round (rev45b)
    assert list(np.flatnonzero(~optdiff.agree(got, want, bound(0.0)))) == [7, 9]
    assert list(np.flatnonzero(~optdiff.agree(got, want, bound(ulp / 2)))) == [7]


# ---------------------------------------------------------------------- where it failed
def _inf_in_k(dt: type):
    """draw_inputs, with one of K's elements +inf: a row whose q has the sign that makes its
    score -inf keeps finite outputs, and its magnitudes kernel (|s| + |max| = inf, inf/inf) was
    NaN, so the old check fell back to |output| as the scale."""
    draw = optdiff.draw_inputs

    def patched(bufs, rng, special, **kw):
        ins = draw(bufs, rng, special, **kw)
        ins[2][3] = np.inf
        return ins
    return patched


@pytest.mark.parametrize("name,nq,dt", [("flash_store", 13, np.float32),
                                        ("interchange_store", 64, np.float64)])
def test_attention_with_an_infinite_score_passes(alone, monkeypatch, name, nq, dt):
    """The two refutations of the stacked-pools fuzz stream (flash_store on a float32 13x6x8
    attention, interchange_store on a float64 64x6x8 one, each one element apart by less than
    a rounding of its terms): the rule is right, and the check now says so."""
    monkeypatch.setattr(optdiff, "draw_inputs", _inf_in_k(dt))
    corpus = [_kernel(_attention(nq, 6, 8, dt))]
    for seed in range(6):
        res = optdiff.check_rule(name, alone(name), corpus, seed)
        assert res.verdict(name, 1)[1] == "passed", res.failures


# ---------------------------------------------------------------------- wrong rules refuted
def _scaled(new: UOp) -> UOp:
    """The rule's result times 1 + 1e-4 (a STORE's value, a SINK's stores' values)."""
    def one(st: UOp) -> UOp:
        v = st.src[1]
        return st.replace(src=(st.src[0], v * v.const_like(1 + 1e-4), *st.src[2:]))
    if new.op is Ops.SINK:
        return new.replace(src=tuple(one(s) if s.src[1].dtype.is_float else s for s in new.src))
    return one(new) if new.op is Ops.STORE else new * new.const_like(1 + 1e-4)


def _wrong_ln2(new: UOp) -> UOp:
    """exp(x) as exp2(x / 0.6932): ln 2 off by 8e-5 relative."""
    return new.substitute({n: (n.src[0] * n.src[0].const_like(1 / 0.6932)).alu(Ops.EXP2)
                           for n in toposort(new) if n.op is Ops.EXP})


def _drop_last(new: UOp) -> UOp:
    """Every float ADD reduce of the kernel one term short (a split that loses its tail)."""
    rs = {r for n in toposort(new) if n.op is Ops.REDUCE and n.arg is Ops.ADD
          and n.dtype.is_float for r in n.src[1:]}
    return new.substitute({r: r.replace(src=(r.src[0].const_like(int(r.src[0].arg) - 1),))
                           for r in rs})


def _swapped(new: UOp) -> UOp:
    """The first float subtraction's operands swapped."""
    sub = next(n for n in toposort(new) if n.op is Ops.SUB and n.dtype.is_float)
    return new.substitute({sub: sub.replace(src=sub.src[::-1])})


class _Wrong:
    """A one-rule matcher that does what `inner` does, then breaks its result with `how`."""

    def __init__(self, inner, how):
        self.inner, self.how, self.rules, self.name = inner, how, inner.rules, "broken"

    def rewrite(self, n: UOp, ctx=None) -> UOp | None:
        new = self.inner.rewrite(n, ctx)
        return new if new is None or new is n else self.how(new)


def _f32(rng, *shape):
    return Tensor(rng.standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("name,how,program", [
    # attention: the loosest bound of the corpus (sums nested through exp and a division)
    ("flash_store", _scaled, lambda r: ((_f32(r, 13, 8) @ _f32(r, 6, 8).T) * 0.25)
     .softmax(-1) @ _f32(r, 6, 8)),
    ("flash_store", _wrong_ln2, lambda r: ((_f32(r, 13, 8) @ _f32(r, 6, 8).T) * 0.25)
     .softmax(-1) @ _f32(r, 6, 8)),
    ("vector_reduce", _wrong_ln2, lambda r: _f32(r, 7, 33).softmax(-1)),
    ("vector_reduce", _scaled, lambda r: _f32(r, 7, 131).softmax(-1)),
    ("vector_reduce", _drop_last, lambda r: _f32(r, 7, 131).sum(-1)),
    ("pack_store", _drop_last, lambda r: _f32(r, 37, 64) @ _f32(r, 64, 41)),
    ("interchange_store", _swapped, lambda r: (Tensor(r.standard_normal((64, 8)))
                                               @ Tensor(r.standard_normal((6, 8))).T)
     .softmax(-1) @ Tensor(r.standard_normal((6, 8)))),
])
def test_a_wrong_action_is_refuted(alone, name, how, program):
    corpus = [_kernel(program(np.random.default_rng(5)))]
    right = optdiff.check_rule(name, alone(name), corpus)
    assert right.verdict(name, 1)[1] == "passed", right.failures  # the rule fires, and holds
    res = optdiff.check_rule(name, _Wrong(alone(name), how), corpus)
    assert res.verdict(name, 1)[1] == "refuted", (res.errors, res.fired)
