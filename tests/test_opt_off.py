"""`RULEGRAD_OPT=0` switches the kernel optimizer off (backends/c/opt.py): every kernel is the
plain loop nest it was lowered to, and still gives numpy's answer.

For each program (matmul, softmax, attention, a convolution, reductions along each axis,
mixed dtypes), through the scheduler and C: with the optimizer off, each kernel's optimized
AST is its lowered AST itself, no STORE or SINK carries an action, and the C has no register
block (printed or the block library's) and no threads (`omp parallel`); the answer is numpy's.
(The renderer still prints `omp simd` on a reduce: a decision of its own, issue 32.) With it
on, the same programs do take actions (a packed product, a flash kernel), so the check above
is not vacuous.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import compile_program
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

RNG = np.random.default_rng(7)


def _r(*shape: int, dt: type = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dt)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A valid 2-D convolution (cross-correlation), NCHW x OIHW, by numpy."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", win, w)


def _attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    return (q @ k.transpose(-1, -2) * 0.125).softmax(-1) @ v


def _attention_np(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    return _softmax(q @ np.swapaxes(k, -1, -2) * 0.125) @ v


# name: (inputs, rulegrad program, numpy program)
PROGRAMS = {
    "matmul": ((_r(96, 80), _r(80, 112)), lambda a, b: a @ b, lambda a, b: a @ b),
    "matmul float64": ((_r(64, 70, dt=np.float64), _r(70, 64, dt=np.float64)),
                       lambda a, b: a @ b, lambda a, b: a @ b),
    "softmax": ((_r(33, 1024),), lambda x: x.softmax(-1), _softmax),
    "attention": ((_r(2, 64, 32), _r(2, 64, 32), _r(2, 64, 32)), _attention, _attention_np),
    "conv": ((_r(2, 3, 17, 19), _r(8, 3, 3, 3)), lambda x, w: x.conv2d(w), _conv),
    "sum rows": ((_r(257, 131),), lambda x: x.sum(axis=1), lambda x: x.sum(axis=1)),
    "max columns": ((_r(257, 131),), lambda x: x.max(axis=0), lambda x: x.max(axis=0)),
    "sum middle": ((_r(16, 64, 48),), lambda x: x.sum(axis=1), lambda x: x.sum(axis=1)),
    "full sum": ((_r(1 << 16),), lambda x: x.sum(), lambda x: x.sum()),
    "mixed dtypes": ((_r(48, 40), _r(40, 56, dt=np.float64), _r(56, dt=np.int32)),
                     lambda a, b, c: (a @ b) + c, lambda a, b, c: (a @ b) + c),
}


def _realize(name: str) -> tuple[list, np.ndarray, np.ndarray]:
    """The program's schedule (taken before it runs), its answer, and numpy's."""
    inputs, rg, ref = PROGRAMS[name]
    out = rg(*[Tensor(x) for x in inputs])
    sched = out.schedule()
    assert sched, "nothing to run"
    return sched, out.numpy(), ref(*inputs)


def _actions_taken(sched: list) -> bool:
    """Whether the optimizer changes any kernel of the schedule."""
    return any(optimize_kernel(low := lower_only(item.ast)) is not low for item in sched)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_optimizer_off_gives_numpys_answer_with_plain_loops(monkeypatch, name):
    monkeypatch.setenv("RULEGRAD_OPT", "0")
    sched, got, want = _realize(name)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-4)
    for item in sched:
        low = lower_only(item.ast)
        opt = optimize_kernel(low)
        assert opt is low  # no action at all
        nodes = toposort(opt)  # (a kernel-local array rangeify made stays: it is no action)
        assert all(n.arg is None or isinstance(n.arg, (int, str, tuple)) for n in nodes
                   if n.op in (Ops.STORE, Ops.SINK)), "an action's arg on a STORE or SINK"
    source = compile_program(sched).source
    assert "#pragma omp parallel" not in source  # (the renderer still prints `omp simd`)
    assert "rg_block_" not in source and "fma_f" not in source


def test_the_same_programs_take_actions_with_the_optimizer_on(monkeypatch):
    monkeypatch.delenv("RULEGRAD_OPT", raising=False)
    for name in ("matmul", "attention", "softmax", "conv"):
        sched, got, want = _realize(name)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-4)
        assert _actions_taken(sched), name
    matmul, _, _ = _realize("matmul")
    assert "rg_block_" in compile_program(matmul).source


def test_switching_it_off_and_on_in_one_process_recompiles(monkeypatch):
    """The same graph realized with the optimizer on, off, then on again: a program (or a
    realize plan) compiled under one setting is never replayed under the other."""
    a, b = _r(96, 80), _r(80, 112)
    ta, tb = Tensor(a), Tensor(b)
    sources = []
    for value in ("1", "0", "1"):
        monkeypatch.setenv("RULEGRAD_OPT", value)
        out = ta @ tb
        sources.append(compile_program(out.schedule()).source)
        np.testing.assert_allclose(out.numpy(), a @ b, rtol=2e-5, atol=2e-4)
    assert "rg_block_" in sources[0] and "rg_block_" not in sources[1]
    assert sources[2] == sources[0]


def test_a_bad_value_is_an_error_naming_the_variable(monkeypatch):
    from rulegrad.runtime.env import EnvError

    monkeypatch.setenv("RULEGRAD_OPT", "maybe")
    with pytest.raises(EnvError, match="RULEGRAD_OPT"):
        (Tensor(_r(4, 4)) + 1).numpy()
