"""opt.rules' fetch_ahead (rules/ahead_helpers.py): a row loop whose rows are read by two passes
or more (a softmax's max then its exps, a logsumexp's, a layernorm's sum then its squares)
fetches the next row beside each contiguous vector load of the later passes, which compute
from the cache while memory would idle; a row loop of one pass, of rows too long for the
level-1 cache beside the next, or of rows shorter than a vector reduce's block fetches nothing.
Counted in the C (prefetch statements, the row they fetch), never timed; the values are
numpy's."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.render import render_kernel

_PREFETCH = re.compile(r"__builtin_prefetch\(\(const void \*\)\(\(uintptr_t\)&(p\d+)\[(t\d+)\] \+ "
                       r"(\d+) \* sizeof \1\[\2\]\)\);")


@pytest.fixture(autouse=True)
def _machine(monkeypatch):
    """A 512-bit target with a 32 KB level-1 data cache, whatever this machine is."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")


def _rows(rows: int, cols: int) -> np.ndarray:
    """Normal rows scaled by 4, with +inf in row 1 and a NaN and -inf in row 2 (where there are
    that many rows)."""
    x = np.random.default_rng(rows * 7919 + cols).standard_normal((rows, cols)) * 4
    if rows > 1:
        x[1, cols // 3] = np.inf
    if rows > 2:
        x[2, cols - 1], x[2, 0] = np.nan, -np.inf
    return x.astype(np.float32)


_FAMILIES = {
    "softmax": lambda t: t.softmax(-1),
    "logsumexp": lambda t: t.logsumexp(-1),
    "layernorm": lambda t: t.layernorm(),
}


def _numpy(family: str, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if family == "layernorm":
            d = x - x.mean(-1, keepdims=True)
            return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)
        m = x.max(-1, keepdims=True)
        if family == "softmax":
            return np.exp(x - m) / np.exp(x - m).sum(-1, keepdims=True)
        m = np.where(np.isinf(m), 0, m)  # (logsumexp's: an infinite max subtracts nothing)
        return (np.log(np.exp(x - m).sum(-1, keepdims=True)) + m)[..., 0]


def _kernels(t: Tensor) -> list[tuple[list[str], str]]:
    """Each kernel's actions (DEBUG=2's) and C."""
    return [(done, render_kernel(opt, "k").source) for opt, done in optimized_kernels(t)]


@pytest.mark.parametrize("family", sorted(_FAMILIES))
@pytest.mark.parametrize("shape", [(3, 100), (97, 1031), (1024, 1024), (64, 2048), (4096, 1024)])
def test_rows_read_twice_fetch_the_next_row_once_per_vector(family: str, shape: tuple):
    """Rows of 100 to 2048 float32 read by two passes: the row loop fetches ahead (DEBUG=2), and
    its C has one prefetch statement, the row's vector load's address one row on (`cols`
    elements), in the loop of that load; the first pass (the block library's max or sum of
    the row) and the output's loop (gcc's vectors) have none."""
    cols = shape[1]
    (kernel,) = _kernels(_FAMILIES[family](Tensor(_rows(*shape))))
    done, source = kernel
    assert any(a.startswith("FETCH AHEAD r0") for a in done), done
    fetches = _PREFETCH.findall(source)
    assert len(fetches) == 1 and source.count("__builtin_prefetch") == 1, source
    buf, at, ahead = fetches[0]
    assert int(ahead) == cols
    # the prefetch sits beside the vector load of the same address, in the same loop body
    load = re.search(rf"rg_[vz]load_f32\(&{buf}\[{at}\]\)", source)
    assert load is not None, source
    between = source[load.end():source.index("__builtin_prefetch")]
    assert "for (" not in between and "}" not in between, source


@pytest.mark.parametrize("family, shape, why", [
    ("softmax", (100003, 13), "rows shorter than a vector reduce's block"),
    ("softmax", (4, 32), "rows shorter than a vector reduce's block"),
    ("layernorm", (5, 4096), "a row and the next past half the level-1 cache"),
    ("softmax", (3, 4099), "a row and the next past half the level-1 cache"),
    ("sum", (1024, 1024), "one pass over each row"),
    ("max", (97, 1031), "one pass over each row"),
])
def test_rows_read_once_too_long_or_too_short_fetch_nothing(family: str, shape: tuple, why: str):
    x = Tensor(_rows(*shape))
    t = x.sum(-1) if family == "sum" else x.max(-1) if family == "max" else _FAMILIES[family](x)
    for done, source in _kernels(t):
        assert not any(a.startswith("FETCH AHEAD") for a in done), (why, done)
        assert "__builtin_prefetch" not in source, why


def test_the_level1_cache_size_decides_the_longest_row(monkeypatch):
    """Rows of 4096 float32 (16 KB, 32 KB with the next) fetch ahead with a 64 KB level-1
    cache, not with a 32 KB one: a machine fact, not a constant."""
    x = _rows(5, 4096)
    counts = {}
    for size in ("32K", "64K"):
        monkeypatch.setenv("RULEGRAD_L1_BYTES", size)
        (kernel,) = _kernels(Tensor(x).layernorm())
        counts[size] = kernel[1].count("__builtin_prefetch")
    assert counts == {"32K": 0, "64K": 1}


@pytest.mark.parametrize("family", sorted(_FAMILIES))
@pytest.mark.parametrize("shape", [(3, 100), (97, 1031), (1024, 1024), (64, 2048), (5, 4096),
                                   (100003, 13), (7, 1), (1, 4096), (13, 4099)])
def test_values_are_numpys(family: str, shape: tuple, monkeypatch):
    """The C's values against numpy's (in float64), NaN and infinities included, rows that
    fetch ahead (a 64 KB level-1 cache: the rows of 4096 too) and rows that do not."""
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "64K")
    x = _rows(*shape)
    with np.errstate(all="ignore"):
        got = _FAMILIES[family](Tensor(x)).numpy()
    rtol = {"softmax": 4e-6, "logsumexp": 1e-6, "layernorm": 1e-5}[family]
    np.testing.assert_allclose(got, _numpy(family, x), rtol=rtol, atol=1e-6, equal_nan=True)
