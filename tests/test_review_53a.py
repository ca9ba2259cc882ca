"""Review 53a: the printed kernels' index across real processes, and reduce nests that must not
be unnested.

- The index (backends/c/kernel_index.py) is off in the suite; here it is on in fresh
  subprocesses sharing one temporary cache: a user's rule set added in one process and not in
  the next (and back), and a setting the optimizer or printer reads changed between two
  processes. The oracle is numpy for values, and a fresh print (the index off, an empty cache)
  for the kernels' C.
- opt.rules' unnest_reduce joins a reduce of a reduce by the same op; a nest of two ops (a sum
  of maxima, a max of sums, a max of scaled maxima) over a far and a contiguous axis must stay a
  nest: against numpy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.dtype import dtypes

# ---------------------------------------------------------------- the index, across processes
# x * 3 -> x: wrong on purpose, so that whether it ran shows in the values
WRONG = """rules wrong = {
  drop_three: MUL[x, c:CONST] if c.arg == 3.0 -> x
}
"""

USER_PROGRAM = """
import sys, warnings
import numpy as np
import rulegrad
from rulegrad import Tensor
warnings.simplefilter("ignore")
if sys.argv[1] == "rule":
    rulegrad.add_rules(sys.argv[2], "wrong", after="pm_rangeify", allow_refuted=True)
a = np.arange(12, dtype=np.float32).reshape(3, 4)
print(((Tensor(a) * 3.0).sum(axis=1) + 1).numpy().tolist())
"""

# the C of every kernel a program printed (or read from the index), and its values
SOURCE_PROGRAM = """
import hashlib, json
import numpy as np
import rulegrad.backends.c.run as run
sources = []
real = run.build_library
def recording(rendered, *args, **kw):
    sources.extend(r.source for r in rendered)
    return real(rendered, *args, **kw)
run.build_library = recording
from rulegrad import Tensor
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 96)).astype(np.float32)
w = rng.standard_normal((96, 33)).astype(np.float32)
outs = [(Tensor(x) @ Tensor(w)).relu().sum(axis=0), Tensor(x).softmax(axis=1),
        Tensor(x).cumsum(axis=1), Tensor(x.reshape(4, 16, 2, 48)).max(axis=(0, 3)),
        (Tensor(x) * 2.5 + 1.0).exp().mean(axis=1)]
values = [o.numpy().tolist() for o in outs]
print(json.dumps({"sources": sources, "values": values}))
"""


def _run(code: str, args: list[str], cache: str, index: str, **env: str) -> str:
    full = {**os.environ, "RULEGRAD_CACHE": cache, "RULEGRAD_KERNEL_INDEX": index, **env}
    for name in ("DEBUG", "RULEGRAD_BEAM", "RULEGRAD_MATCHER", "RULEGRAD_SPEC"):
        full.pop(name, None)  # (each turns the index off)
    done = subprocess.run([sys.executable, "-c", code, *args], env=full, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_users_rule_in_one_process_is_not_replayed_in_the_next(tmp_path):
    """A process that adds a rule set prints kernels the set changed; the next process, without
    it, must not read them back from the index, nor the one after, with it again, the plain
    ones."""
    rules = tmp_path / "wrong.rules"
    rules.write_text(WRONG)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    plain, ruled = (a * 3).sum(axis=1) + 1, a.sum(axis=1) + 1
    cache = str(tmp_path / "cache")
    for mode in ("rule", "none", "rule", "none"):
        got = np.array(json.loads(_run(USER_PROGRAM, [mode, str(rules)], cache, "1")),
                       dtype=np.float32)
        np.testing.assert_array_equal(got, ruled if mode == "rule" else plain, err_msg=mode)


@pytest.mark.parametrize("setting", ["RULEGRAD_OPT=0", "RULEGRAD_BLOCK_LIBRARY=0",
                                     "RULEGRAD_L2_BYTES=64K", "RULEGRAD_THREADS=1"])
def test_a_setting_changed_between_processes_prints_what_a_fresh_process_prints(tmp_path,
                                                                                 setting):
    """A process with the index on, after one under the default settings filled it, prints the
    C that a process with the index off prints under the new setting, and numpy's values."""
    var, value = setting.split("=")
    shared, fresh = str(tmp_path / "shared"), str(tmp_path / "fresh")
    _run(SOURCE_PROGRAM, [], shared, "1")
    second = json.loads(_run(SOURCE_PROGRAM, [], shared, "1", **{var: value}))
    want = json.loads(_run(SOURCE_PROGRAM, [], fresh, "0", **{var: value}))
    assert len(second["sources"]) == len(want["sources"])
    for i, (got, ref) in enumerate(zip(second["sources"], want["sources"])):
        assert got == ref, f"{setting}: kernel {i} is another process's print"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 96)).astype(np.float32)
    w = rng.standard_normal((96, 33)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    oracle = [np.maximum(x.astype(np.float64) @ w, 0).sum(axis=0), e / e.sum(axis=1, keepdims=True),
              np.cumsum(x.astype(np.float64), axis=1), x.reshape(4, 16, 2, 48).max(axis=(0, 3)),
              np.exp(x.astype(np.float64) * 2.5 + 1.0).mean(axis=1)]
    for got, ref in zip(second["values"], oracle):
        np.testing.assert_allclose(np.array(got), ref, rtol=1e-4, atol=1e-3)


# ---------------------------------------------------------------- nests of two ops
# (program, numpy's): a reduce over axis 0 (far) read by one over the last axis (contiguous):
# the shape unnest_reduce joins when both are one op
NESTS = {
    "sum of maxima": (lambda t: t.max(axis=0).sum(axis=-1),
                      lambda a: a.max(axis=0).astype(np.float64).sum(axis=-1)),
    "max of sums": (lambda t: t.sum(axis=0).max(axis=-1),
                    lambda a: a.astype(np.float64).sum(axis=0).max(axis=-1)),
    "max of minima": (lambda t: t.min(axis=0).max(axis=-1), lambda a: a.min(axis=0).max(axis=-1)),
    "max of maxima": (lambda t: t.max(axis=0).max(axis=-1), lambda a: a.max(axis=0).max(axis=-1)),
    "max of scaled maxima": (lambda t: (t.max(axis=0) * 2).max(axis=-1),
                             lambda a: (a.max(axis=0) * 2).max(axis=-1)),
    "int sum of int maxima": (lambda t: t.clip(-1e6, 1e6).cast(dtypes.int32).max(axis=0)
                              .sum(axis=-1),
                              lambda a: np.clip(a, -1e6, 1e6).astype(np.int32).max(axis=0)
                              .sum(axis=-1)),
}


@pytest.mark.parametrize("shape", [(1021, 3, 2, 33), (97, 5, 3, 64), (13, 2, 1, 7),
                                   (1, 3, 1, 17)])
@pytest.mark.parametrize("name", NESTS)
def test_a_nest_of_two_ops_is_not_joined(shape, name):
    rng = np.random.default_rng(53)
    x = (rng.standard_normal(shape) * 1000).astype(np.float32)
    flat = x.reshape(-1)
    flat[::29] = -0.0
    flat[::31] = -np.inf
    program, oracle = NESTS[name]
    got = program(Tensor(x)).numpy()
    want = oracle(x)
    assert got.shape == want.shape
    if np.issubdtype(want.dtype, np.integer):
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    else:
        # (float32 sums of values in the thousands: within a unit of numpy's float64 sum)
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-5, atol=1.0)


# ---------------------------------------------------------------- the block library, in process
def _block_calls(monkeypatch) -> list[tuple[str, ...]]:
    """The block-library functions each kernel printed (or found) for a float32 product calls,
    recorded as the program's kernels are built; the product against numpy's."""
    from rulegrad.backends.c import run

    calls: list[tuple[str, ...]] = []
    real = run.build_library

    def recording(rendered, *args, **kw):
        calls.extend(r.calls for r in rendered)
        return real(rendered, *args, **kw)

    monkeypatch.setattr(run, "build_library", recording)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((512, 256)).astype(np.float32)
    got = (Tensor(a) @ Tensor(b)).numpy()
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    return calls


def test_turning_the_block_library_off_in_process_prints_the_product_anew(monkeypatch):
    """RULEGRAD_BLOCK_LIBRARY=0 set after a product ran: the same product, run again in the same
    process, calls no block-library function (its program, and its realize plan, were kept under
    the other setting: neither key had it)."""
    monkeypatch.delenv("RULEGRAD_BLOCK_LIBRARY", raising=False)
    assert any(_block_calls(monkeypatch)), "the product calls the block library by default"
    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", "0")
    calls = _block_calls(monkeypatch)
    assert calls and not any(calls), f"kernels kept from the library's setting: {calls}"
