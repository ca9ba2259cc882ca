"""The roofline's work counts (backends/c/roofline.py) against formulas written by hand, and
its machine figures and DEBUG=1 line (present and positive; never compared with a time)."""

from __future__ import annotations

import numpy as np

from rulegrad import Tensor
from rulegrad.backends.c import roofline


def _work(t: Tensor) -> roofline.Work:
    (item,) = t.schedule()
    return roofline.work(item.ast, [b.size * b.dtype.itemsize for b in item.bufs])


def test_matmul_work_is_2mnk_flops_and_its_buffers():
    m, k, n = 12, 40, 24
    w = _work(Tensor(np.ones((m, k), np.float32)) @ Tensor(np.ones((k, n), np.float32)))
    assert w.flops == 2 * m * n * k
    assert w.nbytes == 4 * (m * k + k * n + m * n)


def test_elementwise_and_window_work():
    a, b, c = (Tensor(np.ones((8, 64), np.float32)) for _ in range(3))
    assert _work(a * b + c).flops == 2 * 8 * 64
    x = Tensor(np.ones((4, 16, 16), np.float64))
    # a 2x2 max-pool: one MAX per input value
    w = _work(x.reshape(4, 8, 2, 8, 2).max(axis=(2, 4)))
    assert w.flops == 4 * 16 * 16 and w.nbytes == 8 * (4 * 16 * 16 + 4 * 8 * 8)


def test_integer_kernels_count_no_flops():
    a = Tensor(np.arange(64, dtype=np.int32))
    assert _work(a * a + a).flops == 0


def test_machine_figures_and_debug_line(monkeypatch, capsys):
    m = roofline.machine()
    assert m.copy_gbs > 0 and m.fma_gflops > 0
    monkeypatch.setenv("DEBUG", "1")
    Tensor(np.arange(1000, dtype=np.float32) * 3).sqrt().numpy()
    err = capsys.readouterr().err
    assert "GB/s" in err and "% of copy" in err and "% of FMA peak" in err


def test_one_kernel_softmax_counts_each_element_once():
    # max, x - max, exp (into the kernel-local array, filled once per row), sum, e * (1 / sum):
    # five float ops per element, whatever loops read the array, and one reciprocal per row
    r, n = 6, 40
    assert _work(Tensor(np.ones((r, n), np.float32)).softmax(-1)).flops == 5 * r * n + r
