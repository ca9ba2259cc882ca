"""Every array the optimizer sizes from a cache fact lives on a thread's stack, so one budget caps
them all (runtime/target.py's `stack_bytes()`), whatever the caches say. With the facts of a
machine with 32 MB of L2 and 64 MB of L3 (and an L1 as large, for the arrays sized from L1), each
kernel's declared arrays together stay within the budget, and the values are numpy's (float64):
attention in float32 and with a float64 scale (its softmax float64), softmax rows, products.

Before the budget, 32 MB of L2 gave the flash kernel 16 MB of panels on the stack: the process
died (SIGSEGV). So the programs run in a child process, where a crash fails the test rather than
ending the suite."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from rulegrad.rules import flash_cost, flash_helpers, stage_helpers
from rulegrad.rules.generated.rangeify import local_max_row
from rulegrad.runtime.target import stack_bytes

BIG_CACHES = {"RULEGRAD_L1_BYTES": "4M", "RULEGRAD_L2_BYTES": "32M", "RULEGRAD_L3_BYTES": "64M"}

# a C array declaration: its element type (const pointers included), name and dimensions
_ARRAY = re.compile(r"(?:^|[;{])\s*((?:const\s+)?(?:unsigned\s+)?[A-Za-z_]\w*)(\s*\*+\s*|\s+)"
                    r"\w+((?:\[\d+\])+)")
_SIZES = {"float": 4, "double": 8, "int64_t": 8, "int32_t": 4, "unsigned char": 1,
          "uint16_t": 2, "_Float16": 2, "rg_vf32": 32, "rg_vf64": 32, "rg_zf32": 64,
          "rg_zf64": 64}


def kernel_stacks(source: str) -> dict[str, int]:
    """The bytes of arrays each C function of `source` declares (all of them, as if all were on
    the stack at once), by function name."""
    stacks: dict[str, int] = {}
    name = ""
    for line in source.splitlines():
        head = re.match(r"(?:static\s+)?(?:inline\s+)?void\s+(\w+)\(", line)
        if head:
            name = head.group(1)
            stacks[name] = 0
            continue
        for m in _ARRAY.finditer(line):
            ctype = m.group(1).removeprefix("const").strip()
            size = 8 if "*" in m.group(2) else _SIZES[ctype]
            for dim in re.findall(r"\d+", m.group(3)):
                size *= int(dim)
            stacks[name] += size
    return stacks


def test_array_sizes_are_read_from_declarations():
    """The parser the tests below rely on reads what the printers declare."""
    src = ("void k0(void *v0)\n{\n  float pb1[512] __attribute__((aligned(64)));\n"
           "    double pa2[6]; const float *xq3[6]; for (;;) {}\n  rg_vf32 acc[6][2];\n}\n"
           "void k1(void *v0)\n{\n  int64_t t[3];\n  x[7] = y[2];\n}\n")
    assert kernel_stacks(src) == {"k0": 2048 + 48 + 48 + 384, "k1": 24}


def test_bounds_from_large_caches_are_capped_by_the_stack(monkeypatch):
    """Each bound the optimizer reads from L1 or L2 for a stack array stops at its share of the
    budget: the flash kernel's panels at half, a local row (float64) at half, a local or staged
    array (float64) at an eighth."""
    for name, value in BIG_CACHES.items():
        monkeypatch.setenv(name, value)
    budget = stack_bytes()
    assert flash_helpers.max_panel_bytes() == budget // 2
    assert flash_cost.local_max_panel() * 4 * 2 <= budget // 2  # K^T and V as float32
    assert local_max_row() * 8 == budget // 2
    assert flash_cost.local_max_array() * 8 == stage_helpers.stage_max() * 8 == budget // 8


# Runs in the child: each program with the big caches' facts; prints one JSON line per program:
# its name, its largest error against numpy's float64, and each kernel's array bytes
_CHILD = r"""
import json, sys
import numpy as np
from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.run import compile_program
from rulegrad.rules.flash_helpers import Flash
from rulegrad.runtime.uop import toposort
sys.path.insert(0, sys.argv[1])
from test_stack_budget import kernel_stacks

def attention(heads, rows, keys, d, scale_dtype, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((heads, rows, d)).astype(np.float32)
    k = rng.standard_normal((heads, keys, d)).astype(np.float32)
    v = rng.standard_normal((heads, keys, d)).astype(np.float32)
    scale = scale_dtype(1) / np.sqrt(scale_dtype(d))
    t = ((Tensor(q) @ Tensor(k).transpose(-1, -2)) * scale).softmax(-1) @ Tensor(v)
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) * float(scale)
    e = np.exp(s - s.max(-1, keepdims=True))
    return t, e / e.sum(-1, keepdims=True) @ v.astype(np.float64)

def softmax(rows, n, dt):
    x = np.random.default_rng(n).standard_normal((rows, n)).astype(dt)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    return Tensor(x).softmax(-1), e / e.sum(-1, keepdims=True)

def matmul(m, k, n, dt):
    rng = np.random.default_rng(m + k + n)
    a, b = rng.standard_normal((m, k)).astype(dt), rng.standard_normal((k, n)).astype(dt)
    return Tensor(a) @ Tensor(b), a.astype(np.float64) @ b.astype(np.float64)

for name, make in json.loads(sys.argv[2]):
    t, want = eval(make)
    items = t.schedule()
    stacks = kernel_stacks(compile_program(items).source)
    flash = {}  # each flash kernel's planned stack (kernels are named k<n>_... in order)
    for n, item in enumerate(items):
        plans = [u.arg for u in toposort(optimize_kernel(lower_only(item.ast)))
                 if isinstance(u.arg, Flash)]
        if plans:
            flash[f"k{n}_"] = sum(p.stack for p in plans)
    got = t.numpy().astype(np.float64)
    err = float(np.max(np.abs(got - want) / (1 + np.abs(want))))
    print(json.dumps({"name": name, "err": err, "dtype": str(t.dtype), "stacks": stacks,
                      "flash": flash}), flush=True)
"""

# (heads, query rows, keys, head size): tiny, prime, batch 1, tall, skinny, long keys, and K
# and V at the budget's bound (keys x size = 64K: 256 KB each as float32); each with a float32
# scale (float32 softmax) and a float64 one (float64 softmax and output)
_ATTENTION = [(1, 7, 13, 5), (3, 97, 331, 37), (1, 256, 4096, 64), (2, 1031, 64, 16),
              (1, 6, 65536, 1), (1, 64, 16384, 64), (2, 61, 2048, 128), (1, 64, 1024, 64),
              (2, 13, 4093, 16)]
PROGRAMS = [
    *[(f"attention {'x'.join(map(str, c))} {dt}", f"attention(*{c}, np.{dt}, {n})")
      for n, c in enumerate(_ATTENTION) for dt in ("float32", "float64")],
    ("softmax float64 2x1048573", "softmax(2, 1048573, np.float64)"),
    ("softmax float32 3x262139", "softmax(3, 262139, np.float32)"),
    ("softmax float64 1x131071", "softmax(1, 131071, np.float64)"),
    ("softmax float64 2x65521", "softmax(2, 65521, np.float64)"),  # rows at the local bound
    ("softmax float32 2x65521", "softmax(2, 65521, np.float32)"),
    ("matmul float32 1x4099x13", "matmul(1, 4099, 13, np.float32)"),
    ("matmul float64 67x1021x257", "matmul(67, 1021, 257, np.float64)"),
]


@pytest.mark.long
def test_kernels_stay_within_the_stack_budget_and_match_numpy():
    """Each program's kernels declare at most `stack_bytes()` of arrays each, a flash kernel at
    most what its plan counted (rules/flash_helpers.py's `stack_used`, which the plan keeps
    within the budget), and its values are numpy's: float64 softmax and products to 1e-12,
    the rest (float32 products inside) to 2e-5. One child runs them all (a crash is one
    failure); every failure is listed. Some flash kernels are run, and some near the bound."""
    env = dict(os.environ, **BIG_CACHES)
    run = subprocess.run([sys.executable, "-c", _CHILD, os.path.dirname(__file__),
                          json.dumps(PROGRAMS)], env=env, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, (run.returncode, run.stdout[-2000:], run.stderr[-3000:])
    found = {r["name"]: r for r in map(json.loads, run.stdout.splitlines())}
    wrong, flashed = [], []
    for name, _ in PROGRAMS:
        r = found[name]
        float64 = "float64" in name.split()
        tol = 1e-12 if float64 and not name.startswith("attention") else 2e-5
        over = {k: used for k, used in r["stacks"].items() if used > stack_bytes()}
        over.update({k: (used, planned) for k, used in r["stacks"].items()
                     for prefix, planned in r["flash"].items()
                     if k.startswith(prefix) and not used <= planned <= stack_bytes()})
        flashed.extend(r["flash"].values())
        if over or not r["stacks"] or r["err"] > tol or \
                r["dtype"] != ("dtypes.float64" if float64 else "dtypes.float32"):
            wrong.append((name, over, r["err"], r["dtype"]))
    assert not wrong, wrong
    assert len(flashed) >= 8 and max(flashed) > stack_bytes() // 2, flashed
