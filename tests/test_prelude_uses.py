"""A kernel's prelude and its OpenMP flag come from what its printers built, not from its text.

The prelude defines an integer division, a float-to-int cast, a NaN-propagating OpenMP
reduction, a block's declaration, ... only for a library whose kernels use it
(RenderedKernel.uses: each printer records the name as it prints it), and a kernel is compiled
with -fopenmp when it opens OpenMP threads itself (RenderedKernel.openmp: a Region or a
threaded loop not launched). The oracle is the kernel's text, read here: every function on
demand it names is in `uses` and nothing else is, and `openmp` is whether it holds the pragma.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import prelude, render_kernel
from rulegrad.runtime import target

CC = shutil.which("gcc") or shutil.which("cc")
rng = np.random.default_rng(5)
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _t(*shape, dtype="float32"):
    a = rng.standard_normal(shape) * 9
    return Tensor(a.astype(dtype) if dtype.startswith("float") else (np.abs(a) + 1).astype(dtype))


PROGRAMS = {
    **{f"{dt} //, %, <<, >>, **": lambda dt=dt: (
        (_t(5, 7, dtype=dt) // _t(5, 7, dtype=dt)) + (_t(5, 7, dtype=dt) % _t(5, 7, dtype=dt))
        + (_t(5, 7, dtype=dt) << _t(5, 7, dtype=dt)) + (_t(5, 7, dtype=dt) >> 1)
        + _t(5, 7, dtype=dt) ** 2) for dt in INTS},
    **{f"{src} to {dst}": lambda src=src, dst=dst: _t(6, 11, dtype=src).cast(dst)
       for src in ("float16", "float32", "float64") for dst in ("int8", "uint32", "int64")},
    **{f"{dt} pow": lambda dt=dt: _t(9, 13, dtype=dt) ** _t(9, 13, dtype=dt)
       for dt in ("float16", "float32", "float64")},
    **{f"{dt} {op} down the columns": lambda dt=dt, op=op: getattr(_t(37, 29, dtype=dt), op)(0)
       for dt in ("float32", "float64", "float16") for op in ("max", "min", "sum")},
    "a float16 softmax down the columns (halves widened, rounded)":
        lambda: _t(37, 29, dtype="float16").softmax(0),
    "a threaded max (launched: no OpenMP reduction)": lambda: _t(1 << 21).max(),
    "a threaded float64 min": lambda: _t(2 << 20, dtype="float64").min(),  # (2 region costs)
    "row sums (the block library's)": lambda: _t(33, 1031).sum(1),
    "softmax (exp, vector exp)": lambda: _t(7, 77).softmax(-1),
    "long softmax rows": lambda: _t(16, 1000).softmax(-1),
    "a row max of exps (exp on vectors)": lambda: _t(40, 250).exp().max(-1),
    "a product (blocks)": lambda: _t(96, 160) @ _t(160, 144),
    "batched float64 products": lambda: _t(4, 64, 96, dtype="float64") @ _t(4, 96, 80,
                                                                            dtype="float64"),
    "attention": lambda: (_t(2, 64, 32) @ _t(2, 48, 32).transpose(1, 2)).softmax(-1)
    @ _t(2, 48, 16),
}

# the prelude's functions on demand, as the kernel's text names them (`expf` is bound to the
# block library's rg_expf)
_NAMED = re.compile(r"(?<![\w.])(rg_(?:f2i_\w+|fpow_f\d\d|(?:idiv|mod|shl|shr|pow)_[iu]\d+|"
                    r"(?:block|pack)_[vz]f\d\d\w*|reduce_[a-z]+_f32|vexpn?_f32|f16_f32|f16_bits|round_f16|team)|"
                    r"rg(?:max|min|addz)_f\d\d|expf)\b")

# a 512-bit target's 16-lane values, loads, selects and stores (vexp.WIDE defines them all)
_WIDE = re.compile(r"(?<![\w.])rg_z(?:exp|half|load|sel|set|store)_[fi]32\b")


def _check(t: Tensor) -> None:
    """Each kernel of `t`, optimized and as lowered (plain loops: `omp simd` reductions)."""
    for i, item in enumerate(t.schedule()):
        low = lower_only(item.ast)
        for ast in (optimize_kernel(low), low):
            rk = render_kernel(ast, f"k{i}")
            # (rg_vexpn_f32, the core without its overflow clamp: vexp.VECTOR, as rg_vexp_f32)
            named = {{"expf": "rg_expf", "rg_vexpn_f32": "rg_vexp_f32"}.get(n, n)
                     for n in _NAMED.findall(rk.source)}
            if _WIDE.search(rk.source):  # (16-lane values: vexp.WIDE, named by its exp)
                named.add("rg_zexp_f32")
            assert set(rk.uses) == named, (rk.uses, named)
            assert rk.openmp == ("#pragma omp parallel" in rk.source), rk.choices
            # the prelude of what it uses defines or declares every function it calls
            got = subprocess.run([CC, "-fsyntax-only", "-fopenmp", "-march=native",
                                  "-Werror=implicit-function-declaration", "-x", "c", "-"],
                                 input=prelude(rk.uses) + "\n" + rk.source, text=True,
                                 capture_output=True)
            assert got.returncode == 0, got.stderr[-2000:]


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_uses_and_openmp_are_what_the_kernel_prints(name):
    _check(PROGRAMS[name]())


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("name", ["softmax (exp, vector exp)", "long softmax rows",
                                  "a row max of exps (exp on vectors)", "attention"])
def test_a_512_bit_targets_16_lane_exps_are_in_its_uses(monkeypatch, name):
    # (rules/wide_exps.py: a reduce's pairs of exps, a local row of them, a loop storing them)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    _check(PROGRAMS[name]())


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("dt, op", [("float32", "max"), ("float64", "min"), ("float32", "sum")])
def test_a_threaded_reduce_uses_its_reduction_unless_launched(monkeypatch, dt, op):
    # a loop of 3001 split in 93 blocks of 32 and a tail, the blocks across threads: float32's
    # is launched (render._launched: no OpenMP region, no reduction clause printed), float64's
    # min is an OpenMP region with the prelude's NaN-propagating reduction
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    _check(getattr(_t(3001, dtype=dt), op)())


def test_a_plain_float_kernel_uses_nothing_on_demand():
    (rk,) = [render_kernel(optimize_kernel(lower_only(it.ast)), "k")
             for it in (_t(8, 9) * 2 + 1).schedule()]
    assert rk.uses == () and not rk.openmp
    assert prelude(rk.uses) == prelude(())
