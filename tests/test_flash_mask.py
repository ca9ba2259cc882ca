"""Masked attention heads visit only the keys their mask keeps (rules/flash_mask.py, printed by
backends/c/flash.py): a causal `k <= q`, a sliding window, a mask that drops whole rows. The
values are torch's (scaled_dot_product_attention, or its softmax for a row that sees no key),
NaN where torch's are; the keys each tile visits are counted from the flash action and compared
with the mask's own extent, computed here in numpy.
"""

from __future__ import annotations

import ctypes
import math
import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.build import build_library
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules.flash_helpers import Flash
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

torch = pytest.importorskip("torch")
F = torch.nn.functional

DT = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-11)}


def _flash(t: Tensor) -> Flash:
    """The flash action of t's one kernel."""
    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    (fl,) = [n.arg for n in toposort(opt) if n.op is Ops.STORE and isinstance(n.arg, Flash)]
    return fl


def _data(b: int, h: int, s: int, d: int, dt, seed: int):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((b, h, s, d)).astype(dt) for _ in range(3))


def _close(got: np.ndarray, want: np.ndarray, tol: float) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _visible_keys(mask: np.ndarray, tile: int) -> int:
    """The keys the tiles of `tile` rows must visit: from each tile's first kept key to its
    last (one key for a tile that keeps none)."""
    total = 0
    for t in range(0, mask.shape[0], tile):
        hit = np.flatnonzero(mask[t:t + tile].any(axis=0))
        total += hit[-1] + 1 - hit[0] if len(hit) else 1
    return int(total)


SHAPES = [(1, 1, 1, 64), (1, 1, 7, 64), (1, 1, 64, 64), (1, 1, 97, 64), (1, 1, 1000, 64),
          (1, 1, 1024, 64), (1, 1, 2048, 64), (1, 1, 97, 8), (1, 1, 1000, 80), (2, 8, 97, 64),
          (2, 8, 64, 8), (2, 8, 1000, 80), (1, 1, 1024, 8)]


# float64 up to 1024 keys (2048 adds nothing 1000 and 1024 do not cover, at 4x the work)
CASES = [(shape, dtype) for shape in SHAPES for dtype in ("float32", "float64")
         if dtype == "float32" or shape[2] <= 1024]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape,dtype", CASES, ids=lambda s: "x".join(map(str, s))
                         if isinstance(s, tuple) else s)
def test_sdpa_matches_torch(shape, causal, dtype):
    """scaled_dot_product_attention, causal or not, equals torch's over the sweep's lengths
    (1, 7, 64, 97, 1000, 1024, 2048), head sizes (8, 64, 80) and batch x heads (1x1, 2x8)."""
    dt, tol = DT[dtype]
    q, k, v = _data(*shape, dt, seed=sum(shape) + causal)
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=causal)
    want = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), is_causal=causal)
    _close(got.numpy(), want.numpy(), tol)


# (keys, dtype) whose head is one flash kernel (its panels fit half of L2: float64 heads of 1000
# keys and float32 ones of 2048 are separate kernels, whose values the tests above check)
FLASHED = [(7, "float32"), (64, "float32"), (97, "float32"), (1000, "float32"),
           (1024, "float32"), (7, "float64"), (97, "float64"), (512, "float64")]


@pytest.mark.parametrize("s,dtype", FLASHED)
def test_causal_tiles_visit_only_keys_at_or_before_their_rows(s, dtype):
    """A causal head's tile of rows [t, t + 6) visits keys [0, t + 6) only: about half the
    keys of the square, counted from the flash action, never fewer than the mask keeps."""
    dt, _ = DT[dtype]
    q, k, v = _data(1, 1, s, 64, dt, seed=s)
    fl = _flash(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True))
    want = _visible_keys(np.tril(np.ones((s, s), dtype=bool)), fl.tile)
    assert fl.keys_visited() == want
    assert fl.keys_visited() <= s * -(-s // fl.tile) // 2 + s * fl.tile


def test_unmasked_head_has_no_windows():
    q, k, v = _data(1, 1, 97, 64, np.float32, seed=1)
    fl = _flash(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v)))
    assert fl.windows == ()


def _masked_attention(q, k, v, keep: Tensor):
    """softmax(where(keep, q k^T / sqrt(d), -inf)) v, in rulegrad."""
    s = Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / math.sqrt(q.shape[-1]))
    return keep.where(s, -math.inf).softmax(-1) @ Tensor(v)


def _torch_masked(q, k, v, keep: np.ndarray):
    s = torch.from_numpy(q) @ torch.from_numpy(k).transpose(-1, -2) * (1 / math.sqrt(q.shape[-1]))
    s = s.masked_fill(~torch.from_numpy(keep), -math.inf)
    return (s.softmax(-1) @ torch.from_numpy(v)).numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s,w", [(7, 3), (97, 16), (1000, 64), (1024, 1), (2048, 100)])
def test_sliding_window_matches_torch(s, w, dtype):
    """A sliding window (q - w < k <= q, from tril and triu) equals torch's."""
    dt, tol = DT[dtype]
    q, k, v = _data(1, 2, s, 64, dt, seed=s + w)
    ones = Tensor.ones(s, s, dtype="bool")
    band = np.tril(np.ones((s, s), dtype=bool)) & np.triu(np.ones((s, s), dtype=bool), -(w - 1))
    got = _masked_attention(q, k, v, ones.tril() & ones.triu(-(w - 1))).numpy()
    _close(got, _torch_masked(q, k, v, band), tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s,w", [(7, 3), (97, 16), (512, 64), (512, 1)])
def test_sliding_window_visits_its_band(s, w, dtype):
    """A sliding window's head visits each tile's band of keys only (a few per tile of rows,
    not all of them), and its values are torch's."""
    dt, tol = DT[dtype]
    q, k, v = _data(1, 2, s, 64, dt, seed=s + w)
    ones = Tensor.ones(s, s, dtype="bool")
    keep = ones.tril() & ones.triu(-(w - 1))
    t = _masked_attention(q, k, v, keep)
    band = np.tril(np.ones((s, s), dtype=bool)) & np.triu(np.ones((s, s), dtype=bool), -(w - 1))
    _close(t.numpy(), _torch_masked(q, k, v, band), tol)
    fl = _flash(_masked_attention(q, k, v, keep))
    assert fl.keys_visited() == _visible_keys(band, fl.tile)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s,below", [(1, 1), (7, 1), (97, 1), (1000, 1), (97, 13), (64, 40)])
def test_rows_that_see_no_key_are_nan_as_torch(s, below, dtype):
    """k <= q - below: the first `below` rows see no key (13: two whole tiles of 6 rows); their
    softmax is NaN in torch and here (a tile still visits one key, so its NaN is computed),
    every other row torch's value."""
    dt, tol = DT[dtype]
    q, k, v = _data(2, 8, s, 32, dt, seed=s)
    keep = Tensor.ones(s, s, dtype="bool").tril(-below)
    got = _masked_attention(q, k, v, keep).numpy()
    want = _torch_masked(q, k, v, np.tril(np.ones((s, s), dtype=bool), -below))
    assert np.isnan(want[..., :min(s, below), :]).all()
    _close(got, want, tol)


@pytest.mark.parametrize("where", ["before", "after"])
def test_inf_in_a_skipped_value_row_still_reaches_the_output(where):
    """A head whose V holds an inf visits every key (0 * inf is NaN in the unskipped sum): the
    rows before the inf's key are NaN as in torch's unfused softmax @ v; one inf before every
    row's window changes nothing of the skipping."""
    s = 97
    q, k, v = _data(1, 1, s, 16, np.float32, seed=5)
    v[0, 0, 60 if where == "after" else 0, 3] = np.inf
    keep = Tensor.ones(s, s, dtype="bool").tril()
    got = _masked_attention(q, k, v, keep).numpy()
    _close(got, _torch_masked(q, k, v, np.tril(np.ones((s, s), dtype=bool))), 2e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("s", [1, 7, 97, 300])
def test_sdpa_rows_that_see_no_key_weigh_zero_as_torch(s, kind, dtype):
    """scaled_dot_product_attention with a mask that drops every key of some rows (k < q: the
    first row; and every even row) gives those rows 0, as torch's safe softmax, not NaN; the
    other rows torch's values. A bool mask and its additive -inf form agree."""
    dt, tol = DT[dtype]
    q, k, v = _data(2, 3, s, 16, dt, seed=s)
    keep = np.tril(np.ones((s, s), dtype=bool), -1)
    keep[1::2] = False  # (rows 1, 3, ...: every key dropped)
    mask = keep if kind == "bool" else np.where(keep, 0.0, -np.inf).astype(dt)
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(mask))
    want = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)),
                                          attn_mask=torch.from_numpy(mask))
    assert (want.numpy()[..., 0, :] == 0).all()
    _close(got.numpy(), want.numpy(), tol)


def test_causal_row_max_keeps_its_vector_accumulators():
    """The mask's positions (int32 casts of the row and key ranges) have vector lanes, so a
    causal row's max runs on vector accumulators as an unmasked row's does."""
    from rulegrad.backends.c.opt import actions

    q, k, v = _data(1, 1, 97, 64, np.float32, seed=3)
    t = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
    (item,) = t.schedule()
    low = lower_only(item.ast)
    assert any(a.startswith("VECTOR MAX") for a in actions(optimize_kernel(low)))


@pytest.mark.parametrize("s", [20, 97, 1000])
def test_a_masked_key_with_a_huge_score_changes_nothing(s):
    """The last key's score is huge for every row (exp of any other score minus it is 0): a
    causal row that counted it in its max, or in its sum, would be 0 / 0. Every row before the
    last masks it, and equals torch's."""
    q, k, v = _data(1, 1, s, 64, np.float32, seed=s)
    q = np.abs(q)
    k[..., -1, :] = 50.0
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
    want = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), is_causal=True)
    _close(got.numpy(), want.numpy(), 2e-5)


# each exp call of a kernel counts into a global (and no `omp simd` loop runs the calls side by
# side, so every call counts once)
# (atomic: a head's tiles run on every thread, and a plain ++ loses counts between them)
_COUNTED = """long rg_exps_ = 0;
static float rg_counted_expf(float x) { __atomic_fetch_add(&rg_exps_, 1, __ATOMIC_RELAXED);
  return expf(x); }
static double rg_counted_exp(double x) { __atomic_fetch_add(&rg_exps_, 1, __ATOMIC_RELAXED);
  return exp(x); }
"""


def _exps_counted(t: Tensor) -> int:
    """The exps t's one kernel computes, counted as it runs (its C, each exp call counting)."""
    (item,) = t.schedule()
    kernel = render_kernel(optimize_kernel(lower_only(item.ast)), "k")
    assert kernel.launch == 0
    body = re.sub(r"\b(expf?)\(", r"rg_counted_\1(", kernel.source)
    body = "\n".join(line for line in body.split("\n") if line.strip() != "#pragma omp simd")
    lib = build_library([kernel.replace(source=_COUNTED + body)])
    arrays = [np.ones(b.size, dtype=b.dtype.np) for b in item.bufs]
    lib.function("k", kernel.nparams)(*[a.ctypes.data for a in arrays])
    return ctypes.c_long.from_address(lib.address("rg_exps_")).value


def _mask_keys(keep: np.ndarray, tile: int) -> int:
    """The exps of a masked head whose rows visit their tile's keys (from the tile's first kept
    key to its last, one key for a tile that keeps none): that many per row, and one per row
    (the dropped keys' exp(-inf - max), the same along the row)."""
    total = 0
    for t in range(0, keep.shape[0], tile):
        hit = np.flatnonzero(keep[t:t + tile].any(axis=0))
        total += (hit[-1] + 1 - hit[0] if len(hit) else 1) * len(keep[t:t + tile])
    return int(total) + keep.shape[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s,w", [(7, 0), (64, 0), (65, 0), (257, 0), (97, 16), (257, 1),
                                 (257, 64), (97, 200)])
def test_each_row_computes_the_exps_of_its_tiles_window_only(s, w, dtype):
    """A causal (w 0) or sliding-window head's rows compute the exps of their tile's window of
    keys (and one per row for the dropped keys), counted as the kernel runs: about half the
    square for a causal head, a band for a window, not every key of every row; its values are
    torch's."""
    dt, tol = DT[dtype]
    q, k, v = _data(1, 1, s, 64, dt, seed=s + w)
    ones = Tensor.ones(s, s, dtype="bool")
    keep = ones.tril() & ones.triu(-(w - 1)) if w else ones.tril()
    band = np.tril(np.ones((s, s), dtype=bool))
    band &= np.triu(np.ones((s, s), dtype=bool), -(w - 1)) if w else band
    t = _masked_attention(q, k, v, keep)
    _close(t.numpy(), _torch_masked(q, k, v, band), tol)
    fl = _flash(_masked_attention(q, k, v, keep))
    assert len(fl.narrowed) == 4  # the max's, the exps', the sum's and the probabilities' loops
    assert _exps_counted(_masked_attention(q, k, v, keep)) == _mask_keys(band, fl.tile)


# issue 32's sweep: lengths around a vector, a tile and a panel; heads 1 and 8; head sizes 8,
# 64, 80 (taken in turn, each with every length across the cases); both dtypes
SWEEP_LENGTHS = [1, 7, 63, 64, 65, 257, 1024]
HEADS_DIMS = [(1, 8), (8, 64), (1, 80), (8, 8), (1, 64), (8, 80)]


def _f64(q, k, v, keep: np.ndarray, empty_rows_zero: bool) -> np.ndarray:
    """torch's attention in float64 on the same values (a query that sees no key: NaN, as
    masked_fill and softmax give, or 0s, as scaled_dot_product_attention gives)."""
    q64, k64, v64 = (torch.from_numpy(a.astype(np.float64)) for a in (q, k, v))
    if empty_rows_zero:
        mask = torch.from_numpy(keep)
        return F.scaled_dot_product_attention(q64, k64, v64, attn_mask=mask).numpy()
    s = q64 @ k64.transpose(-1, -2) * (1 / math.sqrt(q.shape[-1]))
    return (s.masked_fill(~torch.from_numpy(keep), -math.inf).softmax(-1) @ v64).numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["causal", "window", "late", "late0"])
@pytest.mark.parametrize("s", SWEEP_LENGTHS)
def test_masked_heads_match_torch_float64_over_the_sweep(s, kind, dtype):
    """A causal head (is_causal), a sliding window (q - w < k <= q), and a mask whose first 9
    rows see no key (k <= q - 9: NaN rows as softmax gives them, or 0s as torch's
    scaled_dot_product_attention: `late0`), over the sweep of lengths, heads and head sizes,
    equal torch's in float64 on the same values."""
    dt, _ = DT[dtype]
    tol = 2e-5 if dtype == "float32" else 1e-11
    idx = SWEEP_LENGTHS.index(s) + ["causal", "window", "late", "late0"].index(kind)
    h, d = HEADS_DIMS[idx % len(HEADS_DIMS)]
    q, k, v = _data(1, h, s, d, dt, seed=s * 7 + idx)
    ones = Tensor.ones(s, s, dtype="bool")
    tri = np.tril(np.ones((s, s), dtype=bool))
    w = 1 + s // 5
    if kind == "causal":
        keep = tri
        got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
    elif kind == "window":
        keep = tri & np.triu(np.ones((s, s), dtype=bool), -(w - 1))
        got = _masked_attention(q, k, v, ones.tril() & ones.triu(-(w - 1)))
    else:
        keep = np.tril(np.ones((s, s), dtype=bool), -9)
        scores = Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / math.sqrt(d))
        masked = ones.tril(-9).where(scores, -math.inf)
        weights = masked.softmax(-1)
        if kind == "late0":  # (sdpa's safe softmax: a row whose max is -inf weighs 0)
            weights = (masked.max(-1, keepdim=True) == -math.inf).where(0.0, weights)
        got = weights @ Tensor(v)
    want = _f64(q, k, v, keep, kind == "late0")
    if kind == "late":
        assert np.isnan(want[..., :min(s, 9), :]).all()
    _close(got.numpy().astype(np.float64), want, tol)


@pytest.mark.parametrize("s", [7, 97])
def test_bool_mask_keeps_a_dropped_keys_infinite_score_as_torch(s):
    """torch adds a bool attn_mask as -inf where False: a dropped key whose score is +inf (an
    inf in K) makes the row's max NaN, and the row NaN; a kept NaN score too. A bool mask's
    dropped keys can be skipped only where the scores are known finite: here every row is
    torch's, NaN where torch's is."""
    q, k, v = _data(1, 2, s, 16, np.float32, seed=s)
    q = np.abs(q) + 0.5
    k[0, 0, s - 1, :] = np.inf  # (head 0: the last key, dropped by every row but the last)
    keep = np.tril(np.ones((s, s), dtype=bool))
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(keep))
    want = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)),
                                          attn_mask=torch.from_numpy(keep)).numpy()
    assert np.isnan(want[0, 0]).all() and not np.isnan(want[0, 1]).any()
    _close(got.numpy(), want, 2e-5)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("s", [7, 65, 300])
def test_causal_row_with_a_nonfinite_key_is_torchs(s, bad):
    """A NaN or inf in K at a middle key: the rows that keep it have a NaN or infinite score in
    their window (their max NaN or inf, their row NaN as torch's), the rows before it drop it
    (never read) and keep torch's values: the row passes over the window keep NaN as the
    passes over every key did."""
    q, k, v = _data(1, 2, s, 16, np.float32, seed=s)
    k[0, 1, s // 2, 3] = bad
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
    want = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), is_causal=True)
    assert not np.isnan(want.numpy()[0, 1, :s // 2]).any()
    _close(got.numpy(), want.numpy(), 2e-5)
