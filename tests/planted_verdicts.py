"""The verdicts a planted rule must get from `rulegrad check`'s example path: a wrong rule is
refuted with a replayable counterexample, its sound original passes on enough examples (shared
by the instance-family tests: views and sharded tensors, kernel-level nodes)."""

from __future__ import annotations


def assert_refuted(r) -> None:
    assert r.verdict == "refuted" and r.method == "examples", r.line()
    assert r.counterexample and "rewritten to:" in r.counterexample


def assert_passes(r) -> None:
    assert r.verdict == "passed" and r.examples >= 50, f"{r.line()}\n{r.counterexample}"
