"""`opt.weight_decay = v` (torch's name) sets the decay the step uses, `wd`: it had made an
attribute no step read, so the run drifted from torch's silently (rev66g)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optimizer_runs import mlp_batch, mlp_models, step_both  # noqa: E402


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam", "adamw"])
def test_weight_decay_set_by_torchs_name_is_the_steps(kind):
    """Two steps, then the decay set by its torch name on both sides, then three more: the
    losses and parameters are torch's after each step, and the name reads back the value."""
    ours, opt, theirs, topt = mlp_models(kind)
    if kind == "adam":  # torch's Adam couples the decay to the gradient; ours is AdamW's
        topt = torch.optim.AdamW(list(theirs.values()), lr=0.1, weight_decay=0.0)
    rng = np.random.default_rng(1)
    for step in range(5):
        if step == 2:
            opt.weight_decay = 0.3
            topt.param_groups[0]["weight_decay"] = 0.3
            assert opt.weight_decay == opt.wd == 0.3
        step_both(ours, opt, theirs, topt, *mlp_batch(rng, 6))
