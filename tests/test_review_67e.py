"""Review of adv67's float32 gradient tolerance (rev67e): a constant off by a small factor is
refuted in float32 and float64, for an elementwise op, a summing one and a movement one. The
oracle is torch's autograd (the gradient checker's reference); the rules are user rules."""

# ruff: noqa: E501 (rule texts are kept on one line each, as a user writes them)
from __future__ import annotations

import textwrap

import pytest

from rulegrad.generator.soundness import check_paths

# The summing allowance was 2·n·u·sum |ctx| over the whole upstream gradient, for every op that
# is not elementwise: a PERMUTE of (2, 3, 4, 5) (n = 120, sum |ctx| ~ 60) got ~1.5e-3 of slack,
# so a permute gradient off by 5e-4 passed though it sums nothing.
RULES = """
use rulegrad.rules.gradient_helpers: argsort, sum_to

rules perm4_5e4 = {  # check: gradient
  perm4_5e4: PERMUTE(x):float32 as p if len(p.shape) == 4 -> (ctx.permute(argsort(p.arg)) * 1.0005,)  # torch.permute
}
rules perm4_1e4 = {  # check: gradient
  perm4_1e4: PERMUTE(x):float32 as p if len(p.shape) == 4 -> (ctx.permute(argsort(p.arg)) * 1.0001,)  # torch.permute
}
rules perm4_right = {  # check: gradient
  perm4_right: PERMUTE(x):float32 as p if len(p.shape) == 4 -> (ctx.permute(argsort(p.arg)),)  # torch.permute
}
rules log64 = {  # check: gradient
  log64: LOG(x):float64 -> (ctx / x * 1.0001,)  # torch.log
}
rules expand64 = {  # check: gradient
  expand64: EXPAND(x):float64 -> (sum_to(ctx, x.shape) * 1.0001,)  # torch.expand
}
rules expand32_3d = {  # check: gradient
  expand32_3d: EXPAND(x):float32 as e if len(e.shape) == 3 -> (sum_to(ctx, x.shape) * 1.0001,)  # torch.expand
}
rules expand32_3d_right = {  # check: gradient
  expand32_3d_right: EXPAND(x):float32 as e if len(e.shape) == 3 -> (sum_to(ctx, x.shape),)  # torch.expand
}
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    pytest.importorskip("torch", reason="torch is the gradient checker's reference")
    path = tmp_path_factory.mktemp("rev67e") / "rev67e.rules"
    path.write_text(textwrap.dedent(RULES).lstrip("\n"))
    return {r.rule.name: r for r in check_paths([str(path)], examples=10, seed=0).rules}


@pytest.mark.parametrize("name", ["perm4_5e4", "perm4_1e4", "log64", "expand64", "expand32_3d"])
def test_a_gradient_off_by_a_small_factor_is_refuted(reports, name):
    r = reports[name]
    assert (r.method, r.verdict) == ("gradient", "refuted"), r.line()


@pytest.mark.parametrize("name", ["perm4_right", "expand32_3d_right"])
def test_its_right_twin_passes(reports, name):
    r = reports[name]
    assert (r.method, r.verdict) == ("gradient", "passed"), f"{r.line()}\n{r.counterexample}"
