"""Review 56a: this session's device-use counts, step walk and schedule-cache table keys, attacked
for wrong answers. Every value is checked against numpy or torch.

- runtime/schedule_cache.py keys its tables by the form's hash and compares the full key once:
  two forms whose hashes collide must each get their own schedule;
- runtime/device_use.py turns the device checks off once no value on another device is alive:
  a value that comes back (unpickled, copied) must turn them on again and be refused beside a
  CPU value, and multi-device programs must stay right as the checks go off and on;
- runtime/origins.py no longer walks a root that is a chain of one-source nodes over a DETACH
  that is no target: over a DETACH that IS a target (a detached tensor that requires a
  gradient), the realized value must keep its graph.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime import schedule_cache


@pytest.fixture
def colliding(monkeypatch: pytest.MonkeyPatch):
    """Every form's hash is 7: the tables hold one slot per float values, whatever the form."""
    monkeypatch.setenv("RULEGRAD_PLANS", "0")  # (each realize goes through the schedule cache)
    monkeypatch.delenv("RULEGRAD_SCHEDULE_CACHE", raising=False)
    monkeypatch.setattr(schedule_cache, "hash", lambda key: 7, raising=False)
    schedule_cache.clear()
    yield
    schedule_cache.clear()


_PROGRAMS = [  # (rulegrad, numpy): one shape, other forms; some with floats a form lifts
    (lambda x, y: x + y, lambda x, y: x + y),
    (lambda x, y: x * y, lambda x, y: x * y),
    (lambda x, y: (x - y).exp(), lambda x, y: np.exp(x - y)),
    (lambda x, y: x.sum(0) + y.sum(0), lambda x, y: x.sum(0) + y.sum(0)),
    (lambda x, y: x * 2.5 + y, lambda x, y: x * 2.5 + y),
    (lambda x, y: x * 3.5 - y, lambda x, y: x * 3.5 - y),
    (lambda x, y: (x * 2.5).max(1), lambda x, y: (x * 2.5).max(1)),
]


def test_forms_whose_hashes_collide_get_their_own_schedules(colliding) -> None:
    """A hit compares the form's whole key: with every hash equal, each program still computes
    its own value, round after round (the later form takes the slot, the earlier is scheduled
    again: a miss, never another form's kernels)."""
    rng = np.random.default_rng(56)
    for _ in range(3):
        for f, want in _PROGRAMS:
            a, b = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(2))
            got = f(Tensor(a), Tensor(b)).numpy()
            np.testing.assert_allclose(got, want(a, b), rtol=1e-5, atol=1e-6)
    # the same form twice in a row (fresh inputs) is a hit: the table still serves
    hits = schedule_cache.stats["hits"]
    for _ in range(2):
        a, b = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(2))
        np.testing.assert_allclose((Tensor(a) * 2.5 + Tensor(b)).numpy(), a * 2.5 + b,
                                   rtol=1e-5, atol=1e-6)
    assert schedule_cache.stats["hits"] > hits


_CHILD = """
import copy, gc, json, pickle
import numpy as np
from rulegrad import Tensor
from rulegrad.runtime.device import DeviceMismatch, in_use

out = {"refused": [], "values": [], "off": []}
rng = np.random.default_rng(0)
a = rng.standard_normal((4, 6)).astype(np.float32)
b = rng.standard_normal((4, 6)).astype(np.float32)

def off():
    gc.collect()
    return not in_use["devices"] and not in_use["multi"]

def refused(f):
    try:
        f()
    except DeviceMismatch:
        return True
    return False

for cycle in range(3):
    axis = cycle % 2
    s = Tensor(a).shard(("CPU", "CPU:1"), axis=axis)
    t = Tensor(b).shard(("CPU", "CPU:1"), axis=axis)
    out["values"].append([((s * 2 + t).sum(1).numpy()).tolist(), ((a * 2 + b).sum(1)).tolist()])
    del s, t
    out["off"].append(off())
    c = Tensor(a, device="CPU:2")  # (host data placed there: a buffer on another device)
    blob = pickle.dumps(c)
    del c
    out["off"].append(off())  # (nothing on another device is alive: the checks are off)
    back = pickle.loads(blob)  # the same value again, in a buffer unpickled on CPU:2
    out["refused"].append(refused(lambda: back + Tensor(b)))
    copied = copy.copy(back.uop.base.arg)  # a copy of that buffer (one of its own, on CPU:2)
    del back
    gc.collect()
    from rulegrad.runtime.uop import UOp
    from rulegrad.runtime.ops import Ops
    again = Tensor(UOp(Ops.BUFFER, copied.dtype, (), copied).reshape((4, 6)))
    del copied
    out["refused"].append(refused(lambda: again * Tensor(b)))
    out["values"].append([(again * 3).to("CPU").numpy().tolist(), (a * 3).tolist()])
    del again
    out["off"].append(off())
print(json.dumps(out))
"""


def test_a_value_back_on_another_device_after_the_checks_went_off_is_refused_beside_cpu():
    """In a fresh process (a value an earlier test keeps alive would keep the checks on): a
    tensor on CPU:2 pickled, its original dead and the checks off; unpickled (and its buffer
    copied) it is on CPU:2 again, so an op with a CPU tensor is refused, named, and sharded
    programs between are right as the checks go off and on."""
    run = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    for got, want in out["values"]:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert out["off"] == [True] * 9, out["off"]
    assert out["refused"] == [True] * 6, out["refused"]


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_value_read_through_an_optimizer_steps_assign_has_the_new_parameters_gradient(momentum):
    """`Tensor.realize(*opt.schedule_step(), c)` with `c = w.reshape(12).contiguous()` built
    after schedule_step: c is the updated w, read through the step's ASSIGN (a target while the
    step is realized, so the walk must not skip it as a chain over an ASSIGN). A gradient of a
    loss over c then reaches w, as torch's does over `w.reshape(12).clone()` after its step:
    it was zeros (the kept graph went through the ASSIGN, which passes none), step after step."""
    torch = pytest.importorskip("torch")
    from rulegrad.nn.optim import SGD

    rng = np.random.default_rng(5)
    w_np = rng.standard_normal((3, 4)).astype(np.float32)
    w = Tensor(w_np, requires_grad=True).realize()
    tw = torch.tensor(w_np, requires_grad=True)
    opt = SGD([w], lr=0.1, momentum=momentum)
    topt = torch.optim.SGD([tw], lr=0.1, momentum=momentum)
    for _ in range(3):
        x = rng.standard_normal((2, 3)).astype(np.float32)
        opt.zero_grad()
        (Tensor(x) @ w).tanh().sum().backward()
        steps = opt.schedule_step()
        c = w.reshape(12).contiguous()
        Tensor.realize(*steps, c)
        (g,) = (c * c * 0.5 + c.exp()).sum().gradient(w)
        topt.zero_grad()
        torch.tanh(torch.tensor(x) @ tw).sum().backward()
        topt.step()
        tc = tw.reshape(12).clone()
        (tg,) = torch.autograd.grad((tc * tc * 0.5 + tc.exp()).sum(), tw)
        np.testing.assert_allclose(c.numpy(), tc.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, atol=1e-5)
