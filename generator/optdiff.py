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
optimizer pass) into one library and call both on the same inputs: random values, the same
with NaN, +-inf and -0.0 sprinkled in, then values of mixed magnitudes. The outputs must be

- identical bits (any NaN equals any NaN, -0.0 is not 0.0) for a rule outside
  `REORDERS_SUMS` on a kernel without a float sum (the printer gives every plain reduce loop
  `omp simd reduction`, so a float sum's order is not fixed before the rule either), and
- otherwise within the kernel's rounding bound (generator/roundoff.py): per output, how far
  two evaluations the reduction contract allows may be apart, from a forward error analysis
  of the kernel (a sum nested in a sum, through exp and a division, compounds); NaN and
  infinities where they were.

The kernel interpreter (backends/kernel_interp.py) then runs the optimized AST on the same
inputs and must agree with its C: bit for bit where it sums every float sum in the C's order
(`pinned`: vector accumulators, threads, packed chains of fused multiply-adds), else within
the same bound (which holds the C library's last bits against numpy's). This ties the C back to
an independent evaluator.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegrad.generator.roundoff import BoundError, kernel_bound
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import graph_rewrite, tracing
from rulegrad.runtime.uop import UOp, toposort

# the optimizer rules that may reorder a float sum or round its products once (fused multiply-
# add): opt.rules says so of each. Every other rule must keep every bit.
REORDERS_SUMS = frozenset({"split_reduce", "thread_reduce", "vector_reduce", "pack_store",
                           "flash_store"})
SPECIAL_SHARE = 0.05  # of a float input's elements, in the second draw: NaN, +-inf, -0.0
WIDE_DECADES = 2  # the third draw's float inputs: normal values times 10^U(-2, 2) each
# the inputs each changed kernel runs on, in turn
# ("rising"/"falling": a normal draw's values sorted, then reversed, so every reduce along a
# forward axis meets its max (min) last: in a split or vector reduce's peeled tail, which a
# random layout holds about never: a split_reduce that dropped its tail passed for MAX and MIN)
DRAWS = ("normal", "special", "wide", "whole", "rising", "falling")
DRAW_NAMES = {"normal": "random inputs", "special": "NaN/inf/-0.0 inputs",
              "wide": "inputs of mixed magnitudes", "whole": "small whole-number inputs",
              "rising": "inputs in rising order", "falling": "inputs in falling order"}
# the fourth draw's float inputs: whole numbers in [-WHOLE_MAX, WHOLE_MAX], whose sums (of
# products too) are exact in any order while they stay below 2^24 (float32): the contract's
# bound, 2 n u sum |x|, is then 0 (generator/roundoff.py), and a reordered sum that drops or
# doubles a term (0.4% of a million-term sum passed within the bound) must agree bit for bit
WHOLE_MAX = 4
SHOWN = 6
# the optimizer fuzzer's programs whose kernels `rulegrad check` runs (each holds every family:
# each rule changes 8 to 20 of their kernels; 24 programs took 100 s with an empty cache)
CORPUS_PROGRAMS = 8
# each rule runs on at least this many kernels it changes: a rule the corpus gives fewer runs on
# the kernels of MORE_PROGRAMS further programs as well (other seeds, so other sizes and dtypes)
MIN_KERNELS = 4
MORE_PROGRAMS = 16


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

    def merged(self, other: RuleResult) -> RuleResult:
        """Both results, as one run over both corpora."""
        return RuleResult(self.fired + other.fired, self.failures + other.failures,
                          self.errors + other.errors, self.exact + other.exact,
                          self.pinned + other.pinned)

    def verdict(self, name: str, corpus: int) -> tuple[str, str, str, int]:
        """(method, verdict, detail, kernels it changed): `refuted` when a kernel it changed
        computes other values, `error` when the changed kernel does not build or run, `passed`
        when it changed kernels and each agreed, `unknown` when it changed none of `corpus`
        kernels."""
        n = len(self.fired)
        how = (f"bit for bit on {self.exact}, within the rounding bound on "
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
                          rk.shared, rk.team)
        fn(*[b.ctypes.data for b in bufs[: rk.nparams]])


# ---------------------------------------------------------------------- inputs
def draw_inputs(bufs: Sequence[tuple[int, np.dtype]], rng: np.random.Generator,
                special: bool, wide: bool = False, whole: bool = False) -> list[np.ndarray]:
    """One flat array per buffer: normal floats (with NaN, +-inf and -0.0 when `special`;
    each times 10^U(-WIDE_DECADES, WIDE_DECADES) when `wide`, fewer decades where the dtype's
    range is short: sums that cancel, scores far apart; whole numbers up to WHOLE_MAX when
    `whole`), small ints of both signs, bools."""
    out = []
    for size, dt in bufs:
        dt = np.dtype(dt)
        if dt.kind == "f" and whole:
            a = rng.integers(-WHOLE_MAX, WHOLE_MAX, size, endpoint=True).astype(dt)
        elif dt.kind == "f":
            a = rng.standard_normal(size)
            if wide:
                decades = min(WIDE_DECADES, float(np.log10(np.finfo(dt).max)) / 4)
                a *= 10.0 ** rng.uniform(-decades, decades, size)
            a = a.astype(dt)
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


def within(got: np.ndarray, want: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per element: the same bits (any NaN equal to any NaN), or both finite and at most
    `bound` apart (generator/roundoff.py); an integer or bool output must be equal. Where the
    bound is 0 (an exact element: a max, a min) +0.0 for -0.0 is not "0 apart" but wrong."""
    if got.dtype.kind != "f":
        return got == want
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        near = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= bound) & (bound > 0)
    return same_bits(got, want) | near


def agree(got: np.ndarray, want: np.ndarray, bound: Callable[[], np.ndarray]) -> np.ndarray:
    """`within(got, want, bound())`, without asking for the bound when every element has the
    same bits already (`within` accepts those whatever the bound; a bound costs a run of the
    kernel interpreter, the check's largest cost, and many reorderings change no bit)."""
    same = same_bits(got, want)
    return same if same.all() else within(got, want, bound())


def has_float_sum(ast: UOp) -> bool:
    """Whether the kernel holds a float ADD or MUL reduce (its order is not pinned)."""
    return any(n.op is Ops.REDUCE and n.arg in (Ops.ADD, Ops.MUL) and n.dtype.is_float
               for n in toposort(ast))


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


def _interp_disagrees(after: UOp, ins: list[np.ndarray], got: np.ndarray,
                      bound: Callable[[], np.ndarray]) -> str | None:
    """The kernel interpreter on the optimized AST against its C output `got`: bits where the
    interpreter pins the kernel's order (`pinned`), else within the kernel's rounding bound
    (`bound()`, generator/roundoff.py: the sums' orders and the C library's last bits)."""
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
        ok, how = agree(got, want, bound), "the rounding bound"
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
    # bits where the rule keeps them and the kernel has no float sum: the printer gives every
    # plain reduce loop `omp simd reduction` (render.py), so a float sum's "before" is in
    # no fixed order either, and only the contract relates the two
    bits = [name not in REORDERS_SUMS and not has_float_sum(low) for _, low, _ in pairs]
    res.exact = sum(bits)
    rising: list[list[np.ndarray]] = []
    for draw in DRAWS:
        if draw == "falling":  # the rising draw's values, reversed (one draw, one sort)
            drawn = [[a[::-1].copy() for a in ins] for ins in rising]
        else:
            drawn = [draw_inputs(k.bufs, _rng(k, seed, draw), draw == "special",
                                 wide=draw == "wide", whole=draw == "whole") for k, _, _ in pairs]
        if draw == "rising":
            drawn = rising = [[np.sort(a) for a in ins] for ins in drawn]
        arrays = [[a.copy() for a in ins] for ins in drawn for _ in range(2)]
        try:
            run_c([ast for _, low, after in pairs for ast in (low, after)], arrays)
        except Exception as e:  # noqa: BLE001 - a kernel that does not build is a finding
            res.errors.append(f"the kernels do not build or run: {type(e).__name__}: {e}")
            return res
        for at, ((k, _, after), exact, ins) in enumerate(zip(pairs, bits, drawn)):
            before, got = arrays[2 * at][0], arrays[2 * at + 1][0]
            bound = _once(lambda k=k, ins=ins: _bound(k, ins))
            try:
                ok = same_bits(got, before) if exact else agree(got, before, bound)
                bad = _interp_disagrees(after, ins, got, bound)
            except BoundError as e:
                res.errors.append(f"{k.origin}: {e}")
                continue
            res.pinned += draw == DRAWS[0] and pinned(after)
            if bad is not None:
                res.failures.append(f"{k.origin}: on {DRAW_NAMES[draw]}, {bad}")
            if not ok.all():
                how = "bits" if exact else "the rounding bound"
                res.failures.append(f"{k.origin} ({how}): on {DRAW_NAMES[draw]}, "
                                    + _first_bad(ok, got, before))
    return res


def _rng(k: OptKernel, seed: int, draw: str) -> np.random.Generator:
    """The generator of kernel k's inputs in `draw`: the same for every rule (its AST's printed
    form, not its place in a corpus, picks it), so each rule runs a kernel on the same inputs."""
    return np.random.default_rng([seed, DRAWS.index(draw), zlib.crc32(str(k.ast).encode())])


# the bounds of kernels with a float sum, by AST and inputs (their checksums): each is computed
# once for all the rules that change the kernel (a sum's bound costs several runs of the kernel
# itself; a kernel without one, often large and elementwise, has a cheap bound not worth the
# memory)
_bounds: dict[tuple[UOp, tuple[int, ...]], np.ndarray] = {}


def _bound(k: OptKernel, ins: list[np.ndarray]) -> np.ndarray:
    if not has_float_sum(k.ast):
        return kernel_bound(k.ast, ins)
    key = (k.ast, tuple(zlib.crc32(np.ascontiguousarray(a).view(np.uint8)) for a in ins))
    if key not in _bounds:
        _bounds[key] = kernel_bound(k.ast, ins)
    return _bounds[key]


def _once(f: Callable[[], np.ndarray]) -> Callable[[], np.ndarray]:
    """`f`, computed at the first call only (a kernel's bound is needed only where it is not
    compared bit for bit)."""
    memo: list[np.ndarray] = []
    return lambda: memo[0] if memo else memo.append(f()) or memo[0]


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


def _corpus(seed: int, n: int, apart_from: Sequence[OptKernel] = ()) -> list[OptKernel]:
    """The kernels of programs seed .. seed+n-1 not already in `apart_from`, built once per
    process."""
    if (seed, n) not in _cache:
        _cache[(seed, n)] = opt_corpus(seed, n)
    seen = {k.ast for k in apart_from}
    return [k for k in _cache[(seed, n)] if k.ast not in seen]


def verdict(location: str, name: str, alone: Callable[[], Any], seed: int = 0,
            n: int | None = None) -> tuple[str, str, str, int]:
    """(method, verdict, detail, kernels it changed) of optimizer rule `name` at `location`,
    its matcher `alone()`. A rule that changed fewer than MIN_KERNELS kernels of the corpus,
    and no kernel disagreed, is run on MORE_PROGRAMS further programs too."""
    n = CORPUS_PROGRAMS if n is None else n
    corpus = _corpus(seed, n)
    matcher = alone()
    res = check_rule(name, matcher, corpus, seed)
    if len(res.fired) < MIN_KERNELS and not res.failures and not res.errors:
        more = _corpus(seed + n, MORE_PROGRAMS, corpus)
        res = res.merged(check_rule(name, matcher, more, seed + 1))
        corpus = corpus + more
    return res.verdict(name, len(corpus))


__all__ = ["OptKernel", "RuleResult", "check_rule", "draw_inputs", "within",
           "opt_corpus", "optimizer_rules", "run_c", "same_bits", "verdict"]
