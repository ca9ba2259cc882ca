"""A long run of statements split into functions (render.py's `_segment`) reads every name it
reads from outside, whatever its form: each statement keeps the names it prints as data
(Stmt.form), and a function renames them by identity.

The split renamed the names a regex found in the text (`t<i>`, `acc<i>`, `r<i>`, `p<i>`), and
the C compiler then met a name no function declared: a symbolic size (`var_n`), a local array
(`loc<i>`), a tile's loop variable in a vector accumulator's or a register tile's cell
(`r<i>_u`), a flash tile's scores (`sc<i>`). Each program is checked against numpy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.backends.c import render
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel

RNG = np.random.default_rng(54)


def _affine_chain(t: Tensor, ref: np.ndarray, n: int) -> tuple[Tensor, np.ndarray]:
    for _ in range(n):
        t, ref = t * 0.75 + 0.25, ref * np.float32(0.75) + np.float32(0.25)
    return t, ref


def test_a_run_longer_than_a_segment_reads_a_symbolic_size(monkeypatch):
    """A kernel of a symbolic size whose scalar chain (hoisted out of the loops, beside the
    size's cast) is more than SEGMENT statements: at the default SEGMENT."""
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    x = RNG.standard_normal((64, 5)).astype(np.float32)
    chain = render.SEGMENT + 100
    s, e = _affine_chain(Tensor(np.float32(0.5)), np.float32(0.5), chain)
    for v in (7, 1, 64):
        n = Variable("n", 1, 64).bind(v)
        out = (Tensor(x).shrink(((0, n), None)) * s).sum(0)
        np.testing.assert_allclose(out.numpy(), (x[:v] * e).sum(0), rtol=1e-5, atol=1e-6)


def _softmax() -> tuple[Tensor, np.ndarray]:  # a row's exps in a local array (`loc<i>`)
    a = RNG.standard_normal((37, 300)).astype(np.float32)
    t = Tensor(a)
    e = (t - t.max(1, keepdim=True)).exp()
    r = np.exp(a - a.max(1, keepdims=True))
    return _affine_chain(e / e.sum(1, keepdim=True), r / r.sum(1, keepdims=True), 6)


def _vector_sum() -> tuple[Tensor, np.ndarray]:  # a vector accumulator's cell, `acc[r<i>_u]`
    a = RNG.standard_normal((37, 300)).astype(np.float32)
    t, ref = _affine_chain(Tensor(a).exp(), np.exp(a), 8)
    return t.sum(1), ref.sum(1)


def _vector_max() -> tuple[Tensor, np.ndarray]:
    a = RNG.standard_normal((37, 300)).astype(np.float32)
    t, ref = _affine_chain(Tensor(a), a, 8)
    return t.max(1), ref.max(1)


def _matmul() -> tuple[Tensor, np.ndarray]:  # a register tile's cell, `acc[r<i>_u * 32 + ..]`
    x = RNG.standard_normal((64, 96)).astype(np.float32)
    w = RNG.standard_normal((96, 80)).astype(np.float32)
    return _affine_chain(Tensor(x) @ Tensor(w), x @ w, 8)


def _attention() -> tuple[Tensor, np.ndarray]:  # a flash tile's scores, `(sc<i> + ..)[..]`
    q, k, v = (RNG.standard_normal((2, 64, 32)).astype(np.float32) for _ in range(3))
    s = (Tensor(q) @ Tensor(k).transpose(-1, -2)) * float(1 / np.sqrt(32))
    sr = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(32))
    e = np.exp(sr - sr.max(-1, keepdims=True))
    return _affine_chain(s.softmax(-1) @ Tensor(v), (e / e.sum(-1, keepdims=True)) @ v, 8)


@pytest.mark.parametrize("program", [_softmax, _vector_sum, _vector_max, _matmul, _attention])
def test_short_segments_read_every_form_of_name(monkeypatch, program):
    """SEGMENT = 3: nearly every run of the kernel is split, so every name a statement reads
    is read by some function from outside."""
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setattr(render, "SEGMENT", 3)
    y, ref = program()
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_a_value_read_whole_is_one_argument(monkeypatch):
    """A vector accumulator's cell is one value to the function that reads it (the run is
    split, not printed inline for want of its type)."""
    monkeypatch.setattr(render, "SEGMENT", 3)
    t, _ = _vector_sum()
    items = t.schedule()
    source = render.render_kernel(optimize_kernel(lower_only(items[-1].ast)), "k").source
    calls = [line for line in source.splitlines() if re.match(r"\s+k_s[0-9]+\(", line)]
    assert any(re.search(r"acc[0-9]+\[r[0-9]+_u\]", line) for line in calls), calls
