"""The multi-device bookkeeping costs a program nothing once its last value on another device,
or sharded, has died (runtime/device_use.py; issue 33).

Before, sharding one tensor turned the device checks and the multi pass on for the rest of the
process: some 400 Python calls more per training step, forever. The work is counted (Python
calls), never timed, in a fresh process (an earlier test of this worker may keep a value on
another device alive); every value is checked against numpy.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.device import DeviceMismatch, in_use

TESTS = Path(__file__).resolve().parent

_CHILD = """
import gc, json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from call_counts import python_calls
from rulegrad import Tensor
from rulegrad.nn.optim import SGD
from rulegrad.runtime.device import in_use

rng = np.random.default_rng(0)
w = {{"w1": rng.standard_normal((13, 7)) * 0.3, "b1": rng.standard_normal(7) * 0.1,
     "w2": rng.standard_normal((7, 5)) * 0.3, "b2": rng.standard_normal(5) * 0.1}}
x = rng.standard_normal((6, 13)).astype(np.float32)
y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 6)]
p = {{k: Tensor(v.astype(np.float32), requires_grad=True).realize() for k, v in w.items()}}
tx, ty = Tensor(x).realize(), Tensor(y).realize()
opt = SGD(list(p.values()), lr=0.05)
out = {{"losses": [], "want": [], "calls": []}}

def want_loss():  # the step's loss in float64 numpy, from the parameters now
    v = {{k: t.numpy().astype(np.float64) for k, t in p.items()}}
    z = np.maximum(x @ v["w1"] + v["b1"], 0) @ v["w2"] + v["b2"]
    zs = z - z.max(1, keepdims=True)
    return float(-((zs - np.log(np.exp(zs).sum(1, keepdims=True))) * y).sum(1).mean())

def step():
    out["want"].append(want_loss())
    opt.zero_grad()
    logits = (tx @ p["w1"] + p["b1"]).relu() @ p["w2"] + p["b2"]
    loss = -(logits.log_softmax(1) * ty).sum(1).mean()
    loss.backward()
    opt.step(loss)
    out["losses"].append(loss.item())

def counted():
    calls = python_calls(step)
    out["calls"].append(sum(n for k, n in calls.items() if not k.startswith("C:")))

for _ in range(3):
    step()
counted()
out["flags_before"] = dict(in_use)
a = rng.standard_normal((4, 6)).astype(np.float32)
s = Tensor(a).shard(("CPU", "CPU:1"), axis=0)
out["flags_alive"] = dict(in_use)
out["sharded_ok"] = bool(np.allclose((s * 2 + 1).sum(1).numpy(), (a * 2 + 1).sum(1), atol=1e-5))
counted()  # (a step while the sharded tensor lives: the checks are on)
del s
gc.collect()
out["flags_after"] = dict(in_use)
counted()
print(json.dumps(out))
"""


def _child_output(source: str) -> dict:
    """What a child process running `source` (in a fresh interpreter: no device used before)
    printed as its last line, as JSON."""
    run = subprocess.run([sys.executable, "-c", source.format(tests=str(TESTS))],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_step_after_a_sharded_tensor_died_makes_as_few_python_calls():
    out = _child_output(_CHILD)
    np.testing.assert_allclose(out["losses"], out["want"], rtol=1e-4, atol=1e-6)
    assert out["sharded_ok"]
    off = {"devices": False, "multi": False}
    assert out["flags_before"] == off and out["flags_after"] == off, out
    assert out["flags_alive"] == {"devices": True, "multi": True}, out
    before, alive, after = out["calls"]
    # while it lives a step pays for the checks and the multi pass (some 400 calls); once it is
    # gone, nothing (before: `after` stayed `alive`'s, for the rest of the process)
    assert alive > before + 100, out["calls"]
    assert after <= before + 10, out["calls"]


def test_a_value_on_another_device_made_after_the_checks_went_off_is_checked():
    """The checks come back with the next value on another device: an op over two devices is
    refused when it is built, named, as ever."""
    a_np = np.arange(6, dtype=np.float32)
    s = Tensor(a_np).shard(("CPU", "CPU:1"), axis=0)
    np.testing.assert_allclose((s + 1).numpy(), a_np + 1)
    del s
    gc.collect()
    for dev in ("CPU:2", "CPU:3"):
        b = Tensor(a_np * 3, device=dev)  # (host data placed there: its buffer is counted)
        assert in_use["devices"]
        with pytest.raises(DeviceMismatch, match=f"different devices CPU and {dev}"):
            Tensor(a_np) + b
        np.testing.assert_allclose((b * 2).to("CPU").numpy(), a_np * 6)
    c = Tensor(a_np).to("CPU:1")  # (a copy's destination: its DEVICE node is counted)
    assert in_use["devices"]
    with pytest.raises(DeviceMismatch, match="different devices CPU and CPU:1"):
        Tensor(a_np) * c
    np.testing.assert_allclose((c - 1).numpy(), a_np - 1)


# a graph over a buffer on another device, realized (twice: the second run would replay its
# plan), must not be kept alive by that plan: once the tensor dies, the checks go off
_CHILD_PLANNED = _CHILD.split("for _ in range(3):")[0] + """
for _ in range(3):
    step()
counted()
a = rng.standard_normal((4, 6)).astype(np.float32)
b = Tensor(a, device="CPU:1")
out["placed_ok"] = [bool(np.allclose((b * 2 + 1).sum(1).numpy(), (a * 2 + 1).sum(1), atol=1e-5))
                    for _ in range(3)]
out["flags_alive"] = dict(in_use)
del b
gc.collect()
out["flags_after"] = dict(in_use)
counted()
print(json.dumps(out))
"""


def test_a_realized_graph_on_another_device_does_not_keep_the_checks_on():
    out = _child_output(_CHILD_PLANNED)
    np.testing.assert_allclose(out["losses"], out["want"], rtol=1e-4, atol=1e-6)
    assert out["placed_ok"] == [True] * 3
    assert out["flags_alive"]["devices"], out
    # (before: the graph's plan held the CPU:1 buffer, so the checks stayed on, ~170 calls a step)
    assert out["flags_after"] == {"devices": False, "multi": False}, out
    before, after = out["calls"]
    assert after <= before + 10, out["calls"]
