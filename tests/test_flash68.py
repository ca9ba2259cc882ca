"""float16 attention through the flash kernel (flash68).

A float16 head's sums of products are float32 sums of the operands widened, each other op
rounded to float16 (runtime/semantics.py). The scheduler fused such a head into one kernel, which
the flash action refused (its store is float16): the row's plain loops ran at about 0.1x the
separate kernels. Now the flash kernel takes it (its output sum float32, rounded once by the
store), and a causal float16 head's mask, read through the float16 roundings' casts, narrows its
tiles' keys as a float32 head's does (rules/flash_mask.py's `_uncast`). Values against numpy in
float64, at float16's tolerance; NaN where numpy's are."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel

TOL = 8e-3  # float16: a few roundings of values of about 1 (eps 2**-10)


def _data(b: int, h: int, nq: int, nk: int, d: int, seed: int):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, nq, d)).astype(np.float16)
    k, v = (rng.standard_normal((b, h, nk, d)).astype(np.float16) for _ in range(2))
    return q, k, v


def _reference(q, k, v, keep: np.ndarray | None) -> np.ndarray:
    """softmax(q k^T / sqrt(d), -inf where not `keep`) v in float64 (NaN for a row that keeps
    no key, or whose values are not finite, as the unfused softmax @ v)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == np.float16
    got = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)


def _actions(t: Tensor) -> list[str]:
    (item,) = t.schedule()  # one kernel: scores, softmax and output
    return actions(optimize_kernel(lower_only(item.ast)))


def _flash(t: Tensor) -> str:
    (fl,) = [a for a in _actions(t) if a.startswith("FLASH")]
    return fl


# (batch, heads, queries, keys, head dim, causal): heads 1 and 8, queries 1 to 1031, keys 7 to
# 1100, head dims 8 to 128 (each head's float32 panels within the suite's 1 MB L2's half)
CASES = [(1, 1, 257, 257, 64, 0), (1, 8, 64, 64, 72, 1), (1, 1, 7, 129, 40, 1),
         (2, 8, 7, 129, 128, 0), (1, 1, 1031, 1031, 8, 1), (1, 1, 7, 1100, 40, 0),
         (1, 8, 257, 129, 128, 1), (1, 1, 1031, 7, 64, 1), (1, 1, 6, 6, 8, 0)]


@pytest.mark.parametrize("b,h,nq,nk,d,causal", CASES)
def test_float16_sdpa_is_the_flash_kernel_and_numpys(b, h, nq, nk, d, causal):
    """scaled_dot_product_attention of float16 q, k, v: one kernel, the flash kernel (it had
    been the row's plain loops), its values numpy's in float64 at float16's tolerance."""
    q, k, v = _data(b, h, nq, nk, d, seed=nq + nk + d)
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=bool(causal))
    assert _flash(out)
    keep = np.tril(np.ones((nq, nk), dtype=bool)) if causal else None
    _close(out.numpy(), _reference(q, k, v, keep))


@pytest.mark.parametrize("nq,nk,d", [(64, 129, 40), (257, 257, 64)])
def test_float16_written_out_attention_is_the_flash_kernel(nq, nk, d):
    """((q @ k.T) * s).softmax(-1) @ v in float16, written out: the flash kernel too."""
    q, k, v = _data(1, 2, nq, nk, d, seed=nk)
    s = Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / math.sqrt(d))
    out = s.softmax(-1) @ Tensor(v)
    assert _flash(out)
    _close(out.numpy(), _reference(q, k, v, None))


@pytest.mark.parametrize("s", [13, 97, 257])
def test_causal_float16_head_narrows_its_rows_passes(s):
    """A causal float16 head visits each tile's keys up to its last row only, its row's max,
    exps, sum and probabilities too (`rows' passes`), as a float32 head's: the mask's matchers
    look through the casts of float16's roundings."""
    q, k, v = _data(1, 1, s, s, 32, seed=s)
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
    fl = _flash(out)
    assert "KEY WINDOWS" in fl and "rows' passes" in fl, fl
    _close(out.numpy(), _reference(q, k, v, np.tril(np.ones((s, s), dtype=bool))))


@pytest.mark.parametrize("at", [0, 60])
def test_float16_inf_in_a_value_row_reaches_every_row(at):
    """A float16 head whose V holds an inf visits every key (0 * inf is NaN in the unfused
    softmax @ v): the rows before the inf's key are NaN as numpy's, the rows after inf."""
    s = 97
    q, k, v = _data(1, 1, s, s, 16, seed=5)
    v[0, 0, at, 3] = np.inf
    keep = Tensor.ones(s, s, dtype="bool").tril()
    sc = Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / math.sqrt(16))
    out = keep.where(sc, -math.inf).softmax(-1) @ Tensor(v)
    assert "KEY WINDOWS" in _flash(out)
    _close(out.numpy(), _reference(q, k, v, np.tril(np.ones((s, s), dtype=bool))))


@pytest.mark.parametrize("s,below", [(7, 1), (97, 13)])
def test_float16_rows_that_see_no_key_are_nan(s, below):
    """k <= q - below: the first `below` rows see no key, NaN as numpy's softmax; the others
    numpy's values (13: two whole tiles of 6 rows with no key)."""
    q, k, v = _data(1, 2, s, s, 32, seed=s)
    keep = Tensor.ones(s, s, dtype="bool").tril(-below)
    sc = Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / math.sqrt(32))
    out = keep.where(sc, -math.inf).softmax(-1) @ Tensor(v)
    assert _flash(out)
    want = _reference(q, k, v, np.tril(np.ones((s, s), dtype=bool), -below))
    assert np.isnan(want[..., :below, :]).all()
    _close(out.numpy(), want)


@pytest.mark.parametrize("s", [7, 97])
def test_float16_sdpa_rows_that_see_no_key_weigh_zero(s):
    """A float16 head with a bool mask that drops every key of some rows (k < q: the first
    row; and every odd row): the flash kernel, those rows 0 (torch's safe softmax), not NaN;
    the others numpy's values."""
    q, k, v = _data(1, 3, s, s, 16, seed=s)
    keep = np.tril(np.ones((s, s), dtype=bool), -1)
    keep[1::2] = False
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(keep))
    assert _flash(out)
    want = np.nan_to_num(_reference(q, k, v, keep), nan=0.0)  # (no NaN input: the empty rows)
    _close(out.numpy(), want)
