"""`rulegrad viz`: the trace it records, why-not explanations, and the page in a real browser.

The explanation tests state what a rule needs and build nodes that lack exactly that; the trace
tests check the recording against the rules themselves (a firing's node has its rule's root op,
per-pass attempts cover every rule); the browser tests load the page in headless Chromium
(skipped, with the reason, where chromium or playwright is missing: README says how to install).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rulegrad import Ops, Tensor, UOp, dtypes
from rulegrad.dsl import check, parse
from rulegrad.generator.explain import explain
from rulegrad.generator.match_ir import root_ops
from rulegrad.viz import record, render_html, trace_data

RULES = """
rules demo = {
  mul_one:  MUL[x, 1] -> x
  by_one:   IDIV(x, c:CONST) if c.arg == 1 -> x
  same:     SUB(x:ints, x) -> 0
  ints:     AND(x:ints, y) if x.vmin == 0 and x.vmax == 0 -> x
  decline:  MAX(x, y) -> None
}
"""


def _rules() -> dict[str, object]:
    cf = check(parse(RULES, "demo.rules"))
    return {r.name: r for r in cf.rulesets[0].rules}


def _f(v: float) -> UOp:
    return UOp.const(dtypes.float32, v)


def test_explain_names_the_first_test_that_failed() -> None:
    r = _rules()
    a, b = UOp.variable("a", 0, 9), UOp.variable("b", 0, 9)
    x = UOp(Ops.NEG, dtypes.float32, (_f(1.0),))
    assert str(explain(r["mul_one"], {}, x)).startswith("no match: the node is NEG")
    three = UOp(Ops.MUL, dtypes.float32, (x, _f(3.0)))
    # both orders of the commutative pattern fail on the constant: 3.0 is not 1
    assert "the constant 3.0; the rule needs 1" in str(explain(r["mul_one"], {}, three))
    assert explain(r["mul_one"], {}, UOp(Ops.MUL, dtypes.float32, (_f(1.0), x))).verdict \
        == "fires"
    why = explain(r["by_one"], {}, UOp(Ops.IDIV, a.dtype, (a, UOp.const(a.dtype, 3))))
    assert why.verdict == "guard false" and "c.arg == 1" in why.detail
    notconst = UOp(Ops.IDIV, a.dtype, (a, b))
    assert "src[1] is DEFINE_VAR; the rule needs CONST" in str(explain(r["by_one"], {},
                                                                        notconst))
    assert "must be the same node" in str(explain(r["same"], {}, UOp(Ops.SUB, a.dtype, (a, b))))
    fand = UOp(Ops.AND, dtypes.bool, (UOp.const(dtypes.bool, True),) * 2)
    assert "dtype bool, not ints" in str(explain(r["ints"], {}, fand))
    zero = UOp.variable("z", 0, 0)
    assert explain(r["ints"], {}, UOp(Ops.AND, a.dtype, (zero, b))).verdict == "fires"
    assert explain(r["ints"], {}, UOp(Ops.AND, a.dtype, (a, b))).verdict == "guard false"
    assert explain(r["decline"], {}, UOp(Ops.MAX, a.dtype, (a, b))).verdict == "declined"


def _program() -> np.ndarray:
    a = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    return ((a + 0.0) * 2.0).sum(axis=1).numpy()


def test_trace_records_passes_firings_and_zero_attempt_rules(monkeypatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
    trace = record(_program)
    assert trace.passes and trace.firings
    names = [p.name for p in trace.passes]
    assert "pm_rangeify" in names and "split_kernels" in names
    for p in trace.passes:
        assert len(p.attempts) == len(p.matcher.rules)
    data = trace_data(trace, "t")
    for f, row in zip(trace.firings, data["firings"]):  # each firing's owner is its own pass
        owner = trace.passes[row[3]]
        assert owner.name == f.pass_name
        assert owner.start <= data["firings"].index(row) < owner.end
    rules = data["rules"]
    for rid, before, _after, _owner in data["firings"]:
        roots = rules[rid][3]
        if roots is not None:  # a firing's node has one of its rule's root ops
            assert data["nodes"][before][0] in roots, (rules[rid], data["nodes"][before])
    fired = {rules[rid][0] for rid, *_ in data["firings"]}
    zero = {rules[rid][0] for p in data["passes"] for rid, n in zip(p["rules"], p["attempts"])
            if n == 0}
    assert fired and zero  # the statistics keep the rules that were never tried
    assert fired - zero
    # a pass's attempt counts are at least its firings of each rule
    for k, p in enumerate(data["passes"]):
        for j, rid in enumerate(p["rules"]):
            mine = sum(1 for f in data["firings"] if f[0] == rid and f[3] == k)
            assert p["attempts"][j] >= mine, (p["name"], rules[rid])


def test_page_escapes_the_trace() -> None:
    html = render_html({"x": "</script><script>alert(1)</script>"})
    assert "</script><script>alert" not in html


def test_cli_needs_a_program(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "rulegrad.cli", "viz"], capture_output=True,
                         text=True)
    assert run.returncode == 2 and "give a script or --example" in run.stderr
    run = subprocess.run([sys.executable, "-m", "rulegrad.cli", "viz", str(tmp_path / "no.py")],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "no such script" in run.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("from rulegrad import Tensor\nTensor([1.0, 2.0]).reshape(3).numpy()\n")
    run = subprocess.run([sys.executable, "-m", "rulegrad.cli", "viz", str(bad)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "bad.py raised" in run.stderr
    assert "Traceback" not in run.stderr


# ---------------------------------------------------------------------- in a real browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    return sync_playwright


def _page(play, html: Path):
    browser = play.chromium.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"])
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(html.as_uri())
    return browser, page


def _write(tmp_path: Path, name: str, script: str) -> Path:
    src = tmp_path / f"{name}.py"
    src.write_text(script)
    out = tmp_path / f"{name}.html"
    env = {**os.environ, "RULEGRAD_BACKEND": "interp"}
    run = subprocess.run([sys.executable, "-m", "rulegrad.cli", "viz", str(src), "-o", str(out)],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return out


def test_viewer_shows_attention_passes_firings_and_why(tmp_path: Path) -> None:
    sync_playwright = _browser()
    out = tmp_path / "attention.html"
    run = subprocess.run([sys.executable, "-m", "rulegrad.cli", "viz", "--example", "attention",
                          "-o", str(out)], capture_output=True, text=True,
                         env={**os.environ, "RULEGRAD_BACKEND": "interp"})
    assert run.returncode == 0, run.stderr
    with sync_playwright() as play:
        browser, page = _page(play, out)
        assert "attention" in page.inner_text("#title")
        summaries = page.locator("#passes summary")
        names = summaries.all_inner_texts()
        k = next(i for i, t in enumerate(names) if "pm_rangeify" in t)
        summaries.nth(k).click()  # opens the pass: its firings, graphs, statistics
        assert "pm_rangeify" in page.inner_text("#pass-name")
        assert page.locator("#g-after svg rect").count() > 0
        assert page.locator("#g-before svg rect").count() > 0
        rows = page.locator("#stats tr")
        assert rows.count() > 2 and page.locator("#stats tr.zero").count() > 0
        firing = page.locator(f"#pass-{k} .firing[data-f]").first
        rule_name = firing.inner_text().split(":")[0]
        firing.click()
        panel = page.inner_text("#firing")
        assert rule_name in panel and "rules/rangeify.rules:" in panel
        assert "matched #" in panel and "made #" in panel
        # why not: a node of the output and a rule of the pass
        node = page.locator("#g-after g[data-id]").first
        node.click()
        page.select_option("#why-rule", index=0)
        why = page.inner_text("#why-out")
        assert any(w in why for w in ("no match", "guard", "declined", "fires")), why
        shot = Path(os.environ.get("RULEGRAD_VIZ_SCREENSHOT", tmp_path / "viz-attention.png"))
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        browser.close()


def test_viewer_stays_usable_on_a_10000_node_graph(tmp_path: Path) -> None:
    sync_playwright = _browser()
    out = _write(tmp_path, "chain", "import numpy as np\nfrom rulegrad import Tensor\n"
                 "t = Tensor(np.ones((8,), np.float32))\n"
                 "for i in range(4000):\n    t = t * 1.0001 if i % 2 else t + 0.5\n"
                 "t.numpy()\n")
    with sync_playwright() as play:
        browser, page = _page(play, out)
        assert int(page.inner_text("#summary").split(" nodes")[0].split()[-1]) >= 10_000
        assert page.locator("#passes details[open]").count() == 0  # collapsed by default
        page.fill("#search", "MUL")
        page.wait_for_timeout(400)
        summaries = page.locator("#passes summary")
        texts = summaries.all_inner_texts()
        assert any(" of " in t for t in texts)  # counts of matching firings
        k = next(i for i, t in enumerate(texts) if "earliest" in t)
        summaries.nth(k).click()
        drawn = page.locator("#g-after svg rect").count()
        assert 0 < drawn <= 300  # a neighbourhood, not ten thousand boxes
        assert "nodes in the output" in page.inner_text("#matches")
        browser.close()


def test_root_ops_of_rules_are_stored(monkeypatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
    data = trace_data(record(_program), "t")
    r = _rules()["mul_one"]
    assert sorted(op.name for op in root_ops(r.pattern)) == ["MUL"]
    assert any(row[3] == ["MUL"] for row in data["rules"])
