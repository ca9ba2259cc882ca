"""The ways a training step is run in the optimizer tests that compare with torch: each
(scheduler, backend, optimizer on) as a pytest fixture, and each optimizer paired with torch's.
Callers import torch first (pytest.importorskip)."""

from __future__ import annotations

import pytest
import torch

from rulegrad.nn.optim import SGD, Adam

# (scheduler, backend, optimizer on): the oracle schedules nothing
RUNS = [("rangeify", "c", "1"), ("kernelize", "c", "1"), ("rangeify", "c", "0"),
        ("kernelize", "c", "0"), ("rangeify", "interp", "1"), ("rangeify", "oracle", "1")]


def runs_fixture(runs: list[tuple[str, str, str]]):
    """A fixture `run` that sets each of `runs` for one test."""
    @pytest.fixture(params=runs,
                    ids=lambda p: "-".join(p[:2]) + ("-opt0" if p[2] == "0" else ""))
    def run(request, monkeypatch):
        from rulegrad.runtime.kernelize import using

        scheduler, backend, opt = request.param
        monkeypatch.setenv("RULEGRAD_BACKEND", backend)
        monkeypatch.setenv("RULEGRAD_OPT", opt)
        with using(scheduler):
            yield
    return run


OPTIMIZERS = {
    "sgd": (lambda p: SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "momentum": (lambda p: SGD(p, lr=0.1, momentum=0.9),
                 lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    "adam": (lambda p: Adam(p, lr=0.1), lambda p: torch.optim.Adam(p, lr=0.1)),
    "adamw": (lambda p: Adam(p, lr=0.1, weight_decay=0.1),
              lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1)),
}
