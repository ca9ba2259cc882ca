"""rev61e: review of hunt61 (prod in float64, NaN bits of max/min, symbolic strided views,
checker draws), against numpy and torch."""

from __future__ import annotations

import platform
import re
import subprocess

import numpy as np
import pytest

from rulegrad import Tensor, Variable


@pytest.fixture(params=["c", "interp"])
def each_backend(request, monkeypatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)


# --------------------------------- a strided slice of a symbolic slice: `s[:n][::step]`
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8])
@pytest.mark.parametrize("step", [2, 3, -2])
def test_strided_slice_of_a_symbolic_slice_reads_and_assigns(n, step, each_backend) -> None:
    # the strided slice pads and reshapes n's rows by sizes made at n's bound value (n = 3,
    # step 2: 4 rows as (2, 2, 3)); hunt61's proof over every n in [1, 8] reshaped the mask
    # of n = 1's rows by them and raised numpy's ValueError from reading it, let alone an
    # assign (main read it as a copy)
    a = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    s = Tensor(a.copy()).realize()
    v = s[:Variable("n", 1, 8).bind(n)][::step]
    np.testing.assert_array_equal(v.numpy(), a[:n][::step])
    v.assign(v * 2 + 1).realize()
    want = a.copy()
    want[:n][::step] = want[:n][::step] * 2 + 1
    np.testing.assert_array_equal(s.numpy(), want)



@pytest.mark.parametrize("read", ["numpy", "realize", "none"])
def test_an_unproven_strided_view_read_first_is_refused_not_written_as_a_copy(read,
                                                                              each_backend):
    """`s[:n, ::2]` with n over more values than view_chains proves is no view of s; its assign
    is refused in words. Read first (`v.numpy()`), v held its copy and the assign wrote that,
    leaving s as it was, silently (torch writes s); now it is refused as before the read."""
    from rulegrad.runtime.errors import InvalidArgument

    a = np.arange(2000 * 5, dtype=np.float32).reshape(2000, 5)
    s = Tensor(a.copy()).realize()
    v = s[:Variable("n", 1, 2000).bind(3), ::2]
    if read == "numpy":
        np.testing.assert_array_equal(v.numpy(), a[:3, ::2])
    elif read == "realize":
        v.realize()
    with pytest.raises(InvalidArgument, match="PAD view"):
        v.assign(v * 2 + 1).realize()
    np.testing.assert_array_equal(s.numpy(), a)


def test_a_proven_strided_view_read_first_still_writes_its_buffer(each_backend):
    """The same read of a view the proof covers (n in [1, 40]) stays a view: the assign writes
    s, as numpy's `a[:3, ::2] = ...` does."""
    a = np.arange(40 * 5, dtype=np.float32).reshape(40, 5)
    s = Tensor(a.copy()).realize()
    v = s[:Variable("n", 1, 40).bind(3), ::2]
    v.numpy()
    v.assign(v * 2 + 1).realize()
    want = a.copy()
    want[:3, ::2] = want[:3, ::2] * 2 + 1
    np.testing.assert_array_equal(s.numpy(), want)

# ------------------------------- the cost of the C MAX/MIN that gives numpy's quiet NaN
def _loops(asm: str) -> list[list[str]]:
    """The instructions of each backward jump's loop in gcc's assembly (labels `.L...`)."""
    lines, at, out = asm.split("\n"), {}, []
    for i, line in enumerate(lines):
        if m := re.match(r"^(\.L\w+):", line):
            at[m.group(1)] = i
        elif (m := re.match(r"^\s+j\w+\s+(\.L\w+)", line)) and m.group(1) in at:
            out.append([x for x in lines[at[m.group(1)]:i + 1] if re.match(r"^\s+[a-z]", x)])
    return out


def _instructions_per_max(t: Tensor) -> float:
    """In the loop of t's one kernel holding the most max/min instructions, its instructions
    per max/min instruction, in the assembly gcc makes at the kernel's flags (never timed)."""
    from rulegrad.backends.c import build
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.backends.c.render import render_kernel

    cc = build.compiler()
    if not build.is_gcc(cc):
        pytest.skip("the assembly counted here is gcc's")
    (item,) = t.schedule()
    rk = render_kernel(optimize_kernel(lower_only(item.ast)), "k0")
    # one fixed target's assembly, not the machine's (-march=native): the bounds below were
    # read off an AVX-512 machine, and an AVX2-only one's gcc makes longer loops of the same C
    # (a 3x3 pool 5.1 instructions per max, an elementwise maximum 6.5, on an AMD EPYC)
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the instructions counted here are x86's")
    flags = [("-march=skylake-avx512" if f.startswith("-march=") else f)
             for f in build.cflags(rk.kind) if f != "-fopenmp"] + ["-fopenmp-simd"]
    run = subprocess.run([*cc, *flags, "-DRG_MVEC", "-fPIC", "-S", "-x", "c", "-", "-o", "-"],
                         input=build.full_source([rk]), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loop = max(_loops(run.stdout), key=lambda ins: sum(_is_max(x) for x in ins))
    assert sum(_is_max(x) for x in loop), loop
    return len(loop) / sum(_is_max(x) for x in loop)


def _is_max(line: str) -> bool:
    return bool(re.match(r"^\s+v?(max|min)[ps][sd]\b", line))


_COSTLY = {
    "column max": lambda x: Tensor(x).max(0), "column min": lambda x: Tensor(x).min(0),
    "3x3 max-pool": lambda x: Tensor(x).reshape(1, 1, 257, 128).max_pool2d(3, stride=1),
    "maximum": lambda x: Tensor(x).maximum(Tensor(x) * 0.5),
}


@pytest.mark.parametrize("program", sorted(_COSTLY))
def test_a_nan_propagating_max_costs_what_the_all_ones_or_did(program) -> None:
    # hunt61 wrote the quiet NaN's pick as masks, `(x & y & ~m) | (m & q)`: gcc 12 kept both
    # compares and the masks, a float32 column max's loop 12 instructions per max instruction
    # (3.9 with the all-ones OR before it), a 3x3 pool's 16 (3.7), an elementwise maximum's
    # 6.5 (5.5: two max instructions among 11). As a select: 3.9, 3.7 and 5.5 again
    x = np.random.default_rng(0).uniform(-4, 4, (257, 128)).astype(np.float32)
    x[5, 7] = np.nan
    t = _COSTLY[program](x)
    assert _instructions_per_max(t) <= (6.0 if program == "maximum" else 4.5)
    want = {"column max": lambda: x.max(0), "column min": lambda: x.min(0),
            "maximum": lambda: np.maximum(x, x * np.float32(0.5)),
            "3x3 max-pool": lambda: np.lib.stride_tricks.sliding_window_view(x, (3, 3))
            .max(axis=(2, 3))[None, None]}[program]()
    np.testing.assert_array_equal(t.numpy().view(np.uint32), want.view(np.uint32))
