"""Review of round 49's kernel changes (rev49b): each test failed on the merge it reviews (m49).

numpy is the oracle."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import stack_bytes


@pytest.mark.parametrize("shape", [(37, 1021), (41, 997), (19, 509)])
@pytest.mark.parametrize("dt", ["float32", "float64", "int16"])
def test_in_place_add_of_a_transpose(shape, dt, monkeypatch):
    """`a += b.T` with rows far apart along b's loop: transpose_store runs a's rows in blocks of
    a vector's width, the last block overlapping the one before it when the block does not
    divide the rows (37 = 4 * 8 + 5). Stored again, those rows read a back already updated
    and added b twice. (A 32 KB L1: the action's threshold, the same on every machine.)"""
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")
    rng = np.random.default_rng(0)
    n, m = shape
    a0 = rng.integers(-100, 100, (n, m)).astype(dt)
    b = rng.integers(-100, 100, (m, n)).astype(dt)
    a = Tensor(a0.copy()).realize()
    a += Tensor(b).T
    np.testing.assert_array_equal(a.realize().numpy(), a0 + b.T)


@pytest.mark.parametrize("idt", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("n", [200, 300, 40000])
def test_narrow_int_index_into_a_long_axis(idt, n):
    """x[i] with i of a dtype too narrow for the axis (uint8 token ids into 300 rows, an int8
    -1 into 200): negatives counted from the end as t + n in t's dtype raised OverflowError
    (n does not fit int8); unsigned indices are never negative."""
    info = np.iinfo(idt)
    i = np.array([v for v in (0, 1, -1, -2, info.min, info.max, n - 1, -n) if
                  info.min <= v <= info.max and -n <= v < n], idt)
    x = np.random.default_rng(0).standard_normal((n, 3)).astype(np.float32)
    np.testing.assert_array_equal(Tensor(x)[Tensor(i)].numpy(), x[i])
    got = Tensor(x)[:, None][Tensor(i), 0, 1:].numpy()
    np.testing.assert_array_equal(got, x[:, None][i, 0, 1:])


# twenty softmaxes of float64 rows of 65536 summed (one kernel, each exp a kernel-local row
# array of 512 KB); prints the largest error against numpy
_MANY_ROWS = """
import numpy as np
from rulegrad import Tensor
x = np.random.default_rng(0).standard_normal((2, 65536)) * 0.1
t, out, want = Tensor(x), None, 0
for j in range(1, 21):
    e = (t * j).exp()
    out = e / e.sum(-1, keepdim=True) if out is None else out + e / e.sum(-1, keepdim=True)
    ee = np.exp(x * j)
    want = want + ee / ee.sum(-1, keepdims=True)
print(float(np.abs(out.numpy() - want).max()))
"""


def _many_softmaxes(k: int, n: int) -> Tensor:
    t, out = Tensor(np.zeros((2, n))), None
    for j in range(1, k + 1):
        e = (t * j).exp()
        out = e / e.sum(-1, keepdim=True) if out is None else out + e / e.sum(-1, keepdim=True)
    return out


def test_a_kernels_local_arrays_fit_the_stack_together(monkeypatch):
    """runtime/target.py's stack budget is for all the arrays of a kernel together, but each
    kernel-local row array was bounded alone (local_max_row): twenty exp rows of 65536 float64
    in one kernel declared 10 MB on the stack."""
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "16M")
    for item in _many_softmaxes(20, 65536).schedule():
        arrays = [n for n in item.ast.toposort() if n.op is Ops.DEFINE_LOCAL]
        used = sum(math.prod(int(r.src[0].arg) for r in n.src[1:]) * n.dtype.itemsize
                   for n in arrays)
        assert used <= stack_bytes(), (len(arrays), used)


@pytest.mark.long
def test_many_local_rows_do_not_overflow_the_stack():
    """The same program run (in a child process, so that a crash fails this test rather than
    ending the suite): with 10 MB of arrays on an 8 MB stack it died (SIGSEGV)."""
    env = dict(os.environ, RULEGRAD_L2_BYTES="16M", RULEGRAD_THREADS="2")
    run = subprocess.run([sys.executable, "-c", _MANY_ROWS], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert float(run.stdout.split()[-1]) < 1e-12
