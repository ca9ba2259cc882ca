"""Mixed precision through the optimizer's fused paths (issue 31, item 1): programs whose values
change dtype on the way (float32 scores scaled by a numpy float64 scalar, so the softmax and
the output product are float64; float64 scores cast to float32 for the output; int and
float16 operands of float products and reductions) on the C backend, under both schedulers,
against numpy at the tolerance of the least precise dtype in the program.

The flash kernel (rules/flash_helpers.py, backends/c/flash.py) used to compute every product
of a head in the output's dtype: float32 scores of a float64 softmax were packed and tiled as
float64 and called float32 blocks with float64 panels (NaN, or errors up to 4). Each local
product now has its own dtype and panel width; float32 attention stays on the flash path, and
so do the mixed heads (asserted below)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel

# the error allowed per least precise float dtype of a program, relative to its largest value
TOL = {"float16": 3e-2, "float32": 1e-4, "float64": 1e-10}
SCHEDULERS = ["rangeify", "kernelize"]


@pytest.fixture(params=SCHEDULERS)
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


def data(shape: tuple[int, ...], dt: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dt).kind in "iu":
        low = -5 if np.dtype(dt).kind == "i" else 0
        return rng.integers(low, 6, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def check(t: Tensor, ref: np.ndarray, *dts: str) -> None:
    """t's value is numpy's `ref` (computed in float64 from the same inputs and roundings), its
    dtype numpy's for the same program, within the tolerance of the least precise of `dts`."""
    got = t.numpy()
    assert got.shape == ref.shape
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, ref)
        return
    assert not np.isnan(got).any(), f"NaN in {np.isnan(got).sum()} of {got.size} values"
    tol = max(TOL[str(np.dtype(d))] for d in (*dts, got.dtype) if np.dtype(d).kind == "f")
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64)).max()
    assert err <= tol * (1 + np.abs(ref).max()), f"error {err:.3g} at tolerance {tol:.0e}"


def last_actions(t: Tensor) -> list[str]:
    (item,) = t.schedule()
    return actions(optimize_kernel(lower_only(item.ast)))


# tiny, prime and larger heads (queries, keys, head size)
HEADS = [(6, 6, 4), (7, 13, 5), (17, 31, 19), (64, 64, 16), (96, 128, 64)]
# q, k, v dtypes and the scale (a numpy scalar is a strong type: numpy 2's promotion)
MIXES = [
    ("float32", "float32", "float32", np.float64(1 / np.sqrt(8))),  # the program
    ("float32", "float32", "float32", np.float32(0.35)),
    ("float32", "float32", "float64", np.float32(0.35)),
    ("float64", "float32", "float32", 0.3),
    ("float32", "float64", "float16", np.float64(0.3)),
    ("float16", "float32", "float32", np.float64(0.3)),
    ("float16", "float16", "float16", np.float64(0.3)),
]


@pytest.mark.parametrize("head", HEADS, ids=lambda h: "x".join(map(str, h)))
@pytest.mark.parametrize("mix", MIXES, ids=lambda m: "-".join(map(str, m[:3])) + "-" +
                         type(m[3]).__name__)
def test_attention_mixed_dtypes(head, mix, scheduler):
    n, m, d = head
    dq, dk, dv, s = mix
    q, k, v = data((n, d), dq, 1), data((m, d), dk, 2), data((m, d), dv, 3)
    t = ((Tensor(q) @ Tensor(k).T) * s).softmax(-1) @ Tensor(v)
    scores = (q @ k.T) * s  # numpy's dtypes and roundings up to the scores
    ref = softmax(f64(scores)) @ f64(v)
    assert t.dtype.np == (softmax(scores) @ v).dtype
    check(t, ref, dq, dk, dv)


@pytest.mark.parametrize("head", [(6, 6, 4), (17, 31, 19), (40, 64, 32)],
                         ids=lambda h: "x".join(map(str, h)))
@pytest.mark.parametrize("scores,out", [("float64", "float32"), ("float32", "float64"),
                                        ("float16", "float32"), ("float32", "float16")])
def test_attention_cast_between_products(head, scores, out, scheduler):
    """Batched heads whose scores and output products have different dtypes either way."""
    n, m, d = head
    q, k, v = data((2, n, d), scores, 1), data((2, m, d), scores, 2), data((2, m, d), out, 3)
    t = ((Tensor(q) @ Tensor(k).transpose(-1, -2)) * 0.3).softmax(-1).cast(out) @ Tensor(v)
    p = softmax(f64((q @ k.transpose(0, 2, 1)) * q.dtype.type(0.3)))
    check(t, f64(p.astype(out)) @ f64(v), scores, out)


@pytest.mark.parametrize("block_library", ["1", "0"])
@pytest.mark.parametrize("vector_bytes", ["32", "64"])
def test_mixed_attention_stays_on_the_flash_path(block_library, vector_bytes, monkeypatch):
    """float32 scores of a float64 softmax are still a local product of the flash kernel, as
    float32 panels (twice the columns of the float64 output's); float32 attention is unchanged.
    Blocks called from the library or printed, 256- or 512-bit: numpy's values."""
    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", block_library)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    q, k, v = data((64, 16), "float32", 1), data((64, 16), "float32", 2), data((64, 16),
                                                                                "float32", 3)
    for s in (np.float32(0.25), np.float64(0.25)):
        t = ((Tensor(q) @ Tensor(k).T) * s).softmax(-1) @ Tensor(v)
        flash = [a for a in last_actions(t) if a.startswith("FLASH")]
        assert len(flash) == 1 and "local products over r" in flash[0], flash
        check(t, softmax(f64((q @ k.T) * s)) @ f64(v), "float32")


@pytest.mark.parametrize("size", [(1, 3, 2), (7, 13, 5), (64, 96, 128)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("da,db", [("float32", "float64"), ("float16", "float32"),
                                   ("int8", "float32"), ("int32", "float64"), ("int32", "int32"),
                                   ("float16", "float16")])
def test_products_mixed_dtypes(size, da, db, scheduler):
    """Matrix products of mixed operands (packed, interchanged or plain loops), scaled by a
    float64 scalar and reduced along their rows."""
    n, k, m = size
    a, b = data((n, k), da, 1), data((k, m), db, 2)
    prod = a @ b
    exact = f64(a) @ f64(b) if prod.dtype.kind == "f" else prod
    check(Tensor(a) @ Tensor(b), exact, da, db)
    scaled = (Tensor(a) @ Tensor(b)) * np.float64(0.7)
    check(scaled.sum(-1), (f64(exact) * 0.7).sum(-1), da, db)
    check(scaled.max(-1), (f64(exact) * 0.7).max(-1), da, db)


@pytest.mark.parametrize("shape,axis", [((3,), 0), ((13, 257), 1), ((64, 1024), 0),
                                        ((31, 97, 40), 1), ((1 << 20,), 0)])
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int8", "uint8", "int32"])
def test_reductions_mixed_dtypes(shape, axis, dt, scheduler):
    """Sums, maxes and softmaxes (vector accumulators, threads, interchange, unrolled windows)
    of values scaled by a float64 scalar or multiplied by float32 ones."""
    a, b = data(shape, dt, 1), data(shape[-1:], "float32", 2)
    x = Tensor(a)
    check(x.sum(axis), f64(a).sum(axis), dt)
    check(x.max(axis), a.max(axis), dt)
    check((x * np.float64(0.3)).sum(axis), (f64(a) * 0.3).sum(axis), dt)
    check((x * np.float64(0.3)).max(axis), (f64(a) * 0.3).max(axis), dt)
    check((x * Tensor(b)).sum(axis), (f64(a) * f64(b)).sum(axis), dt, "float32")
    if a.dtype.kind == "f":
        ref = np.moveaxis(softmax(np.moveaxis(f64(a) * 0.3, axis, -1)), -1, axis)
        check((x * np.float64(0.3)).softmax(axis), ref, dt)
