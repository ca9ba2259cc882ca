"""Pass-differential checking: the fuzzer's programs through the scheduler, pass by pass.

In: fuzzer seeds (`tools/fuzz.py`; a fixed, modest range by default), plus a few fixed
programs for what the fuzzer does not generate (assign, float16). Out: a `PassDiff`,
which holds for each program every pass it went through (the rewrite engine's
`tracing(copy_ctx=True)`: the pass's input, a copy of its context, its firings) and what
disagreed, and which gives each rule its verdict.

Each step is checked where an independent evaluator can read both sides:
- the tensor-level passes (`earliest`, `add_realize`, `pm_children`): the numpy oracle on the
  pass's input against the oracle on its output;
- the rest of the schedule (`do_realize`, `pm_rangeify`, `pm_cleanups`, `split_kernels`,
  `to_kernel` and the `sym` they call): the oracle on the program against the kernel
  interpreter on its kernels (the fuzzer's own comparison), since no evaluator reads the graphs
  in between;
- lowering (`lower.rules`): each kernel run by the kernel interpreter before and after `lower`,
  on the same random inputs.

The optimizer's rules (rules/opt*.rules) are not judged here: `rule_verdict` hands them to
generator/optdiff.py, which runs each kernel in C before and after the rule alone (its actions
are instructions to the C printer, which no evaluator of the AST alone can read).

A rule fires on a program when it returns a node other than its input. A rule that only fills
the pass context (it returns nothing, e.g. `do_realize`) is credited where, replayed alone on
the pass's recorded input and context, it changes that context. When a step disagrees, the
rules that fired in it are ranked by how much more often they fire in failing steps than in
agreeing ones (Ochiai), and the top ones are named as refuted.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegrad.runtime.env import env_set
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import Firing, PassRecord, graph_rewrite, tracing
from rulegrad.runtime.uop import UOp, toposort

DEFAULT_PROGRAMS = 80
TENSOR_PASSES = ("earliest", "add_realize", "pm_children")  # the oracle reads in and out
# the steps in pipeline order: a step fed by one that disagreed disagrees as a consequence, so
# only the first failing one of these blames its rules (lowering is checked on its own input)
CHAINED_STEPS = (*TENSOR_PASSES, "schedule")
RTOL = ATOL = 1e-4  # the fuzzer's tolerance: passes may reassociate float arithmetic
SHOWN_SEEDS = 6


@dataclass
class ProgramRun:
    """One fuzzer program: its recorded passes, which rules fired in which step, what failed."""

    seed: int
    passes: list[PassRecord]
    firings: list[Firing] = field(default_factory=list)  # those that changed a node
    fired: dict[str, set[str]] = field(default_factory=dict)  # rule location -> steps
    failures: dict[str, str] = field(default_factory=dict)  # step -> what disagreed

    def blamed(self) -> dict[str, str]:
        """The failures that are not consequences of an earlier one: the first failing step
        of the chain, and lowering."""
        first = next((s for s in CHAINED_STEPS if s in self.failures), None)
        return {s: m for s, m in self.failures.items() if s == first or s == "lower"}


def step_of(pass_name: str) -> str:
    """The checked step a pass belongs to (see the module docstring)."""
    if pass_name in TENSOR_PASSES or pass_name == "lower":
        return pass_name
    if pass_name == "opt":  # the kernel optimizer runs inside lower_kernel: checked with it
        return "lower"
    return "schedule"


# ---------------------------------------------------------------------- running one program
def run_program(seed: int) -> ProgramRun:
    """Program `seed` through both schedulers and the kernel interpreter, every pass recorded,
    then each recorded kernel lowered; every step compared."""
    from rulegrad.tools.fuzz import generate, mismatch

    prog = generate(seed)
    errors: list[str] = []

    def go() -> None:
        try:
            # both schedulers, so kernelize.rules' rules fire too (and must agree)
            err = mismatch(prog, "interp", scheduler="both")
        except Exception as e:  # noqa: BLE001 - a crash in the oracle path is a finding too
            err = f"{type(e).__name__}: {e}"
        errors.extend([err] if err is not None else [])

    return record(go, seed, errors)


def record(build: Callable[[], Any], seed: int = 0, errors: list[str] | None = None
           ) -> ProgramRun:
    """Run `build` (which schedules something) with every pass recorded, lower the kernels it
    made (recorded too), and check each step; `errors` are what `build` found end to end."""
    from rulegrad.backends.c.lower import lower_kernel

    # (the schedule cache steps aside while tracing is on: every program runs its passes)
    with tracing(copy_ctx=True) as t:
        build()
        kernels = _kernels(t.passes)
        lowered: list[UOp | str] = []
        for k in kernels:
            try:
                lowered.append(lower_kernel(k.ast))
            except Exception as e:  # noqa: BLE001
                lowered.append(f"{type(e).__name__}: {e}")
    run = ProgramRun(seed, t.passes)
    for f, owner in zip(t.firings, _owners(t.passes, len(t.firings))):
        if f.rule is not None and f.after is not f.before and owner >= 0:
            run.firings.append(f)
            run.fired.setdefault(f.rule.location, set()).add(step_of(t.passes[owner].name))
    if errors:
        run.failures["schedule"] = errors[0]
    for p in run.passes:
        if p.name in TENSOR_PASSES and p.name not in run.failures:
            bad = _tensor_step(p)
            if bad is not None:
                run.failures[p.name] = bad
    rng = np.random.default_rng(abs(seed))  # negative: a program outside the fuzzer
    for k, low in zip(kernels, lowered):
        bad = low if isinstance(low, str) else _lower_step(k, low, rng)
        if bad is not None and "lower" not in run.failures:
            run.failures["lower"] = f"kernel {k.name}: {bad}"
    return run


def _owners(passes: list[PassRecord], n: int) -> list[int]:
    """For each firing, the index of the innermost pass that made it: a pass's firings are
    `firings[start:end]`, which include those of passes its helpers ran (`sym` inside
    `pm_rangeify`), and a pass is recorded when it ends, so inner passes come first."""
    owner = [-1] * n
    for i, p in enumerate(passes):
        for k in range(p.start, min(p.end, n)):
            if owner[k] < 0:
                owner[k] = i
    return owner


def _kernels(passes: list[PassRecord]) -> list[Any]:
    """The kernels (`Kernel`: name, ast, bufs) the schedule made, from split_kernels' output."""
    out = []
    for p in passes:
        if p.name == "split_kernels":
            out += [n.arg for n in toposort(p.after) if n.op is Ops.KERNEL]
    return out


def _close(got: Any, want: Any, rtol: float = RTOL) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if got.dtype.kind in "fc" or want.dtype.kind in "fc":
        return bool(np.allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True))
    return bool(np.array_equal(got, want))


def _tensor_step(p: PassRecord) -> str | None:
    """The oracle on a tensor-level pass's input and output; None when they agree."""
    from rulegrad.backends.oracle import evaluate

    if any(n.op is Ops.ASSIGN for n in toposort(p.before)):
        return None  # the oracle's ASSIGN writes the buffer: evaluating twice is not pure
    try:
        want = evaluate(list(_plain(p.before).src))
    except Exception:  # noqa: BLE001 - an input the oracle cannot read checks nothing
        return None
    try:
        got = evaluate(list(_plain(p.after).src))
    except Exception as e:  # noqa: BLE001
        return f"the oracle cannot evaluate the output: {type(e).__name__}: {e}"
    for i, (g, w) in enumerate(zip(got, want)):
        if not _close(g, w):
            return f"output {i} differs from the input's value"
    return None


class _Unwrap:
    """A matcher: CHILD(CHILDREN(x)) -> x (pm_children's wrappers, each its source's value)."""

    @staticmethod
    def rewrite(n: UOp, ctx: Any = None) -> UOp | None:
        if n.op is Ops.CHILD and n.src and n.src[0].op is Ops.CHILDREN:
            return n.src[0].src[0]
        return None


def _plain(sink: UOp) -> UOp:
    """The graph without pm_children's wrappers, for the oracle (not traced: not a pass)."""
    if not any(n.op is Ops.CHILD for n in toposort(sink)):
        return sink
    with tracing(limit=0):
        return graph_rewrite(sink, _Unwrap(), name="unwrap_children")


def _lower_step(kernel: Any, lowered: UOp, rng: np.random.Generator) -> str | None:
    """One kernel before and after lowering, by the kernel interpreter on the same inputs."""
    from rulegrad.backends.kernel_interp import run_kernel

    inputs = [_random(b.size, b.dtype.np, rng) for b in kernel.bufs]
    before, after = [a.copy() for a in inputs], [a.copy() for a in inputs]
    try:
        run_kernel(kernel.ast, before)
    except Exception:  # noqa: BLE001 - an AST the interpreter cannot run checks nothing
        return None
    try:
        run_kernel(lowered, after)
    except Exception as e:  # noqa: BLE001
        return f"the lowered kernel does not run: {type(e).__name__}: {e}"
    rtol = 1e-2 if before[0].dtype == np.float16 else RTOL
    return None if _close(after[0], before[0], rtol) else "output differs after lowering"


def _random(size: int, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dtype.kind == "f":
        return rng.standard_normal(size).astype(dtype)
    if dtype.kind == "b":
        return rng.random(size) < 0.5
    return rng.integers(-5, 6, size).astype(dtype)


# ---------------------------------------------------------------------- many programs
@dataclass
class PassDiff:
    """The programs of one run, and per rule what they say about it."""

    programs: list[ProgramRun]
    seconds: float = 0.0

    def fired_on(self, location: str) -> list[int]:
        return [p.seed for p in self.programs if location in p.fired]

    def suspects(self) -> dict[str, list[tuple[int, str, str]]]:
        """The most suspect rules of each failing step: location -> [(seed, step, message)].

        Ochiai: a rule scores failed / sqrt(all failed * (failed + passed)), counting the steps
        (program, step) it fired in; in each failing step its top scorers are named."""
        failed: dict[str, int] = {}
        passed: dict[str, int] = {}
        total_failed = 0
        for p in self.programs:
            blamed = p.blamed()
            total_failed += len(blamed)
            for loc, steps in p.fired.items():
                for s in steps:
                    if s in p.failures and s not in blamed:
                        continue  # a consequence: says nothing about the rules there
                    counter = failed if s in blamed else passed
                    counter[loc] = counter.get(loc, 0) + 1
        out: dict[str, list[tuple[int, str, str]]] = {}
        for p in self.programs:
            for step, msg in p.blamed().items():
                here = [loc for loc, steps in p.fired.items() if step in steps]
                if not here:
                    continue
                score = {loc: failed[loc] / math.sqrt(total_failed * (failed[loc] +
                                                                      passed.get(loc, 0)))
                         for loc in here}
                best = max(score.values())
                top = [loc for loc in here if score[loc] == best]
                tied = f" (tied with {len(top) - 1} other rules)" if len(top) > 1 else ""
                for loc in top:
                    out.setdefault(loc, []).append((p.seed, step, msg + tied))
        return out

    def verdict(self, location: str, alone: Callable[[], Any] | None = None
                ) -> tuple[str, str]:
        """(verdict, detail) for the rule at `location` ("file:line"): `refuted` when it is
        among the most suspect rules of a step that disagreed; `unknown` when it fired only
        with such a step or never fired (nor, given its matcher `alone`, changed a pass's
        context); else `structural` (it fired, and every step it fired in agreed)."""
        blamed = self.suspects().get(location)
        if blamed:
            seed, step, msg = blamed[0]
            more = f" (and {len(blamed) - 1} more)" if len(blamed) > 1 else ""
            return "refuted", f"{_name(seed)}: step {step} disagreed: {msg}{more}"
        seeds = self.fired_on(location)
        bad = [(p.seed, s) for p in self.programs for s in p.fired.get(location, ())
               if s in p.failures]
        if bad:
            return "unknown", (f"fired where {_name(bad[0][0])}'s step {bad[0][1]} disagreed "
                               "(other rules are more suspect)")
        n = len(self.programs)
        if seeds:
            return "structural", f"fired on {len(seeds)} of {n} programs ({_seeds(seeds)})"
        if alone is not None:
            ran = self.changed_context(location, alone)
            failing = [p.seed for p in self.programs if p.seed in ran and p.blamed()]
            if failing:
                return "unknown", (f"filled the pass context on {_name(failing[0])}, which "
                                   "disagreed (it returns no node, so it cannot be ranked)")
            if ran:
                return "structural", (f"filled the pass context on {len(ran)} of {n} programs "
                                      f"({_seeds(ran)}; it returns no node)")
        seeds = sorted(p.seed for p in self.programs if p.seed >= 0)
        span = f" (seeds {seeds[0]}-{seeds[-1]} and {n - len(seeds)} more)" if seeds else ""
        return "unknown", f"never fired on {n} programs{span}"

    def unreachable_verdict(self, location: str) -> tuple[str, str]:
        """(verdict, detail) for a rule marked `# check: unreachable`: it must fire on none of
        the programs (it reports a bug in its own set)."""
        fired = self.fired_on(location)
        if fired:
            names = ", ".join(_name(s) for s in fired[:SHOWN_SEEDS])
            more = ", ..." if len(fired) > SHOWN_SEEDS else ""
            return "refuted", f"declared unreachable, but fired on {names}{more}"
        n = len(self.programs)
        return "structural", f"unreachable as declared: never fired on {n} programs"

    def changed_context(self, location: str, alone: Callable[[], Any]) -> list[int]:
        """The seeds on which the rule, replayed alone on a recorded pass that contains it,
        changed that pass's context."""
        seeds = []
        matcher = None
        for p in self.programs:
            for run in p.passes:
                if run.ctx_before is None or location not in _locations(run.matcher):
                    continue
                matcher = matcher or alone()
                ctx = copy.deepcopy(run.ctx_before)
                try:
                    graph_rewrite(run.before, matcher, ctx=ctx, bottom_up=run.bottom_up)
                except Exception:  # noqa: BLE001 - the pass ran it in the company of others
                    continue
                if not _same_state(ctx, run.ctx_before):
                    seeds.append(p.seed)
                    break
        return seeds


def _same_state(a: Any, b: Any) -> bool:
    """Whether two contexts hold the same values (a dataclass compares its fields; another
    object its attributes; both are copies, so identity says nothing)."""
    if dataclasses.is_dataclass(a) or not hasattr(a, "__dict__"):
        return a == b
    return vars(a) == vars(b)


def _locations(matcher: Any) -> set[str]:
    return {r.location for r in getattr(matcher, "rules", ())}


def _name(seed: int) -> str:
    return f"seed {seed}" if seed >= 0 else EXTRA_PROGRAMS[seed][0]


def _seeds(seeds: list[int]) -> str:
    fuzz = [s for s in seeds if s >= 0]
    shown = [str(s) for s in fuzz[:SHOWN_SEEDS]] + (["..."] if len(fuzz) > SHOWN_SEEDS else [])
    shown += [_name(s) for s in seeds if s < 0]
    word = "seed " if len(fuzz) == 1 else "seeds " if fuzz else ""
    return f"{word}{', '.join(shown)}; every step agreed"


# ---------------------------------------------------------------------- beyond the fuzzer
# What the fuzzer does not generate yet, as fixed programs compared with numpy itself: each
# returns what went wrong, or None. Their ProgramRuns have negative seeds.
def _assign_program() -> str | None:
    from rulegrad.runtime.tensor import Tensor

    w = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)).realize()
    w.assign(w.permute((1, 0)).reshape((2, 3)) * 2 + 1).realize()
    want = np.arange(6, dtype=np.float32).reshape(2, 3).T.reshape(2, 3) * 2 + 1
    return None if np.array_equal(w.numpy(), want) else f"assign: {w.numpy()} != {want}"


def _half_sum_program() -> str | None:
    from rulegrad.runtime.tensor import Tensor

    half = np.linspace(-2, 2, 16, dtype=np.float16).reshape(4, 4)
    got = Tensor(half).sum(axis=1).numpy().astype(np.float32)
    want = half.astype(np.float32).sum(axis=1)
    return None if np.allclose(got, want, atol=1e-2) else f"float16 sum: {got} != {want}"


def _empty_sum_program() -> str | None:
    from rulegrad.runtime.tensor import Tensor

    # a sum over an empty axis is the constant 0; realized and read again, its buffer of a
    # constant is read as the constant itself (const_buffer)
    x = np.zeros((2, 0), np.float32)
    total = Tensor(x).sum(axis=1)
    twice = total + total
    Tensor.realize(total, twice)
    want = x.sum(axis=1)
    if np.array_equal(total.numpy(), want) and np.array_equal(twice.numpy(), want + want):
        return None
    return f"empty sum: {total.numpy()}, {twice.numpy()} != {want}"


def _attention_program() -> str | None:
    """An attention head: its scores are a kernel-local array (rangeify.rules' local_array)."""
    from rulegrad.runtime.tensor import Tensor

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 5, 3)).astype(np.float32) for _ in range(3))
    got = ((Tensor(q) @ Tensor(k).transpose(1, 2)) * 0.5).softmax(-1) @ Tensor(v)
    s = (q @ k.transpose(0, 2, 1)) * np.float32(0.5)
    e = np.exp(s - s.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True) @ v
    ok = np.allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
    return None if ok else f"attention: {got.numpy()} != {want}"


def _kernelize_program() -> str | None:
    """The kernelize scheduler's features, which the fuzzer's programs do not ask for: fuse(),
    the buffer limit (MAX_KERNEL_BUFFERS) and a fused arange-like reduction (FUSE_ARANGE)."""
    from rulegrad.runtime.tensor import Tensor

    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    ins = [a[0] + i for i in range(6)]
    flags = {"MAX_KERNEL_BUFFERS": "4", "FUSE_ARANGE": "1"}
    with env_set(flags):
        soft = Tensor(a).softmax(-1).fuse()
        total = Tensor(ins[0])
        for x in ins[1:]:
            total = total + Tensor(x)
        # a sum of padded ones: 3 or 4 per row, read through an expand
        ramp = Tensor.ones(3, 3).pad(((0, 0), (0, 1))).sum(1, keepdim=True).expand(3, 4) * a
        Tensor.realize(soft, total, ramp, scheduler="kernelize")
    e = np.exp(a - a.max(-1, keepdims=True))
    wants = (e / e.sum(-1, keepdims=True), sum(ins), 3 * a)
    for name, t, want in zip(("softmax", "sum", "ramp"), (soft, total, ramp), wants):
        if not np.allclose(t.numpy(), want, rtol=1e-5, atol=1e-6):
            return f"kernelize {name}: {t.numpy()} != {want}"
    return None


def _pool_program() -> str | None:
    """3x3 pooling windows at stride 2, whose index arithmetic symbolic.rules' mod_coeff
    makes affine (a power-of-two row read at a window's offset: the fuzzer rarely makes one)."""
    from rulegrad.runtime.tensor import Tensor

    x = np.linspace(-3, 3, 2 * 9 * 32, dtype=np.float32).reshape(1, 2, 9, 32)
    mx, avg = Tensor(x).max_pool2d(kernel_size=3, stride=2), Tensor(x).avg_pool2d(3, stride=2)
    Tensor.realize(mx, avg)
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    wants = (win.max(axis=(-2, -1)), win.mean(axis=(-2, -1)))
    for name, t, want in zip(("max pool", "avg pool"), (mx, avg), wants):
        if not np.allclose(t.numpy(), want, rtol=1e-5, atol=1e-6):
            return f"{name}: {t.numpy()} != {want}"
    return None


def _product_program() -> str | None:
    """A matmul and a convolution large enough for opt.rules' pack_store (at least 32K
    multiply-adds: the fuzzer's programs are smaller), and an integer matmul for its
    interchange_store (packing takes float sums only; the attention program's output sum,
    interchange's before the flash kernel, is flash_store's now)."""
    from rulegrad.runtime.tensor import Tensor

    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((20, 40), np.float32), rng.standard_normal((40, 48), np.float32)
    x = rng.standard_normal((2, 4, 12, 12), np.float32)
    w = rng.standard_normal((16, 4, 3, 3), np.float32)
    ia, ib = rng.integers(-9, 9, (8, 12), np.int32), rng.integers(-9, 9, (12, 32), np.int32)
    mm, conv, imm = Tensor(a) @ Tensor(b), Tensor(x).conv2d(Tensor(w)), Tensor(ia) @ Tensor(ib)
    Tensor.realize(mm, conv, imm)
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    wants = (a @ b, np.einsum("nchwyx,ocyx->nohw", win, w), ia @ ib)
    for name, t, want in zip(("matmul", "conv2d", "int matmul"), (mm, conv, imm), wants):
        if not np.allclose(t.numpy(), want, rtol=1e-4, atol=1e-4):
            return f"{name}: {t.numpy()} != {want}"
    return None


def _full_reduce_program() -> str | None:
    """Full reductions of 2M values, past opt.rules' thread_reduce threshold (two threads' shares
    of PARALLEL_MIN_WORK each: the fuzzer's programs are smaller), one of a prime length
    (split_reduce's blocks and tail); and an exp of 2048 rows of those values, past
    PARALLEL_MIN_WORK (opt.rules' parallel_loops: the fuzzer's row programs are short rows,
    whose passes add up to less)."""
    from rulegrad.runtime.tensor import Tensor

    x = np.linspace(0, 1, 1 << 21, dtype=np.float32)  # no cancellation: a sum's order shows little
    p = np.linspace(0, 1, 2097169, dtype=np.float32)  # a prime past 2^21
    total, top, prime = Tensor(x).sum(), Tensor(x).max(), Tensor(p).sum()
    rows = Tensor(x.reshape(2048, 1024)).exp()
    Tensor.realize(total, top, prime, rows)
    for name, t, want in (("sum", total, x.sum()), ("max", top, x.max()),
                          ("prime sum", prime, p.sum()),
                          ("exp", rows, np.exp(x.reshape(2048, 1024)))):
        if not np.allclose(t.numpy(), want, rtol=1e-4):
            return f"full {name}: {t.numpy()} != {want}"
    return None


def _split_reduce_program() -> str | None:
    """A max and a sum over the first and last axes of (1021, 3, 2, 33): the prime first axis
    is split into partials fused back into one kernel, a reduce of a reduce, which opt.rules'
    unnest_reduce makes one with the contiguous axis innermost (the fuzzer's reduces are
    smaller than a split)."""
    from rulegrad.runtime.tensor import Tensor

    # (no cancellation, as the full reductions': a sum's order shows little)
    x = np.linspace(0, 1, 1021 * 3 * 2 * 33, dtype=np.float32).reshape(1021, 3, 2, 33)
    top, total = Tensor(x).max(axis=(0, 3)), Tensor(x).sum(axis=(0, 3))
    Tensor.realize(top, total)
    wide = x.astype(np.float64)  # (a float32 sum of 67,000 values: within 1e-6 of their sum
    for name, t, want in (("max", top, x.max(axis=(0, 3))),  # of magnitudes, any order)
                          ("sum", total, wide.sum(axis=(0, 3)))):
        if not np.allclose(t.numpy(), want, rtol=0, atol=1e-6 * np.abs(wide).sum()):
            return f"split {name}: {t.numpy()} != {want}"
    return None


def _few_rows_program() -> str | None:
    """A sum and a max of 3 rows of a prime length (349529) and a sum of 3 rows of 350000, past
    PARALLEL_MIN_WORK: 3 rows share 2 threads unevenly, so rangeify.rules' split_tail splits the
    prime rows into parts and a tail and split_reduceop computes the partials apart (the
    fuzzer's reduces are smaller than a split, its drawn instances at most 2**17 values)."""
    from rulegrad.runtime.tensor import Tensor

    p = np.linspace(0, 1, 3 * 349529, dtype=np.float32).reshape(3, 349529)
    d = np.linspace(0, 1, 3 * 350000, dtype=np.float32).reshape(3, 350000)
    p[1, -1] = 2.0  # the max of a row in its tail
    total, top, even = Tensor(p).sum(-1), Tensor(p).max(-1), Tensor(d).sum(-1)
    Tensor.realize(total, top, even)
    for name, t, want in (("sum", total, p.astype(np.float64).sum(-1)), ("max", top, p.max(-1)),
                          ("even sum", even, d.astype(np.float64).sum(-1))):
        if not np.allclose(t.numpy(), want, rtol=1e-4):
            return f"few rows {name}: {t.numpy()} != {want}"
    return None


def _scan_program() -> str | None:
    """Scans past unroll's windows (opt.rules' scan_store: one running accumulator), along
    the rows, down the columns and along a middle axis, a NaN and a -0.0 among their values."""
    from rulegrad.runtime.tensor import Tensor

    x = np.linspace(-2, 2, 3 * 19 * 23, dtype=np.float32).reshape(3, 19, 23)
    x[1, 5, 7], x[2, 0, 0] = np.nan, -0.0
    outs = [(Tensor(x).cumsum(2), np.cumsum(x, 2)), (Tensor(x).cumprod(1), np.cumprod(x, 1)),
            (Tensor(x).cummax(0)[0], np.maximum.accumulate(x, 0))]
    Tensor.realize(*(t for t, _ in outs))
    for t, want in outs:
        if not np.allclose(t.numpy(), want, rtol=1e-5, atol=1e-6, equal_nan=True):
            return f"scan: {t.numpy()} != {want}"
    return None


def _padding_reduce_program() -> str | None:
    """Int sums and products over padding only (sym's add_zero and mul_zero keep their
    update acc + 0, acc * 0: a reduce the renderer prints), of rows and of columns."""
    from rulegrad.runtime.tensor import Tensor

    x = np.arange(24, dtype=np.int32).reshape(4, 6) % 7 - 3
    p = np.pad(x, ((1, 1), (1, 1)))
    rows, cols = ((0, 1), (0, 8)), ((0, 6), (0, 1))
    outs = [(Tensor(x).pad(((1, 1), (1, 1))).shrink(r), p[r[0][0]:r[0][1], r[1][0]:r[1][1]])
            for r in (rows, cols)]
    outs = [(t.sum(a), w.sum(a)) for t, w in outs for a in (0, 1)] + \
        [(t.prod(a), w.prod(a)) for t, w in outs for a in (0, 1)]
    Tensor.realize(*(t for t, _ in outs))
    for t, want in outs:
        if not np.array_equal(t.numpy(), want):
            return f"padding reduce: {t.numpy()} != {want}"
    return None


def _row_reduce_program() -> str | None:
    """Rows of 100 values (opt.rules' vector_reduce: blocks of vectors, the whole vectors left,
    the last values), a NaN in one row: a softmax, and a max and a sum along the rows; a
    softmax down the columns (rangeify.rules' recip_column: 1 / s once per column); a
    softmax over 19 rows of 5 (opt.rules' rows_across: rows across vector lanes); and a
    log_softmax over 9 rows of 33 (opt.rules' block_rows: its passes over blocks of rows)."""
    from rulegrad.runtime.tensor import Tensor

    x = np.linspace(-3, 3, 300, dtype=np.float32).reshape(3, 100)
    x[1, 57] = np.nan
    s = np.linspace(-4, 4, 95, dtype=np.float32).reshape(19, 5)
    s[3, 2] = np.nan
    sm, top, total = Tensor(x).softmax(-1), Tensor(x).max(-1), Tensor(x).sum(-1)
    col, short = Tensor(x).softmax(0), Tensor(s).softmax(-1)
    b = np.linspace(-5, 5, 9 * 33, dtype=np.float32).reshape(9, 33)
    b[4, 7] = np.inf
    blocked = Tensor(b).log_softmax(-1)
    Tensor.realize(sm, top, total, col, short, blocked)
    e, e0 = np.exp(x - x.max(-1, keepdims=True)), np.exp(x - x.max(0, keepdims=True))
    es = np.exp(s - s.max(-1, keepdims=True))
    with np.errstate(invalid="ignore"):
        bs = b - b.max(-1, keepdims=True)
        bs = bs - np.log(np.exp(bs).sum(-1, keepdims=True))
    for name, t, want in (("softmax", sm, e / e.sum(-1, keepdims=True)), ("max", top, x.max(-1)),
                          ("sum", total, x.sum(-1)), ("column softmax", col, e0 / e0.sum(0)),
                          ("short-row softmax", short, es / es.sum(-1, keepdims=True)),
                          ("row-blocked log_softmax", blocked, bs)):
        if not np.allclose(t.numpy(), want, rtol=1e-5, atol=1e-6, equal_nan=True):
            return f"row {name}: {t.numpy()} != {want}"
    return None


def _norm_linear_program() -> str | None:
    """A layernorm, then a linear, relu, linear and softmax in one kernel (the demo's MLP
    block, flash_store's rows without an output product), and for one row (separate kernels,
    interchanged): opt.rules' stage_operands reads the normalized row from an array filled once,
    not once per column (the fuzzer makes no product whose operand is arithmetic)."""
    from rulegrad.runtime.tensor import Tensor

    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((24, 40), np.float32), rng.standard_normal((40, 5), np.float32)
    for rows in (6, 1):
        x = rng.standard_normal((rows, 24), np.float32)
        mu = Tensor(x).mean(axis=1, keepdim=True)
        d = Tensor(x) - mu
        n = d / ((d * d).mean(axis=1, keepdim=True) + 1e-5) ** 0.5
        got = ((n @ Tensor(w1)).relu() @ Tensor(w2)).softmax().numpy()
        dn = x - x.mean(1, keepdims=True)
        z = np.maximum((dn / np.sqrt((dn * dn).mean(1, keepdims=True) + 1e-5)) @ w1, 0) @ w2
        e = np.exp(z - z.max(-1, keepdims=True))
        want = e / e.sum(-1, keepdims=True)
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            return f"norm linear, {rows} rows: {got} != {want}"
    return None


def _transpose_program() -> str | None:
    """An elementwise transposed output of prime sizes (opt.rules' transpose_store: the outer
    loop its reads are contiguous along in blocks, innermost; the fuzzer's programs transpose
    only into a reduce)."""
    from rulegrad.runtime.tensor import Tensor

    x = np.linspace(-2, 2, 2 * 601 * 37, dtype=np.float32).reshape(2, 601, 37)
    got = (Tensor(x).transpose(1, 2) * 2 + 1).numpy()
    want = x.transpose(0, 2, 1) * 2 + 1
    return None if np.array_equal(got, want) else f"transpose: {got} != {want}"


def _libm_compare_program() -> str | None:
    """A cosine compared with its own max and with a transposed view of itself
    (rangeify.rules' libm_stored: stored once; the fuzzer compares no value with itself)."""
    from rulegrad.runtime.tensor import Tensor

    x = np.linspace(0.3, 3.0, 5 * 7, dtype=np.float32).reshape(5, 7)
    c = Tensor(x).cos()
    top, outer = c == c.max(0), c[:, :5] <= c[:, :5].T
    Tensor.realize(top, outer)
    w = np.cos(x)
    if np.array_equal(top.numpy(), w == w.max(0)) and \
            np.array_equal(outer.numpy(), w[:, :5] <= w[:, :5].T):
        return None
    return f"libm compare: {top.numpy()}, {outer.numpy()}"


EXTRA_PROGRAMS: dict[int, tuple[str, Callable[[], str | None]]] = {
    -1: ("the assign program", _assign_program),
    -2: ("the float16 sum program", _half_sum_program),
    -3: ("the empty-sum program", _empty_sum_program),
    -4: ("the attention program", _attention_program),
    -5: ("the kernelize features program", _kernelize_program),
    -6: ("the pooling program", _pool_program),
    -7: ("the products program", _product_program),
    -8: ("the full reduction program", _full_reduce_program),
    -9: ("the row reduction program", _row_reduce_program),
    -10: ("the norm-linear program", _norm_linear_program),
    -11: ("the transpose program", _transpose_program),
    -12: ("the scan program", _scan_program),
    -13: ("the split reduction program", _split_reduce_program),
    -14: ("the padding reduce program", _padding_reduce_program),
    -15: ("the libm compare program", _libm_compare_program),
    -16: ("the few long rows program", _few_rows_program),
}


def run_extra(seed: int) -> ProgramRun:
    """Extra program `seed` (negative), run by the kernel interpreter, recorded and checked."""

    errors: list[str] = []
    with env_set({"RULEGRAD_BACKEND": "interp"}):
        return record(lambda: errors.extend(e for e in [EXTRA_PROGRAMS[seed][1]()] if e),
                      seed, errors)


def run_programs(seeds: Iterable[int]) -> PassDiff:
    """Fuzzer programs for seeds >= 0, the extra programs for negative ones."""
    t0 = time.monotonic()
    out = PassDiff([run_program(s) if s >= 0 else run_extra(s) for s in seeds])
    out.seconds = time.monotonic() - t0
    return out


_cache: dict[tuple[int, ...], PassDiff] = {}


def rule_verdict(location: str, name: str, alone: Callable[[], Any], seed: int = 0
                 ) -> tuple[str, str, str, int]:
    """(method, verdict, detail, kernels or programs) for a rule `rulegrad check` cannot
    prove: an optimizer rule (rules/opt*.rules) is run, its kernels in C before and after it
    (generator/optdiff.py: method `kernel`); any other gets this module's verdict (method
    `structural`)."""
    from . import optdiff

    if location in optdiff.optimizer_rules():
        method, verdict, detail, n = optdiff.verdict(location, name, alone, seed)
        return method, verdict, detail, n
    verdict, detail = passdiff(seed).verdict(location, alone)
    return "structural", verdict, detail, 0


def passdiff(seed: int = 0, n: int = DEFAULT_PROGRAMS) -> PassDiff:
    """Fuzzer programs seed .. seed+n-1 and the extra programs, run once per process
    (`rulegrad check` asks once per rule)."""
    key = (*range(seed, seed + n), *sorted(EXTRA_PROGRAMS, reverse=True))
    if key not in _cache:
        _cache[key] = run_programs(key)
    return _cache[key]
