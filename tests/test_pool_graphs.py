"""max_pool2d's graph built once per (shape, dtype, arguments) and re-read over each input
(runtime/pool_graphs.py): values against numpy for a second and third input of a kept shape
(the stand-in replaced, never read), the very nodes the Tensor ops build (so the same kernels
and gradient), and a bounded number of kept graphs."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from rulegrad import Tensor
from rulegrad.runtime import device, pool_graphs

# (shape, kernel, stride, padding, dilation, ceil_mode): apart, overlapping, padded, dilated,
# prime sizes, batch 1, ceil
CASES = [((1, 16, 32, 32), 2, None, 0, 1, False), ((8, 3, 28, 28), 2, None, 0, 1, False),
         ((1, 64, 56, 56), 3, 2, 1, 1, False), ((2, 3, 13, 17), 3, 1, 1, 2, False),
         ((1, 5, 11, 7), (3, 2), (2, 1), (1, 0), 1, True), ((3, 1, 9, 9), 4, 3, 2, 1, False)]


def _pool_ref(x: np.ndarray, k, s, p, d, ceil: bool) -> np.ndarray:
    """numpy: pad with -inf (the dtype's least value), windows, max; ceil_mode's extra last
    window where it starts inside the padded input, as torch."""
    k = (k, k) if isinstance(k, int) else k
    s = k if s is None else ((s, s) if isinstance(s, int) else s)
    p = (p, p) if isinstance(p, int) else p
    d = (d, d) if isinstance(d, int) else d
    least = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    outs = []
    for ax in range(2):
        n, span = x.shape[2 + ax] + 2 * p[ax], d[ax] * (k[ax] - 1) + 1
        o = (n - span + (s[ax] - 1 if ceil else 0)) // s[ax] + 1
        if ceil and (o - 1) * s[ax] >= x.shape[2 + ax] + p[ax]:
            o -= 1
        outs.append(o)
    extra = [max(0, (outs[ax] - 1) * s[ax] + d[ax] * (k[ax] - 1) + 1 - x.shape[2 + ax] - 2 * p[ax])
             for ax in range(2)]
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])),
                constant_values=least)
    w = sliding_window_view(xp, (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1), axis=(2, 3))
    w = w[:, :, ::s[0], ::s[1], ::d[0], ::d[1]][:, :, :outs[0], :outs[1]]
    return w.max(axis=(4, 5))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dt", [np.float32, np.int32])
def test_kept_graph_reads_each_new_input(case, dt):
    shape, k, s, p, d, ceil = case
    rng = np.random.default_rng(len(shape) + shape[-1])
    for _ in range(3):  # the first call builds the graph, the next two reuse it
        x = (rng.standard_normal(shape) * 100).astype(dt)
        got = Tensor(x).max_pool2d(k, stride=s, padding=p, dilation=d, ceil_mode=ceil).numpy()
        np.testing.assert_array_equal(got, _pool_ref(x, k, s, p, d, ceil))


@pytest.mark.parametrize("case", CASES)
def test_kept_graph_is_the_graph_the_ops_build(monkeypatch, case):
    # over a buffer, and over a computed value (relu(x) * 2): the same nodes (hash-consed) as
    # max_pool2d's own ops build (the path taken when devices are in use), so the same kernels
    # and the same gradient
    shape, k, s, p, d, ceil = case
    x = Tensor(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    for inp in (x, x.relu() * 2):
        def pool(inp=inp):
            return inp.max_pool2d(k, stride=s, padding=p, dilation=d, ceil_mode=ceil).uop

        got, again = pool(), pool()
        with monkeypatch.context() as m:
            m.setitem(device.in_use, "devices", True)
            direct = pool()
        assert got is direct and again is direct


def test_kept_graphs_are_bounded(monkeypatch):
    # (an earlier test in this process that used a second device turns reuse off for good)
    monkeypatch.setitem(device.in_use, "devices", False)
    monkeypatch.setitem(device.in_use, "multi", False)
    for n in range(pool_graphs.KEPT + 5):
        Tensor(np.ones((1, 1, 4, 4 + n), np.float32)).max_pool2d(2)
    assert pool_graphs.kept() == pool_graphs.KEPT
