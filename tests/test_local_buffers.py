"""Kernel-local buffers (rules/rangeify.rules: local_reduce, local_array): softmax, layernorm
and an attention head each run as 1 kernel, their row max / sum / mean computed once per row
inside the kernel and attention's scores in an array local to the kernel; the C backend prints
such a head as the flash kernel (rules/flash_helpers.py, backends/c/flash.py). Values against
numpy on the C and interpreter backends; the cost rule sends large rows, large arrays and
long products to global buffers (more kernels), and DEBUG=2 names what went local."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules import pack_helpers
from rulegrad.rules.flash_cost import local_max_array, local_max_panel
from rulegrad.rules.generated.rangeify import local_max_row
from rulegrad.rules.rangeify_helpers import LOCAL_MAX_PRODUCTS
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

# the bounds on this machine (the suite pins its cache sizes: tests/conftest.py)
LOCAL_MAX_PANEL, LOCAL_MAX_ARRAY, LOCAL_MAX_ROW = local_max_panel(), local_max_array(), \
    local_max_row()

RNG = np.random.default_rng(13)
# the kernel interpreter reads a local array whole per element of its reader (quadratic in
# the row): it checks rows up to this many elements; the C backend checks every row
INTERP_MAX = 1 << 15
# a row past LOCAL_MAX_ROW that split_reduceop cannot split (no divisor in 8..256): its
# reductions are whole rows, too long to be local (65537 with the suite's 1 MB of L2)
LONG_ROW = next(n for n in range(LOCAL_MAX_ROW + 1, 2 * LOCAL_MAX_ROW)
                if not any(n % d == 0 for d in range(8, 257)))


def _np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_logsumexp(a: np.ndarray) -> np.ndarray:
    m = a.max(-1, keepdims=True)
    return (np.log(np.exp(a - m).sum(-1, keepdims=True)) + m)[..., 0]


def _layernorm(x, keep: str):
    mu = x.mean(axis=-1, **{keep: True})
    d = x - mu
    var = (d * d).mean(axis=-1, **{keep: True})
    return d / (var + 1e-5) ** 0.5


def _attention(q, k, v, t: str):
    s = (q @ (k.transpose(0, 2, 1) if t == "np" else k.transpose(1, 2))) * (1 / 8.0)
    return (_np_softmax(s) if t == "np" else s.softmax(-1)) @ v


def _data(*shapes: tuple[int, ...], dtype=np.float32) -> list[np.ndarray]:
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


CASES = {  # name: (inputs, program, numpy, kernels)
    "softmax": (_data((6, 33)), lambda x: x.softmax(-1), _np_softmax, 1),
    "log_softmax": (_data((5, 40)), lambda x: x.log_softmax(-1),
                    lambda a: a - a.max(-1, keepdims=True) - np.log(
                        np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)), 1),
    "layernorm": (_data((7, 48)), lambda x: _layernorm(x, "keepdim"),
                  lambda a: _layernorm(a, "keepdims"), 1),
    # (d * d).sum is a sum of products of matmul size, but no matmul: the mean stays local
    "layernorm, long rows": (_data((40, 1024)), lambda x: _layernorm(x, "keepdim"),
                             lambda a: _layernorm(a, "keepdims"), 1),
    # the max of a middle axis is read at loops 0 and 2 of the output's (not its outer loops):
    # computed locally it would be recomputed for every step of loop 1, so it stays global
    "softmax over a middle axis": (_data((3, 20, 4)), lambda x: x.softmax(1),
                                   lambda a: np.moveaxis(_np_softmax(
                                       np.moveaxis(a, 1, -1)), -1, 1), 3),
    "attention head": (_data((1, 24, 16), (1, 24, 16), (1, 24, 16)),
                       lambda q, k, v: _attention(q, k, v, "rg"),
                       lambda q, k, v: _attention(q, k, v, "np"), 1),
    "attention, 3 heads": (_data((3, 17, 8), (3, 29, 8), (3, 29, 12)),
                           lambda q, k, v: _attention(q, k, v, "rg"),
                           lambda q, k, v: _attention(q, k, v, "np"), 1),
    # logsumexp's max is read by the shift inside the row's sum (through a broadcast) and by the
    # add after its log (no broadcast): one row scalar serves both, no kernel of its own
    "logsumexp": (_data((9, 70)), lambda x: x.logsumexp(-1), _np_logsumexp, 1),
    "logsumexp, keepdim": (_data((4, 3, 50)), lambda x: x.logsumexp(-1, keepdim=True),
                           lambda a: _np_logsumexp(a)[..., None], 1),
    # ... over rows longer than LOCAL_MAX_ROW, the max is a global buffer both reads share
    "logsumexp, long rows": (_data((2, LONG_ROW)), lambda x: x.logsumexp(-1),
                             _np_logsumexp, 2),
    # the cost rule: a row longer than LOCAL_MAX_ROW keeps the max and sum in global buffers
    "softmax, long rows": (_data((2, LONG_ROW)), lambda x: x.softmax(-1),
                           _np_softmax, 3),
    # a single row (batch 1) has no loop to be read at: its max and sum are one value for the
    # whole kernel, computed before the output loop, not kernels of their own
    "softmax, one row": (_data((1, 300)), lambda x: x.softmax(-1), _np_softmax, 1),
    "layernorm, one row": (_data((1, 300)), lambda x: _layernorm(x, "keepdim"),
                           lambda a: _layernorm(a, "keepdims"), 1),
    "softmax, one row of LOCAL_MAX_ROW": (_data((1, LOCAL_MAX_ROW)), lambda x: x.softmax(-1),
                                         _np_softmax, 1),
    # ... so is a reduction over every axis, read through a broadcast by each element
    "softmax over all axes": (_data((5, 7, 3)),
                              lambda x: (x - x.max()).exp() / (x - x.max()).exp().sum(),
                              lambda a: np.exp(a - a.max()) / np.exp(a - a.max()).sum(), 1),
    # ... but not a row longer than LOCAL_MAX_ROW
    "softmax, one long row": (_data((1, LONG_ROW)), lambda x: x.softmax(-1),
                              _np_softmax, 3),
    # ... and scores over more than LOCAL_MAX_ARRAY keys are a global buffer (their max and
    # sum are still local)
    "attention, many keys": (_data((1, 2, 2), (1, LOCAL_MAX_ARRAY + 8, 2),
                                   (1, LOCAL_MAX_ARRAY + 8, 2)),
                             lambda q, k, v: _attention(q, k, v, "rg"),
                             lambda q, k, v: _attention(q, k, v, "np"), 2),
    # matmul-sized attention (64 * 64 * 16 products) is one kernel too: the flash kernel
    "attention, matmul-sized": (_data((1, 64, 16), (1, 64, 16), (1, 64, 16)),
                                lambda q, k, v: _attention(q, k, v, "rg"),
                                lambda q, k, v: _attention(q, k, v, "np"), 1),
    # ... at bench/kernels.py's size (8 heads x 256 x 64) ...
    "attention, 8 heads 256x64": (_data((8, 256, 64), (8, 256, 64), (8, 256, 64)),
                                  lambda q, k, v: _attention(q, k, v, "rg"),
                                  lambda q, k, v: _attention(q, k, v, "np"), 1),
    # ... with rows, keys and columns that fill no whole tile or panel (71 = 11 x 6 + 5 rows,
    # 37 keys, 21 columns: panels of 16), and in float64 (panels of 8)
    "attention, partial tiles": (_data((2, 71, 40), (2, 37, 40), (2, 37, 21)),
                                 lambda q, k, v: _attention(q, k, v, "rg"),
                                 lambda q, k, v: _attention(q, k, v, "np"), 1),
    "attention, float64": (_data((2, 71, 40), (2, 37, 40), (2, 37, 21), dtype=np.float64),
                           lambda q, k, v: _attention(q, k, v, "rg"),
                           lambda q, k, v: _attention(q, k, v, "np"), 1),
    # ... but scores of more than LOCAL_MAX_PANEL multiply-adds per row (1024 keys x 128) are a
    # kernel of their own (packed); the row's max, exp and sum stay local to the output's
    "attention, long products": (_data((1, 8, 128), (1, 1024, 128), (1, 1024, 16)),
                                 lambda q, k, v: _attention(q, k, v, "rg"),
                                 lambda q, k, v: _attention(q, k, v, "np"), 2),
}


# the kernel interpreter reads a local array once per reader element: the larger cases are
# checked on C only
@pytest.mark.parametrize("name,backend", [
    (name, backend) for name in sorted(CASES) for backend in ("c", "interp")
    if backend == "c" or max(a.size for a in CASES[name][0]) <= INTERP_MAX])
def test_local_buffers(name, backend, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    inputs, program, expected, kernels = CASES[name]
    out = program(*[Tensor(a) for a in inputs])
    assert len(out.schedule()) == kernels, [k.name for k in out.schedule()]
    np.testing.assert_allclose(out.numpy(), expected(*inputs), rtol=1e-4, atol=1e-5)


def test_scores_reused_by_a_matmul_without_softmax(monkeypatch):
    """(q @ k^T) @ v: the scores are read only by the second matmul's reduce, once per output
    column, so a local array (computed once per row) replaces a kernel of their own."""
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    q, k, v = _data((2, 9, 5), (2, 11, 5), (2, 11, 7))
    out = (Tensor(q) @ Tensor(k).transpose(1, 2)) @ Tensor(v)
    assert len(out.schedule()) == 1
    np.testing.assert_allclose(out.numpy(), (q @ k.transpose(0, 2, 1)) @ v, rtol=1e-4,
                               atol=1e-5)


def test_debug2_names_the_local_values(monkeypatch, capsys):
    monkeypatch.setenv("DEBUG", "2")
    q, k, v = (Tensor(a) for a in _data((1, 6, 4), (1, 10, 4), (1, 10, 4)))
    _attention(q, k, v, "rg").schedule()
    out = capsys.readouterr().out
    assert "local array float32[10]" in out
    assert "local scalar float32 (MAX over 10)" in out
    assert "local scalar float32 (ADD over 10)" in out


def test_products_threshold_is_the_c_backends():
    """The cost rule keeps sums of products from the size the C backend packs them."""
    assert LOCAL_MAX_PRODUCTS == pack_helpers.MIN_WORK


def _random_case(seed: int):
    """A softmax, log-softmax, layernorm or attention of random small sizes (size-1 axes
    included), with its numpy value."""
    rng = np.random.default_rng(seed)
    kind = ["softmax", "log_softmax", "layernorm", "attention"][seed % 4]
    if kind == "attention":
        h, nq, nk, d, dv = (int(rng.integers(1, n)) for n in (4, 12, 40, 9, 9))
        q, k, v = _data((h, nq, d), (h, nk, d), (h, nk, dv))
        return (q, k, v), lambda q, k, v: _attention(q, k, v, "rg"), \
            lambda q, k, v: _attention(q, k, v, "np")
    (x,) = _data((int(rng.integers(1, 9)), int(rng.integers(1, 70))))
    if kind == "layernorm":
        return (x,), lambda t: _layernorm(t, "keepdim"), lambda a: _layernorm(a, "keepdims")
    if kind == "softmax":
        return (x,), lambda t: t.softmax(-1), _np_softmax
    return (x,), lambda t: t.log_softmax(-1), lambda a: np.log(_np_softmax(a))


@pytest.mark.parametrize("backend", ["c", "c printed blocks", "interp"])
def test_random_sizes_against_numpy(backend, monkeypatch):
    """(c: the flash tiles' register blocks from the block library, backends/c/blocks.py;
    printed blocks: in the kernel)"""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_BACKEND", backend.split()[0])
    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", "0" if "printed" in backend else "1")
    run._programs.clear()  # (kept by their kernels' ASTs, the same either way)
    for seed in range(16):
        inputs, program, expected = _random_case(seed)
        got = program(*[Tensor(a) for a in inputs]).numpy()
        np.testing.assert_allclose(got, expected(*inputs), rtol=1e-4, atol=1e-5,
                                   err_msg=f"seed {seed}")


def _one_kernel(t: Tensor):
    """t's one kernel: (its AST, the optimizer's actions on it)."""
    (item,) = t.schedule()
    low = lower_only(item.ast)
    return item.ast, actions(optimize_kernel(low))


def _count(ast, op: Ops) -> int:
    return sum(n.op is op for n in toposort(ast))


ROWS = {  # name: (program, numpy, row length, exps in the kernel, local arrays)
    # exp read by the row's sum and by the output: computed once per element into an array
    "softmax": (lambda t: t.softmax(-1), _np_softmax, 300, 1, 1),
    # a row longer than LOCAL_MAX_ARRAY (L1) but local (LOCAL_MAX_ROW, L2): still one exp per
    # element, its array (at most LOCAL_MAX_ROW long) read back from L2, not recomputed
    "softmax, long rows": (lambda t: t.softmax(-1), _np_softmax, LOCAL_MAX_ARRAY + 8, 1, 1),
    "softmax, rows of LOCAL_MAX_ROW": (lambda t: t.softmax(-1), _np_softmax, LOCAL_MAX_ROW, 1,
                                       1),
    # the exp has one reader (the sum): nothing to share
    "log_softmax": (lambda t: t.log_softmax(-1), lambda a: np.log(_np_softmax(a)), 300, 1, 0),
    # x - mean is cheap: recomputed by each reader, no array
    "layernorm": (lambda t: _layernorm(t, "keepdim"), lambda a: _layernorm(a, "keepdims"), 300,
                  0, 0),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_kernels_vectorize_and_compute_costly_values_once(name, monkeypatch):
    """One kernel per row program; its output loop is vectorized (UPCAST) although the row's
    reductions sit beside it; each exp is computed once where two loops read it (the cost rule
    of local_value), and recomputed where an array does not pay. Values against numpy on both
    backends."""
    program, expected, n, exps, arrays = ROWS[name]
    (x,) = _data((4, n))  # (rows that share the suite's 2 threads: split_reduceop keeps them)
    ast, acts = _one_kernel(program(Tensor(x)))
    assert _count(ast, Ops.EXP) == exps and _count(ast, Ops.DEFINE_LOCAL) == arrays
    assert any(a.startswith("UPCAST") for a in acts), acts
    for backend in ("c", "interp") if x.size <= INTERP_MAX else ("c",):
        monkeypatch.setenv("RULEGRAD_BACKEND", backend)
        np.testing.assert_allclose(program(Tensor(x)).numpy(), expected(x), rtol=1e-5,
                                   atol=1e-6, err_msg=backend)


def test_attention_head_computes_exp_once(monkeypatch):
    """A one-kernel attention head: the exp of the scores, read by the row's sum and by the
    product with v (through its broadcast over v's columns), is a local array of its own beside
    the scores': one exp per score, not one per reader."""
    q, k, v = _data((1, 24, 16), (1, 24, 16), (1, 24, 16))
    ast, _ = _one_kernel(_attention(*(Tensor(a) for a in (q, k, v)), "rg"))
    assert _count(ast, Ops.EXP) == 1 and _count(ast, Ops.DEFINE_LOCAL) == 2
    for backend in ("c", "interp"):
        monkeypatch.setenv("RULEGRAD_BACKEND", backend)
        got = _attention(*(Tensor(a) for a in (q, k, v)), "rg").numpy()
        np.testing.assert_allclose(got, _attention(q, k, v, "np"), rtol=1e-5, atol=1e-6)


def test_attention_is_the_flash_kernel(monkeypatch):
    """A head of bench/kernels.py's size is one kernel with the flash action: per tile of 6 rows
    its scores are a local product (register tiles over packed K^T), its output register tiles
    over packed V, the heads split across cores. With scores too long for a local product
    (LOCAL_MAX_PANEL), the scores are a packed kernel of their own and the rest a flash kernel
    without local products."""
    q, k, v = (Tensor(a) for a in _data((8, 256, 64), (8, 256, 64), (8, 256, 64)))
    _, acts = _one_kernel(_attention(q, k, v, "rg"))
    acts = [a for a in acts if not a.startswith(("VECTOR", "UNSCALE"))]  # (its rows' max, sum)
    assert len(acts) == 1 and acts[0].startswith("FLASH rows r1 in tiles of 6: local products "
                                                 "over r") and "PARALLEL batch" in acts[0], acts
    q, k, v = (Tensor(a) for a in _data((1, 8, 128), (1, 1024, 128), (1, 1024, 16)))
    scores, rest = _attention(q, k, v, "rg").schedule()
    assert actions(optimize_kernel(lower_only(scores.ast)))[0].startswith(
        "PACK")
    acts = actions(optimize_kernel(lower_only(rest.ast)))
    assert any(a.startswith("FLASH rows r0 in tiles of 6: local products over none")
               for a in acts), acts


def test_debug2_states_each_cost_choice_and_why(monkeypatch, capsys):
    """DEBUG=2 prints the kernel-local cost rules' choices: softmax's exp in a local array and
    its max local; over rows longer than LOCAL_MAX_ROW the max not local, with the bound."""
    monkeypatch.setenv("DEBUG", "2")
    monkeypatch.setenv("RULEGRAD_SCHEDULE_CACHE", "0")  # printed when scheduled, not replayed
    (x,) = _data((2, 40))
    Tensor(x).softmax(-1).schedule()
    out = capsys.readouterr().out
    assert "cost   EXP float32[2, 40]: local array [40] once per row" in out
    assert "cost   MAX over axes (1,) of (2, 40): local scalar once per row" in out
    (x,) = _data((2, LONG_ROW))
    Tensor(x).softmax(-1).schedule()
    out = capsys.readouterr().out
    assert (f"MAX over axes (1,) of (2, {LONG_ROW}): not local: row of "
            f"{LONG_ROW} > LOCAL_MAX_ROW {LOCAL_MAX_ROW}") in out
    assert f"EXP float32[2, {LONG_ROW}]: not local: recomputed by each reader" in out
    q, k, v = (Tensor(a) for a in _data((1, 8, 128), (1, 1024, 128), (1, 1024, 16)))
    _attention(q, k, v, "rg").schedule()
    out = capsys.readouterr().out
    assert (f"ADD over axes (3,) of (1, 8, 1024, 128): not local: a sum of products of "
            f"{1024 * 128} multiply-adds per row > local_max_panel() {LOCAL_MAX_PANEL}") in out


def test_flash_rows_left_over_share_the_tile_and_store_nothing_past_the_end():
    """Query rows that tiles of 6 do not divide (4 heads of 27): the last tile runs the same
    loops (one copy of the tile's register tiles in the C, not a second for the rows left
    over), computing its rows past the end as the last row, and stores none of them: the
    output's neighbours in memory keep their bytes. The values are numpy's."""
    from rulegrad.backends.c import compile_program

    q, k, v = _data((4, 27, 32), (4, 64, 32), (4, 64, 32))
    sched = _attention(*(Tensor(a) for a in (q, k, v)), "rg").schedule()
    (item,) = sched
    prog = compile_program(sched)
    assert any(a.startswith("FLASH") for a in actions(optimize_kernel(lower_only(item.ast))))
    blocks = prog.source.count("fma_f") + prog.source.count("rg_block_")  # printed or called
    assert blocks == 2, "one tile: the scores' and the output's tiles"
    bufs = [b.ensure() for b in item.bufs]
    out = bufs[0]
    room = np.full(out.size + 2 * 4096, 12345.0, out.dtype)
    bufs[0] = room[4096:4096 + out.size].reshape(out.shape)
    prog.run([bufs])
    assert (room[:4096] == 12345.0).all() and (room[4096 + out.size:] == 12345.0).all()
    np.testing.assert_allclose(bufs[0].reshape(4, 27, 32), _attention(q, k, v, "np"),
                               rtol=1e-5, atol=1e-6)


SPECIAL_ROWS = [  # one row each: numpy's softmax gives NaN for a row with +inf or NaN
    [1.0, -np.inf, 2.0, 0.5], [np.inf, 1.0, 2.0, 3.0], [-np.inf, -np.inf, -np.inf, -np.inf],
    [np.nan, 1.0, 2.0, 3.0], [88.0, 89.0, -104.0, 0.0], [1e-30, -1e-30, 0.0, -0.0],
]


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("row", range(len(SPECIAL_ROWS)))
def test_one_row_with_infinities_and_nans_against_numpy(row, backend, monkeypatch):
    """A single row's max, sum and log computed before its output loop (one kernel) give
    numpy's values, NaN and infinities included (logsumexp: torch's, +-inf for a row whose
    max is +-inf)."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    x = np.array([SPECIAL_ROWS[row] * 25], np.float32)  # 100 values: vector loops and a tail
    with np.errstate(all="ignore"):
        m = x.max(-1, keepdims=True)
        m = np.where(np.isinf(m), 0, m)  # torch's logsumexp: a row of +-inf gives +-inf
        lse = (np.log(np.exp(x - m).sum(-1, keepdims=True)) + m)[..., 0]
        want = {"softmax": _np_softmax(x), "logsumexp": lse, "layernorm": _layernorm(x, "keepdims")}
    got = {"softmax": Tensor(x).softmax(-1), "logsumexp": Tensor(x).logsumexp(-1),
           "layernorm": _layernorm(Tensor(x), "keepdim")}
    assert len(got["softmax"].schedule()) == 1
    for name, t in got.items():
        np.testing.assert_allclose(t.numpy(), want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_one_short_row_runs_on_one_thread_a_long_sum_on_all(monkeypatch):
    """The threads' work counts the loops that run per iteration: a single row's max and sum,
    computed once before its output loop, are not work per output element (counted so, a row
    of 4096 looked like 4096^3 and woke the threads for microseconds of work). A long full
    sum, split into rows of rows, still counts its inner loops and takes the threads."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")  # (the suite's pinned value: threads to take)
    (x,) = _data((1, min(4096, LOCAL_MAX_ROW)))
    _, acts = _one_kernel(Tensor(x).softmax(-1))
    assert not any(a.startswith(("PARALLEL", "THREAD")) for a in acts), acts
    (y,) = _data((2 << 20,))  # (two threads' shares of the region's cost)
    _, acts = _one_kernel(Tensor(y).sum())
    assert any(a.startswith("THREAD") for a in acts), acts


def test_a_long_products_partials_nest_in_its_sum_but_not_in_a_softmaxs_reductions():
    """split_reduceop splits a long product (K = 40000 for 8 x 16 outputs) into partial sums
    and their sum. The partials nest in that sum (rangeify.rules' `nests_in`: the unsplit sum,
    each partial computed once), but the product, read by log_softmax's max and sum through a
    broadcast, is still predicted buffered: one kernel reads the operands and writes the
    8 x 16 products, the other reads those. Nested in the softmax's reductions, the product
    would be computed again by each of them."""
    m, w = _data((8, 40000), (40000, 16))
    out = (Tensor(m) @ Tensor(w)).log_softmax(1)
    kernels = out.schedule()
    readers = [k for k in kernels if any(b.size == m.size for b in k.bufs)]
    assert len(kernels) == 2 and len(readers) == 1, [k.name for k in kernels]
    assert readers[0].bufs[0].size == 8 * 16
    z = m.astype(np.float64) @ w
    z = z - z.max(1, keepdims=True)
    want = z - np.log(np.exp(z).sum(1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-2)


# rows past the split's 32768 but within LOCAL_MAX_ROW (the suite's 1 MB of L2: 64K), where
# split_reduceop once cut softmax's sum in partials and its exp was computed twice; batch 1,
# a prime row and a tall one beside them
LONG_ROWS = [(1, 4096), (3, 997), (16, 20000), (16, LOCAL_MAX_ROW), (2, 40009), (4096, 64)]


@pytest.mark.parametrize("shape", LONG_ROWS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_row_up_to_local_max_row_is_one_kernel_with_one_exp_per_element(shape, monkeypatch):
    """softmax over rows up to LOCAL_MAX_ROW (a row and its exp array in half of L2), batch 1
    included, is one kernel that computes each exp once into the row's local array: its sum and
    its output read that array (one EXP in the kernel, one DEFINE_LOCAL). Its rows alone share
    the threads, so split_reduceop keeps them whole. logsumexp and layernorm over the same rows
    are one kernel too. Values against numpy on the C backend (and the kernel interpreter)."""
    assert shape[1] <= LOCAL_MAX_ROW
    (x,) = _data(shape)
    programs = {"softmax": (lambda t: t.softmax(-1), _np_softmax),
                "logsumexp": (lambda t: t.logsumexp(-1), _np_logsumexp),
                "layernorm": (lambda t: _layernorm(t, "keepdim"),
                              lambda a: _layernorm(a, "keepdims"))}
    ast, _ = _one_kernel(Tensor(x).softmax(-1))
    assert _count(ast, Ops.EXP) == 1 and _count(ast, Ops.DEFINE_LOCAL) == 1
    for name, (program, expected) in programs.items():
        # (left: batch 1's logsumexp reads its max after the log at no loop: a kernel of its own)
        if name != "logsumexp" or shape[0] > 1:
            assert len(program(Tensor(x)).schedule()) == 1, name
        for backend in ("c", "interp") if x.size <= INTERP_MAX else ("c",):
            monkeypatch.setenv("RULEGRAD_BACKEND", backend)
            np.testing.assert_allclose(program(Tensor(x)).numpy(), expected(x), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{name} {backend}")


def test_split_reduceop_keeps_rows_that_share_the_threads_whole(monkeypatch):
    """A sum of rows that share the cores evenly (16 rows of 65536 on the suite's 2 threads)
    stays whole: one REDUCE per row; so do rows that share them unevenly but are too little
    work to thread (3 rows of 65536, under PARALLEL_MIN_WORK values: split, their partials ran
    nested on one core). Rows past LOCAL_MAX_ROW, a full sum, and uneven rows worth threads
    (31 rows of 65536 on 4 threads, 2M values) are still split (partials, then their sum: two
    REDUCEs). Values against numpy."""
    cases = {(16, LOCAL_MAX_ROW, 2): 1, (2, 4 * LOCAL_MAX_ROW, 2): 2, (3, LOCAL_MAX_ROW, 2): 1,
             (1 << 20, 1, 2): 2, (31, LOCAL_MAX_ROW, 4): 2}
    for (*shape, nthreads), reduces in cases.items():
        monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
        (x,) = _data(tuple(s for s in shape if s > 1))
        t = Tensor(x).sum(-1)
        got = sum(_count(k.ast, Ops.REDUCE) for k in t.schedule())
        assert got == reduces, (shape, [k.name for k in t.schedule()])
        np.testing.assert_allclose(t.numpy(), x.astype(np.float64).sum(-1), rtol=1e-4,
                                   atol=1e-2)


# the row shapes the issue measures: a prime row past the split's 32768, rows past the old
# sixteenth-of-L2 bound, square, tall, batch 1, primes, short rows
SWEEP_ROWS = [(2, 40009), (16, 20000), (1024, 1024), (4096, 1024), (1, 4096), (997, 1009),
              (65536, 64)]
_RTOL = {np.float32: 1e-4, np.float16: 1e-2}


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SWEEP_ROWS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_row_programs_compute_each_exp_once_and_match_numpy(shape, dtype, monkeypatch):
    """softmax, logsumexp and layernorm over rows up to LOCAL_MAX_ROW: softmax is one kernel
    whose rendered C calls exp once (each element's exp computed once, read back by the sum and
    the output from the row's array), logsumexp one kernel (two for batch 1: its max read after
    the log at no loop), layernorm one; values against numpy in float64 on the input's values,
    float32 and float16 inputs."""
    assert shape[1] <= LOCAL_MAX_ROW
    # gcc's loops of exp calls, counted below (a 512-bit target's are 16-lane vectors of the
    # core inline: test_vexp.py's 512_bit tests count those)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    (x,) = _data(shape, dtype=dtype)
    a = x.astype(np.float64)
    (item,) = Tensor(x).softmax(-1).schedule()
    assert _count(item.ast, Ops.EXP) == 1
    src = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
    # the exps run over the row once: in one loop, or in its whole vectors and one last vector
    # overlapping them (render.py's overlap tail: fewer than a vector's lanes computed twice);
    # float16's row of exps is explicit float32 vectors (`r_v += 8`, the last one overlapping)
    loop = r"for \(int64_t r\d+(?:_v)? = (\d+); r\d+(?:_v)? < (\d+); r\d+(?:_v)?" \
           r"(?:\+\+| \+= \d+)\) \{([^{}]*)\}"
    exp = r"\b(?:expf?|rg_vexpn?_f32)\("
    runs = [(int(hi) - int(lo)) * len(re.findall(exp, body))
            for lo, hi, body in re.findall(loop, src)]
    assert len(re.findall(exp, src)) == len([n for n in runs if n]) <= 2, src
    assert shape[1] <= sum(runs) < shape[1] + 64, src
    programs = {"softmax": (lambda t: t.softmax(-1), _np_softmax, 1),
                "logsumexp": (lambda t: t.logsumexp(-1), _np_logsumexp, 1 + (shape[0] == 1)),
                "layernorm": (lambda t: _layernorm(t, "keepdim"),
                              lambda v: _layernorm(v, "keepdims"), 1)}
    for name, (program, expected, kernels) in programs.items():
        out = program(Tensor(x))
        assert len(out.schedule()) == kernels, name
        got = out.numpy()
        assert got.dtype == dtype, name
        np.testing.assert_allclose(got.astype(np.float64), expected(a), rtol=_RTOL[dtype],
                                   atol=_RTOL[dtype], err_msg=name)
