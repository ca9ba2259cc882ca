"""The optimizer fuzzer's programs write in place through a transpose (`a += b.T`,
`a.assign(a.T + 1)`, `a[1:] += ...`, `a[:, 1:] = ...`, square and not, rows that are no
multiple of a vector's width), and the optimizer's check runs those in-place kernels: a
kernel that reads the buffer it writes. transpose_store's last block once overlapped the one
before it and stored those rows again (rev49b): an in-place update read them back updated and
added b twice, and neither the fuzzer nor the rule's check had an in-place program to see it.
Seeds 3 and 7 are such programs (97 x 600 and 37 x 521 float32 `a += b.T`); numpy is the
oracle of the fuzzer, the kernel before the rule (and the kernel interpreter) the check's."""

from __future__ import annotations

import pytest

from rulegrad.dsl import ast as A
from rulegrad.dsl import load
from rulegrad.generator import optdiff
from rulegrad.generator.interp import interpret_ruleset
from rulegrad.generator.soundness import Checker
from rulegrad.rules import RULES_DIR
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort
from rulegrad.tools.fuzz import CLASS_GENERATORS, opt_schedule, run_case

SEEDS = (3, 7)


@pytest.fixture(autouse=True)
def _l1(monkeypatch):
    """A 32 KB L1, transpose_store's threshold the same on every machine (its columns, 521 to
    1000, are past half of it per pass)."""
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")


def _writes_itself(k: optdiff.OptKernel) -> bool:
    """The kernel loads from the buffer it stores to (DEFINE_GLOBAL 0)."""
    return any(n.op is Ops.INDEX and n.src[0].op is Ops.DEFINE_GLOBAL and n.src[0].arg == 0
               and any(u.op is Ops.LOAD and u.src[0] is n for u in toposort(k.ast))
               for n in toposort(k.ast))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_fuzzer_runs_an_in_place_transpose_and_agrees_with_numpy(seed):
    case = CLASS_GENERATORS["opt"](seed)
    assert "writes += [(" in case.source and ".T" in case.source
    out = run_case(case, count_actions=True)
    assert out.status == "ok", out.message
    assert "transpose_store" in out.actions


@pytest.mark.parametrize("seed", SEEDS)
def test_the_check_of_transpose_store_runs_its_in_place_kernels(seed):
    opt = load(str(RULES_DIR / "opt.rules"))
    rule = next(r for rs in opt.rulesets for r in rs.rules if r.name == "transpose_store")
    alone = interpret_ruleset(A.CheckedRuleSet("transpose_store", (rule,),
                                               opt.rulesets[0].path), Checker().helpers(opt))
    corpus = [k for k in optdiff.corpus_of(opt_schedule(seed), f"opt seed {seed}")
              if _writes_itself(k)]
    res = optdiff.check_rule("transpose_store", alone, corpus)
    assert res.fired, "transpose_store changed no in-place kernel"
    assert not res.failures and not res.errors, (res.failures, res.errors)
