"""The optimizer's rules checked by running: each kernel in C before and after each rule.

In: kernel ASTs with their buffers (`OptKernel`s: the schedules of the optimizer fuzzer's
programs, tools/fuzz.py's `opt` class: mixed dtypes, prime sizes, broadcasts, NaN and -0.0,
sizes past every action's threshold), and a matcher holding one optimizer rule alone. Out: a
`RuleResult` per rule: the kernels it changed, those that disagreed, and a verdict (`rulegrad
check`'s method `kernel`: generator/passdiff.py's `rule_verdict` hands optimizer rules here).

Most of the optimizer's actions are instructions to the C printer (a RANGE kind, a `Pack` or
`Flash` in a STORE's arg, a `Parallel` in the SINK's): the printed C shows
what they do, so the check runs the C. For each kernel: lower it (`lower_only`), apply the
rule alone, and when that changed the kernel, build both ASTs exactly as they are (no further
optimizer pass) into one library and call both on the same inputs: random values, then the
same with NaN, +-inf and -0.0 sprinkled in. The outputs must be

- identical bits (any NaN equals any NaN, -0.0 is not 0.0) for a rule outside
  `REORDERS_SUMS` on a kernel without a float sum (the printer gives every plain reduce loop
  `omp simd reduction`, so a float sum's order is not fixed before the rule either), and
- otherwise within the reduction contract (runtime/semantics.py): |after - before| <=
  2 * n * eps * S per output, n the most terms of a float sum in the kernel and S the output
  of the kernel with every float addition one of magnitudes (`abs_sums`); NaN and infinities
  where they were.

The kernel interpreter (backends/kernel_interp.py) then runs the optimized AST on the same
inputs and must agree with its C: bit for bit where it sums every float sum in the C's order
(`pinned`: vector accumulators, threads, packed chains of fused multiply-adds), else within
the contract (plus LIBM_SLACK for the C library's last bits). This ties the C back to an
independent evaluator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import graph_rewrite, tracing
from rulegrad.runtime.uop import UOp, toposort

# the optimizer rules that may reorder a float sum or round its products once (fused multiply-
# add): opt.rules says so of each. Every other rule must keep every bit.
REORDERS_SUMS = frozenset({"thread_reduce", "vector_reduce", "pack_store", "flash_store"})
LIBM_SLACK = 64  # eps per output for the C library's last-bit differences (semantics.LIBM_OPS)
SPECIAL_SHARE = 0.05  # of a float input's elements, in the second draw: NaN, +-inf, -0.0
SHOWN = 6
# the optimizer fuzzer's programs whose kernels `rulegrad check` runs (each holds every family:
# each rule changes 8 to 20 of their kernels; 24 programs took 100 s with an empty cache)
CORPUS_PROGRAMS = 8


@dataclass(frozen=True)
class OptKernel:
    """A kernel of the corpus: where it came from, its AST and its buffers' (size, dtype)."""

    origin: str
    ast: UOp
    bufs: tuple[tuple[int, np.dtype], ...]


@dataclass
class RuleResult:
    """What one rule did to the corpus: the kernels it changed, those that disagreed."""

    fired: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    exact: int = 0  # of the kernels it changed, those compared bit for bit
    pinned: int = 0  # of those, the ones the interpreter matched bit for bit (`pinned`)

    def verdict(self, name: str, corpus: int) -> tuple[str, str, str, int]:
        """(method, verdict, detail, kernels it changed): `refuted` when a kernel it changed
        computes other values, `error` when the changed kernel does not build or run, `passed`
        when it changed kernels and each agreed, `unknown` when it changed none of `corpus`
        kernels."""
        n = len(self.fired)
        how = (f"bit for bit on {self.exact}, within the reduction contract on "
               f"{n - self.exact} (float sums)")
        if self.failures:
            more = f" (and {len(self.failures) - 1} more)" if len(self.failures) > 1 else ""
            return "kernel", "refuted", self.failures[0] + more, len(self.fired)
        if self.errors:
            return "kernel", "error", self.errors[0], len(self.fired)
        if not self.fired:
            return "kernel", "unknown", f"changed none of {corpus} kernels: nothing ran it", 0
        shown = ", ".join(self.fired[:SHOWN]) + (", ..." if len(self.fired) > SHOWN else "")
        return "kernel", "passed", (f"C before and after agree on {n} kernels, {how}; the "
                                    "interpreter on the optimized AST agrees with its C, bit "
                                    f"for bit on {self.pinned} ({shown})"), n


# ---------------------------------------------------------------------- running C as it is
def run_c(asts: Sequence[UOp], arrays: Sequence[Sequence[np.ndarray]]) -> None:
    """Build `asts` exactly as given (already lowered and optimized as wanted: no pass runs
    here) into one library and call kernel i on `arrays[i]`."""
    from rulegrad.backends.c.build import build_library
    from rulegrad.backends.c.render import render_kernel

    rendered = [render_kernel(a, f"od_{i}") for i, a in enumerate(asts)]
    lib = build_library(rendered)
    for rk, bufs in zip(rendered, arrays):
        fn = lib.function(rk.cname, rk.nparams, len(rk.var_names), rk.launch, rk.combine,
                          rk.shared)
        fn(*[b.ctypes.data for b in bufs[: rk.nparams]])


# ---------------------------------------------------------------------- inputs
def draw_inputs(bufs: Sequence[tuple[int, np.dtype]], rng: np.random.Generator,
                special: bool) -> list[np.ndarray]:
    """One flat array per buffer: normal floats (with NaN, +-inf and -0.0 when `special`),
    small ints of both signs, bools."""
    out = []
    for size, dt in bufs:
        dt = np.dtype(dt)
        if dt.kind == "f":
            a = rng.standard_normal(size).astype(dt)
            if special and size:
                hit = rng.random(size) < SPECIAL_SHARE
                a[hit] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dt), hit.sum())
        elif dt.kind == "b":
            a = rng.random(size) < 0.5
        elif dt.kind == "u":
            a = rng.integers(0, 9, size).astype(dt)
        else:
            a = rng.integers(-9, 9, size).astype(dt)
        out.append(a)
    return out


# ---------------------------------------------------------------------- comparing
def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element: equal bits, any NaN equal to any NaN (payloads carry no meaning)."""
    if got.dtype.kind != "f":
        return got == want
    both_nan = np.isnan(got) & np.isnan(want)
    return both_nan | ((got == want) & (np.signbit(got) == np.signbit(want)))


def abs_sums(ast: UOp) -> UOp:
    """The kernel with every float addition and subtraction made one of magnitudes (|a| + |b|,
    a sum's accumulation included): its outputs bound the rounding error of reordering any
    sum in it (runtime/semantics.py's contract: n * eps * sum |x_i|), through the additions
    after the sum too (a bias), where the outputs themselves may have cancelled."""
    new: dict[UOp, UOp] = {}
    for n in toposort(ast):
        src = tuple(new[s] for s in n.src)
        m = n.replace(src=src) if src != n.src else n
        if n.op in (Ops.ADD, Ops.SUB) and n.dtype.is_float:
            # (a loop-form reduce's accumulator stays itself: it only ever holds magnitudes)
            a, b = (x if x.op is Ops.DEFINE_REG else x.alu(Ops.MAX, x.alu(Ops.NEG))
                    for x in src)
            m = a.alu(Ops.ADD, b)
        new[n] = m
    return new[ast]


def has_float_sum(ast: UOp) -> bool:
    """Whether the kernel holds a float ADD or MUL reduce (its order is not pinned)."""
    return any(n.op is Ops.REDUCE and n.arg in (Ops.ADD, Ops.MUL) and n.dtype.is_float
               for n in toposort(ast))


def sum_terms(ast: UOp) -> int:
    """The most terms any float ADD reduce of the kernel combines (its ranges' sizes)."""
    most = 1
    for n in toposort(ast):
        if n.op is Ops.REDUCE and n.arg is Ops.ADD and n.dtype.is_float:
            most = max(most, math.prod(int(r.src[0].arg) for r in n.src[1:]
                                       if r.src[0].op is Ops.CONST))
    return most


def contract_close(got: np.ndarray, want: np.ndarray, terms: int, scale: np.ndarray,
                   eps: float | None = None) -> np.ndarray:
    """Per element: within 2 * terms * eps * scale (the reduction contract for two orders of
    one sum; eps the unit roundoff of the sums' dtype, by default the output's), or the same
    bits; NaN and infinities where the other has them."""
    if got.dtype.kind != "f":
        return got == want
    if eps is None:
        eps = float(np.finfo(got.dtype).eps) / 2
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = 2 * terms * eps * np.abs(scale.astype(np.float64)) + np.finfo(got.dtype).tiny
    with np.errstate(invalid="ignore"):
        near = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= tol)
    return same_bits(got, want) | near


def _first_bad(ok: np.ndarray, got: np.ndarray, want: np.ndarray,
               names: tuple[str, str] = ("after", "before")) -> str:
    i = int(np.flatnonzero(~ok)[0])
    return (f"output[{i}] is {got[i]!r} {names[0]}, {want[i]!r} {names[1]} "
            f"({int((~ok).sum())} differ)")


def pinned(ast: UOp) -> bool:
    """Whether the kernel interpreter computes this kernel's bits exactly as its C does: every
    float sum in the order the C sums it (kernel_interp.exact_order), and no C library
    function (numpy's may differ in the last bit)."""
    from rulegrad.backends.kernel_interp import exact_order
    from rulegrad.runtime.semantics import LIBM_OPS

    return exact_order(ast) and not any(n.op in LIBM_OPS for n in toposort(ast))


def scale_of(arrays: list, at: int, exact: bool) -> np.ndarray | None:
    """The magnitudes kernel's output (`abs_sums`) of the runs that end before `at` (before,
    after, magnitudes); None for a kernel compared bit for bit (before, after)."""
    return None if exact else np.abs(arrays[at - 1][0]).astype(np.float64)


def sum_eps(ast: UOp, out: np.dtype) -> float:
    """The unit roundoff of the least precise float a kernel sums in or writes (a float32
    product inside a float64 kernel rounds at float32's eps)."""
    dts = [np.dtype(n.dtype.np) for n in toposort(ast)
           if n.op is Ops.REDUCE and n.dtype.is_float] + [np.dtype(out)]
    return max(float(np.finfo(d).eps) / 2 for d in dts if d.kind == "f") \
        if np.dtype(out).kind == "f" else 0.0


def _libm_slack(ast: UOp) -> int:
    """LIBM_SLACK more terms' worth of eps for a kernel that calls the C library (exp, log,
    sin, pow): their last bits differ from numpy's, and a sum's rounding carries through
    them."""
    from rulegrad.runtime.semantics import LIBM_OPS

    return LIBM_SLACK if any(n.op in LIBM_OPS for n in toposort(ast)) else 0


def _interp_disagrees(after: UOp, ins: list[np.ndarray], got: np.ndarray,
                      scale: np.ndarray | None, terms: int) -> str | None:
    """The kernel interpreter on the optimized AST against its C output `got`: bits where the
    interpreter pins the kernel's order (`pinned`), else the reduction contract."""
    from rulegrad.backends.kernel_interp import run_kernel

    bufs = [a.copy() for a in ins]
    try:
        run_kernel(after, bufs)
    except Exception as e:  # noqa: BLE001 - an optimized AST it cannot run is a finding
        return f"the kernel interpreter cannot run the optimized AST: {type(e).__name__}: {e}"
    want = bufs[0]
    if pinned(after):
        ok, how = same_bits(got, want), "bits"
    else:
        # numpy's exp, log, sin and pow may differ from the C library's in the last bit, and
        # a kernel carries that through its arithmetic: LIBM_SLACK more terms' worth of eps

        slack = _libm_slack(after)
        base = np.abs(want).astype(np.float64) if want.dtype.kind == "f" else want
        ok = contract_close(got, want, terms + slack,
                            base if scale is None else np.fmax(scale, base),
                            sum_eps(after, got.dtype))
        how = "the reduction contract"
    if ok.all():
        return None
    return (f"the kernel interpreter on the optimized AST disagrees with its C ({how}): "
            + _first_bad(ok, got, want, ("C", "the interpreter")))


# ---------------------------------------------------------------------- one rule
def check_rule(name: str, alone: Any, corpus: Sequence[OptKernel], seed: int = 0) -> RuleResult:
    """Rule `name` (its matcher `alone`) on every kernel of the corpus, C before and after."""
    from rulegrad.backends.c.lower import lower_only

    res = RuleResult()
    pairs: list[tuple[OptKernel, UOp, UOp]] = []
    for k in corpus:
        low = lower_only(k.ast)
        try:
            with tracing(limit=0):
                after = graph_rewrite(low, alone, name="opt")
        except Exception as e:  # noqa: BLE001 - the rule's own code failed on a real kernel
            res.errors.append(f"{k.origin}: the rule raised {type(e).__name__}: {e}")
            continue
        if after is not low:
            pairs.append((k, low, after))
            res.fired.append(k.origin)
    if not pairs:
        return res
    rng = np.random.default_rng(seed)
    # bits where the rule keeps them and the kernel has no float sum: the printer gives every
    # plain reduce loop `omp simd reduction` (render.py), so a float sum's "before" is in
    # no fixed order either, and only the contract relates the two
    bits = [name not in REORDERS_SUMS and not has_float_sum(low) for _, low, _ in pairs]
    res.exact = sum(bits)
    for special in (False, True):
        asts, arrays = [], []
        ins_of: dict[str, list[np.ndarray]] = {}
        for (k, low, after), exact in zip(pairs, bits):
            ins = ins_of[k.origin] = draw_inputs(k.bufs, rng, special)
            for ast in ((low, after) if exact else (low, after, abs_sums(low))):
                asts.append(ast)
                arrays.append([a.copy() for a in ins])
        try:
            run_c(asts, arrays)
        except Exception as e:  # noqa: BLE001 - a kernel that does not build is a finding
            res.errors.append(f"the kernels do not build or run: {type(e).__name__}: {e}")
            return res
        at = 0
        for (k, low, after), exact in zip(pairs, bits):
            before, got = arrays[at][0], arrays[at + 1][0]
            if exact:
                ok = same_bits(got, before)
            else:
                # (fmax: a magnitude the abs-sums kernel made NaN, inf - inf, is no scale)
                scale = np.fmax(np.abs(arrays[at + 2][0]).astype(np.float64),
                                   np.abs(before).astype(np.float64)) \
                    if before.dtype.kind == "f" else before
                # a sum's rounding carried through exp, log, ... (LIBM_OPS): their slack too
                ok = contract_close(got, before, sum_terms(low) + _libm_slack(low), scale,
                                    sum_eps(low, got.dtype))
            at += 2 if exact else 3
            bad = _interp_disagrees(after, ins_of[k.origin], got, scale_of(arrays, at, exact),
                                    sum_terms(low))
            res.pinned += not special and pinned(after)
            if bad is not None:
                res.failures.append(f"{k.origin}: {bad}")
            if not ok.all():
                what = "NaN/inf/-0.0 inputs" if special else "random inputs"
                how = "bits" if exact else "the reduction contract"
                res.failures.append(f"{k.origin} ({how}): on {what}, "
                                    + _first_bad(ok, got, before))
    return res


# ---------------------------------------------------------------------- the corpus
def corpus_of(items: Iterable[Any], origin: str) -> list[OptKernel]:
    """The kernels of schedule items (no symbolic sizes: the check calls them without
    variable values)."""
    out = []
    for i, it in enumerate(items):
        if any(n.op is Ops.DEFINE_VAR for n in toposort(it.ast)):
            continue
        bufs = tuple((int(b.size), np.dtype(b.dtype.np)) for b in it.bufs)
        out.append(OptKernel(f"{origin}/{it.name}" if i == 0 else f"{origin}/{i}:{it.name}",
                             it.ast, bufs))
    return out


def opt_corpus(seed: int = 0, n: int = CORPUS_PROGRAMS) -> list[OptKernel]:
    """The kernels of the optimizer fuzzer's programs seed .. seed+n-1 (tools/fuzz.py), one
    of each distinct AST."""
    from rulegrad.tools.fuzz import opt_schedule

    seen: set[UOp] = set()
    out: list[OptKernel] = []
    for s in range(seed, seed + n):
        try:
            items = opt_schedule(s)
        except Exception:  # noqa: BLE001 - the fuzzer reports programs that do not schedule
            continue
        for k in corpus_of(items, f"opt seed {s}"):
            if k.ast not in seen:
                seen.add(k.ast)
                out.append(k)
    return out


def optimizer_rules() -> dict[str, str]:
    """The optimizer's own rules (not the symbolic ones it runs with): location -> name."""
    from rulegrad.rules import MatcherLoadError, matcher

    try:
        rules = matcher("opt", "opt").rules
    except MatcherLoadError:  # no optimizer pass to check (its rules get passdiff's verdict)
        return {}
    return {r.location: r.name for r in rules if r.location.startswith("rules/opt")}


_cache: dict[tuple, list[OptKernel]] = {}


def verdict(location: str, name: str, alone: Callable[[], Any], seed: int = 0,
            n: int | None = None) -> tuple[str, str, str, int]:
    """(method, verdict, detail, kernels it changed) of optimizer rule `name` at `location`,
    its matcher `alone()`; the corpus is built once per process."""
    key = (seed, CORPUS_PROGRAMS if n is None else n)
    if key not in _cache:
        _cache[key] = opt_corpus(*key)
    corpus = _cache[key]
    res = check_rule(name, alone(), corpus, seed)
    return res.verdict(name, len(corpus))


__all__ = ["OptKernel", "RuleResult", "check_rule", "contract_close", "draw_inputs",
           "opt_corpus", "optimizer_rules", "run_c", "same_bits", "verdict"]
