"""backward over a fresh batch in one walk of the loss (issue 33, step 66).

The schedule key's walk of the loss (runtime/gradient_forms.py's `key_walk`) is backward's order
too: before, backward made a toposort of the loss and the gradient's key then went over that
order again. A gradient rebuilt from its form's template adds its nodes' key entries as the
first graph of the form made them, with no walk of those nodes. Counted with Python and C
calls, never seconds, in a fresh interpreter; values against torch over several steps for each
way a step may differ from the last one's form.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optimizer_runs import assert_as_torch as _assert_as_torch  # noqa: E402
from optimizer_runs import mlp_batch, mlp_loss, mlp_models  # noqa: E402
from optimizer_runs import step_both as _step  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime import gradient_forms, plans  # noqa: E402

TESTS = Path(__file__).resolve().parent


def _sqrt_loss(lib, p, x, y):
    """A squared error whose gradient adds a float constant of its own (exp2's ln 2, which
    the forward does not hold): the template's nodes lift a float into the step's key."""
    relu = (lambda t: t.relu()) if lib is Tensor else torch.relu
    exp2 = (lambda t: t.exp2()) if lib is Tensor else torch.exp2
    h = relu(x @ p["w1"] + p["b1"])
    h = (h * h + 0.7).sqrt()
    out = exp2(h @ p["w2"] + p["b2"]) * 0.3
    return ((out - y) * (out - y)).mean()


def _set_lr(opt, topt, lr: float) -> None:
    opt.lr = lr
    for g in topt.param_groups:
        g["lr"] = lr


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam", "adamw"])
def test_rebuilt_gradients_with_floats_of_their_own(kind):
    """Gradients rebuilt from their template over fresh batches, with their lifted floats added
    to the step's key from the template (an lr schedule refills the step plan's floats by
    their slots), the batch shape changing between: as torch's, step after step."""
    ours, opt, theirs, topt = mlp_models(kind, seed=31)
    rng = np.random.default_rng(32)
    before = gradient_forms.stats["rebuilt"]
    for b, lr in [(6, 0.1), (6, 0.1), (6, 0.05), (6, 0.03), (3, 0.03), (6, 0.02), (1, 0.02),
                  (6, 0.1)]:
        _set_lr(opt, topt, lr)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, b), loss_fn=_sqrt_loss)
    assert gradient_forms.stats["rebuilt"] - before >= 4


def _scaled(scale: float):
    def loss(lib, p, x, y):
        return _sqrt_loss(lib, p, x, y) * scale
    return loss


def test_constants_apart_and_a_second_loss():
    """`loss * 0.5` then `loss * 0.25` and another loss, alternating: each its own gradient
    form and template, never another's entries."""
    ours, opt, theirs, topt = mlp_models("momentum", seed=33)
    rng = np.random.default_rng(34)
    fns = [_scaled(0.5), _scaled(0.25), mlp_loss, _sqrt_loss]
    for i in range(12):
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 5), loss_fn=fns[i % len(fns)])


def test_gradient_and_backward_of_one_form():
    """`Tensor.gradient` (no key walk of backward's) and `backward` over graphs of one form,
    alternating: the gradient's key is one, whichever made the walk."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=35)
    rng = np.random.default_rng(36)
    derived = gradient_forms.stats["derived"]
    for i in range(6):
        x_np, y_np = mlp_batch(rng, 4)
        if i % 2:
            _step(ours, opt, theirs, topt, x_np, y_np, loss_fn=_sqrt_loss)
            continue
        loss = _sqrt_loss(Tensor, ours, Tensor(x_np), Tensor(y_np))
        got = loss.gradient(*ours.values())
        want = _sqrt_loss(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
        wants = torch.autograd.grad(want, list(theirs.values()))
        for g, w in zip(got, wants):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
    # (one key: derived once at most, none if an earlier test of this process derived it)
    assert gradient_forms.stats["derived"] - derived <= 1


def test_leaf_assigned_and_realized_loss_between_steps():
    """A parameter assigned new values between steps, and a loss read before backward (its
    realized value differentiated through its graph: a root other than the loss's own node,
    so no key walk of it is used)."""
    ours, opt, theirs, topt = mlp_models("momentum", seed=37)
    rng = np.random.default_rng(38)
    for i in range(7):
        x_np, y_np = mlp_batch(rng, 6)
        if i == 3:
            new = rng.standard_normal((7, 5)).astype(np.float32)
            ours["w2"].assign(Tensor(new)).realize()
            with torch.no_grad():
                theirs["w2"].copy_(torch.from_numpy(new))
        if i % 3 != 2:
            _step(ours, opt, theirs, topt, x_np, y_np, loss_fn=_sqrt_loss)
            continue
        topt.zero_grad()
        want = _sqrt_loss(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
        want.backward()
        topt.step()
        opt.zero_grad()
        loss = _sqrt_loss(Tensor, ours, Tensor(x_np), Tensor(y_np))
        loss.item()  # (realized first: backward expands it back to its graph)
        loss.backward()
        opt.step(loss)
        _assert_as_torch(loss, want, ours, theirs)


def test_rebuilt_gradient_keyed_as_a_walk_keys_it():
    """The key a rebuilt gradient adds from its template (entries, float slots, the nodes'
    numbering) is the one the key's walk gives the same nodes in the same order (`go_on`, the
    slow path, as the first graph of the form was keyed): checked over fresh batches and
    batch sizes, the first graph of each size derived, the next ones rebuilt."""
    from rulegrad.runtime.autograd import compute_gradient, seed_gradient
    from rulegrad.runtime.schedule_cache import KeyWalk, go_on, note_step

    ours = mlp_models("sgd", seed=43)[0]
    rng = np.random.default_rng(44)
    targets = [p.uop for p in ours.values()]
    rebuilt = 0
    try:
        for b in (6, 6, 6, 1, 1, 6):
            x, y = (Tensor(a) for a in mlp_batch(rng, b))
            root = _sqrt_loss(Tensor, ours, x, y).uop
            walk = gradient_forms.key_walk(root)
            before = gradient_forms.stats["rebuilt"]
            grads = compute_gradient(root, seed_gradient(root, None, targets), targets,
                                     list(walk.index), walk)
            rebuilt += gradient_forms.stats["rebuilt"] - before
            assert set(grads) == set(targets)
            ref = KeyWalk(walk.lift)
            go_on(ref, [], list(walk.index))
            assert list(ref.index.values()) == list(walk.index.values())
            assert ref.entries == walk.entries
            assert [(dt, v.hex()) for dt, v in ref.floats] == \
                [(dt, v.hex()) for dt, v in walk.floats]
            assert len(ref.floats) > 0
    finally:
        note_step(None)  # (the walk noted for a step that does not follow)
    assert rebuilt >= 3, rebuilt


COUNT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from call_counts import python_calls
from optimizer_runs import mlp_batch, mlp_loss, mlp_models
from rulegrad import Tensor
ours, opt, theirs, topt = mlp_models("momentum", seed=39)
rng = np.random.default_rng(40)
out = []
for i in range(6):
    x, y = (Tensor(a) for a in mlp_batch(rng, 6))
    opt.zero_grad()
    loss = mlp_loss(Tensor, ours, x, y)
    out.append(python_calls(loss.backward))
    opt.step(loss)
    loss.item()
print(json.dumps(out[-1]))
"""


def test_a_warm_backward_walks_the_loss_once():
    """A warm fresh-batch backward walks the loss's graph once (the key's walk, which is its
    order) and not the template's nodes: no toposort, two key walks (the loss's, then the
    seed's one constant), and the step plan keyed after it. Before, a toposort then the key's
    pass over it and a pass over the template's nodes: 1178 calls, C ones counted; now under
    800. (A fresh interpreter: what earlier tests left alive changes the counts.)"""
    got = subprocess.run([sys.executable, "-c", COUNT, str(TESTS)], capture_output=True,
                         text=True, check=True)
    calls = json.loads(got.stdout.strip().splitlines()[-1])
    assert calls.get("gradient_forms.py:gradient_by_form") == 1
    assert "uop.py:toposort" not in calls
    assert calls.get("schedule_cache.py:go_on") == 2
    assert sum(calls.values()) < 800, sum(calls.values())


SAME_COUNT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from call_counts import python_calls
from optimizer_runs import mlp_batch, mlp_loss, mlp_models
from rulegrad import Tensor
ours, opt, theirs, topt = mlp_models("sgd", seed=45)
x, y = (Tensor(a).realize() for a in mlp_batch(np.random.default_rng(46), 6))
out = []
for i in range(6):
    opt.zero_grad()
    loss = mlp_loss(Tensor, ours, x, y)
    out.append(python_calls(loss.backward))
    opt.step(loss)
    loss.item()
print(json.dumps(out[-1]))
"""


def test_a_warm_backward_over_one_batch_walks_nothing():
    """One batch every step: the loss is the very nodes again, whose order the last backward
    kept and whose gradient is read back, so backward walks nothing, not even the key's walk
    (which a fresh batch's backward makes)."""
    got = subprocess.run([sys.executable, "-c", SAME_COUNT, str(TESTS)], capture_output=True,
                         text=True, check=True)
    calls = json.loads(got.stdout.strip().splitlines()[-1])
    # (what was counted is backward's work, whose absences below mean something)
    assert calls.get("tensor.py:backward") == 1 and calls.get("uop.py:is_kept") == 1
    assert "schedule_cache.py:go_on" not in calls
    assert "uop.py:toposort" not in calls


def test_step_plan_runs_after_the_one_walk_backward():
    """The walk backward hands on keys the optimizer step's plan as before: warm steps are the
    plan's runs."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=41)
    rng = np.random.default_rng(42)
    hits = []
    for _ in range(6):
        before = plans.stats["step_hits"]
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6), loss_fn=_sqrt_loss)
        hits.append(plans.stats["step_hits"] - before)
    assert hits[3:] == [1, 1, 1], hits
