"""The demo's training run (tools/demo_train.py) converges: the MLP classifies held-out
points it never saw, which only correct gradients and optimizer updates make possible."""

from __future__ import annotations

from rulegrad.tools import demo_train


def test_training_reaches_the_target_accuracy():
    lines: list[str] = []
    losses, acc = demo_train.train(log=lines.append)
    assert acc >= demo_train.TARGET_ACCURACY, (acc, losses)
    assert losses[-1] < 0.25 * losses[0], losses
    assert len(lines) == demo_train.EPOCHS and "loss" in lines[0]  # one line per epoch


def test_run_training_reports_failure(monkeypatch):
    monkeypatch.setattr(demo_train, "EPOCHS", 1)
    monkeypatch.setattr(demo_train, "TARGET_ACCURACY", 1.01)  # unreachable
    lines: list[str] = []
    assert demo_train.run_training(lines.append) is False
    assert "DID NOT CONVERGE" in lines[-1]
