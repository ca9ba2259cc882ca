"""Review of flash68 (float16 attention as the flash kernel; the causal mask read through float
casts).

flash68 let the flash action take a head whose store's dtype is not its output sum's (a float16
head's float32 sum, rounded once by the store). That also lets a float32 or float64 head whose
output is cast by the store (to an int, to float16, to float64) run as the flash kernel, which
no test had run: its values against numpy's float64 softmax @ v here. And float16 heads with an
inf or a NaN in q, k, v or in an additive mask, through sdpa and written out, both schedulers,
against the numpy reference interpreter (runtime/semantics.py's meaning of each float16 op):
NaN where it is NaN, each value within float16's rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegrad import Tensor, dtypes
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel


def _flash(t: Tensor) -> list[str]:
    return [a for item in t.schedule() for a in actions(optimize_kernel(lower_only(item.ast)))
            if a.startswith("FLASH")]


def _qkv(dt, b: int, h: int, nq: int, nk: int, d: int, seed: int, vscale: float = 1.0):
    rng = np.random.default_rng(seed)
    q, k = (rng.standard_normal((b, h, n, d)).astype(dt) for n in (nq, nk))
    v = (rng.standard_normal((b, h, nk, d)) * vscale).astype(dt)
    return q, k, v


def _reference(q, k, v, keep: np.ndarray | None) -> np.ndarray:
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


# (head dtype, store dtype, causal): the head's output sum cast by the store
CAST_CASES = [(np.float32, dtypes.int32, 1), (np.float32, dtypes.float16, 0),
              (np.float64, dtypes.float32, 1), (np.float32, dtypes.float64, 0),
              (np.float64, dtypes.int8, 0)]


@pytest.mark.parametrize("dt,to,causal", CAST_CASES)
def test_a_head_whose_store_casts_its_output_is_the_flash_kernel(dt, to, causal):
    """sdpa(...).cast(to) of a float32 or float64 head: the flash kernel (flash68 lifted the
    store-dtype refusal for float16 heads; these took the same door), its values numpy's
    float64 ones cast (an int truncated; checked away from integers, where a rounding of the
    sum may cross)."""
    s, d = 61, 24
    q, k, v = _qkv(dt, 1, 2, s, s, d, seed=s + d, vscale=30.0)
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v),
                                                 is_causal=bool(causal)).cast(to)
    assert _flash(out)
    want = _reference(q, k, v, np.tril(np.ones((s, s), dtype=bool)) if causal else None)
    got = out.numpy()
    assert got.dtype == np.dtype(to.name if to.name != "half" else "float16")
    if to.is_float:
        tol = 4e-3 if to is dtypes.float16 or dt == np.float16 else 1e-4
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * 30)
    else:
        far = np.abs(want - np.round(want)) > 1e-3  # (trunc's steps are at the integers)
        assert far.mean() > 0.9
        np.testing.assert_array_equal(got[far], np.trunc(want[far]).astype(got.dtype))


def _both(build, monkeypatch, scheduler: str):
    """build()'s values on the C backend and on the numpy reference interpreter."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    out = []
    for backend in ("c", "interp"):
        monkeypatch.setenv("RULEGRAD_BACKEND", backend)
        out.append(build().numpy())
    return out


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype == np.float16
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3)


S = 29


# (which input, where, the value, the head's mask): non-finite inputs of a float16 head ("window":
# the 5 keys up to the row's, tril & triu, whose key windows the flash kernel visits)
NONFINITE = [("v", (S - 1, 3), np.inf, "sdpa causal"), ("v", (0, 0), np.nan, "window"),
             ("v", (S - 1, 2), -np.inf, "window"), ("k", (5, 1), np.inf, "sdpa causal"),
             ("k", (11, 0), -np.inf, "window"), ("q", (7, 2), np.nan, "sdpa causal"),
             ("mask", (3, 4), np.nan, "sdpa mask"), ("mask", (6, 6), np.inf, "sdpa mask"),
             ("mask", (9, slice(None)), -np.inf, "sdpa mask")]


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("which,at,val,form", NONFINITE)
def test_float16_head_with_a_nonfinite_input_is_the_interpreters(which, at, val, form,
                                                                   scheduler, monkeypatch):
    """A float16 head with an inf or a NaN in q, k, v or its additive mask: the flash kernel
    (rangeify's; kernelize's separate kernels as a check of the same meaning),
    NaN where the interpreter's is and its values elsewhere. An inf or NaN in V at a key some
    rows' masks drop still reaches those rows (+0 * inf is NaN), so the kernel's windows must
    widen to every key there (backends/c/flash.py's `kl`, `kh`)."""
    q, k, v = _qkv(np.float16, 1, 2, S, S, 16, seed=len(form) + at[0])
    mask = np.random.default_rng(at[0]).standard_normal((S, S)).astype(np.float16)
    {"q": q[0, 1], "k": k[0, 1], "v": v[0, 1], "mask": mask}[which][at] = val

    def build() -> Tensor:
        tq, tk, tv = Tensor(q), Tensor(k), Tensor(v)
        if form == "sdpa causal":
            return tq.scaled_dot_product_attention(tk, tv, is_causal=True)
        if form == "sdpa mask":
            return tq.scaled_dot_product_attention(tk, tv, attn_mask=Tensor(mask))
        sc = tq @ tk.transpose(-1, -2) * (1 / math.sqrt(16))
        ones = Tensor.ones(S, S, dtype="bool")  # (tril/triu: a mask of the row and key indices)
        return (ones.tril() & ones.triu(-4)).where(sc, -math.inf).softmax(-1) @ tv

    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    fl = _flash(build())
    assert bool(fl) == (scheduler == "rangeify")  # (kernelize: separate kernels)
    assert not fl or form == "sdpa mask" or "KEY WINDOWS" in fl[0], fl
    got, want = _both(build, monkeypatch, scheduler)
    if which == "mask" and val == -np.inf:  # (a row that keeps no key: 0s, torch's)
        assert not want[:, :, 9].any()
    else:
        assert np.isnan(want.astype(np.float64)).any()
    _same(got, want)
