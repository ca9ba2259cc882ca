"""`rulegrad viz`'s page in a real browser: headless Chromium driven by Playwright.

What the page must do is checked against the trace it embeds (read back in Python with `json`,
independently of the page's JavaScript): every firing, clicked, highlights its matched node in
the "before" graph and its made node in the "after" graph, drawn with their neighbours; the
search counts what the trace says it should and keeps the open pass; passes name their kernel
and run; no box's text overflows its box and no graph overflows the page; hostile file names
and rule text do not break the page.

These tests need Debian's chromium (`apt-get install chromium`, at /usr/bin/chromium, or
RULEGRAD_CHROMIUM=PATH) and the Python playwright package (the `test` extra); Playwright's own
browser download is not used. Without them the tests FAIL: a viewer that was never loaded is
not a tested viewer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.long  # a browser, and `rulegrad viz` in child processes

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


def _chromium() -> str:
    for found in (os.environ.get("RULEGRAD_CHROMIUM"), "/usr/bin/chromium",
                  shutil.which("chromium"), shutil.which("chromium-browser")):
        if found and Path(found).is_file():
            return found
    pytest.fail("the viewer tests need chromium: apt-get install -y chromium (or set "
                "RULEGRAD_CHROMIUM to a Chromium binary)", pytrace=False)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the viewer tests need playwright: pip install -e '.[test]'", pytrace=False)
    path = _chromium()
    with sync_playwright() as play:
        b = play.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield b
        b.close()


class Page:
    """A loaded page, the trace it embeds, and the script errors it raised."""

    def __init__(self, browser, html: Path, width: int = 1400):
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(html.as_uri())
        payload = re.search(r'<script id="trace" type="application/json">(.*?)</script>',
                            html.read_text(encoding="utf-8"), re.S)
        assert payload is not None
        self.T = json.loads(payload.group(1))

    def pass_index(self, name: str) -> int:
        return next(k for k, p in enumerate(self.T["passes"]) if p["name"] == name)

    def reach(self, root: int) -> set[int]:
        seen, stack = {root}, [root]
        while stack:
            for s in self.T["nodes"][stack.pop()][3]:
                if s not in seen:
                    seen.add(s)
                    stack.append(s)
        return seen

    def close(self) -> None:
        assert not self.errors, self.errors
        self.page.close()


def _viz(out: Path, *args: str, cwd: Path | None = None, backend: str | None = None) -> Path:
    env = dict(os.environ)
    if backend:
        env["RULEGRAD_BACKEND"] = backend
    run = subprocess.run([sys.executable, "-m", "rulegrad.cli", "viz", "-o", str(out), *args],
                         capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    assert run.returncode == 0, run.stderr
    return out


@pytest.fixture(scope="module")
def attention(tmp_path_factory) -> Path:
    """`rulegrad viz --example attention` on the C backend: scheduling, lowering, optimizing."""
    return _viz(tmp_path_factory.mktemp("viz") / "attention.html", "--example", "attention")


def test_every_firing_clicked_highlights_its_nodes_drawn_in_context(browser, attention) -> None:
    pg = Page(browser, attention)
    page, T = pg.page, pg.T
    assert "attention" in page.inner_text("#title")
    k = pg.pass_index("pm_rangeify")
    after = pg.reach(T["passes"][k]["after"])
    mine = [i for i, f in enumerate(T["firings"]) if f[3] == k]
    # a firing whose made node later firings rewrote again: it is in neither graph of the pass
    i = next(i for i in mine if T["firings"][i][2] not in after)
    _, matched, made, _, origin, final, _ = T["firings"][i]
    page.locator(f"#pass-{k} summary").click()
    page.locator(f'#pass-{k} .firing[data-f="{i}"]').click()
    for graph, node, mark in (("g-before", matched, "match"), ("g-after", made, "made")):
        rect = page.locator(f'#{graph} g[data-id="{node}"] rect')
        assert mark in rect.get_attribute("class").split()
        assert rect.is_visible()
        box, frame = rect.bounding_box(), page.locator(f"#{graph}").bounding_box()
        assert box and frame  # scrolled into its graph's view, not left off-screen
        assert frame["x"] <= box["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"]
        assert frame["y"] <= box["y"] and box["y"] + box["height"] <= frame["y"] + frame["height"]
    # in context: the input node it stands for and the output node it became, with neighbours
    assert page.locator(f'#g-before g[data-id="{origin}"]').count() == 1
    assert page.locator(f'#g-after g[data-id="{final}"]').count() == 1
    panel = page.inner_text("#firing")
    assert T["rules"][T["firings"][i][0]][0] in panel and "rules/rangeify.rules:" in panel
    assert f"matched #{matched}" in panel and f"made #{made}" in panel
    assert "further" in page.inner_text("#why-out")  # not "not in this pass's output graph"
    page.locator("#why-ask").click()  # asks the output node in the made node's place
    assert page.input_value("#why-node") == str(final)
    assert f"on #{final} " in page.inner_text("#why-out")
    assert "not in this pass's output" not in page.inner_text("#why-out")

    # every firing of every pass: its nodes drawn, marked, with their sources and users
    assert _undrawn(page) == []
    pg.close()


# each firing, shown: what is missing (matched or made node unmarked, a source or the
# context not drawn, no user of the output node drawn); [] when all is there
EVERY_FIRING = """() => {
  const bad = [];
  T.firings.forEach(([rid, m, a, k, o, f], i) => {
    if (k < 0) return;
    showFiring(i, k);
    const drawn = (g) => new Set([...document.querySelectorAll(`#${g} g[data-id]`)]
      .map((e) => +e.dataset.id));
    const before = drawn("g-before"), after = drawn("g-after");
    const mark = (g, id) => document.querySelector(`#${g} g[data-id="${id}"] rect`)
      ?.classList || { contains: () => false };
    if (!mark("g-before", m).contains("match")) bad.push([i, "matched not marked"]);
    if (!mark("g-after", a).contains("made")) bad.push([i, "made not marked"]);
    for (const [id, seen] of [[m, before], [a, after]])
      for (const s of T.nodes[id][3]) if (!seen.has(s)) bad.push([i, `source ${s}`]);
    if (o < 0 || !before.has(o) || f < 0 || !after.has(f)) bad.push([i, "no context"]);
    // the output node's users are drawn above it (the graph's root has none)
    const p = T.passes[k], users = [...reach(p.after)].filter((u) =>
      T.nodes[u][3].includes(f));
    if (users.length && !users.some((u) => after.has(u))) bad.push([i, "no user"]);
  });
  return bad;
}"""


def _undrawn(page) -> list:
    return page.evaluate(EVERY_FIRING)[:10]


def test_every_firing_of_a_sharded_program_is_drawn(browser, tmp_path) -> None:
    # multi_pm rewrites ADD(MULTI, MULTI) to MULTI(ADD): results its users' rewrites absorb
    src = tmp_path / "shard.py"
    src.write_text("import numpy as np\nfrom rulegrad import Tensor\n"
                   "a = np.arange(24, dtype=np.float32).reshape(4, 6)\n"
                   "x = Tensor(a).shard(('CPU', 'CPU:1'), axis=0)\n"
                   "assert np.allclose((x * 2 + 1).sum(axis=1).numpy(), (a * 2 + 1).sum(1))\n")
    pg = Page(browser, _viz(tmp_path / "shard.html", str(src), cwd=tmp_path, backend="interp"))
    assert any(f[6] for f in pg.T["firings"])  # some result was absorbed
    assert _undrawn(pg.page) == []
    pg.close()


def test_why_not_on_a_drawn_output_node(browser, attention) -> None:
    pg = Page(browser, attention)
    page, T = pg.page, pg.T
    k = pg.pass_index("pm_rangeify")
    page.locator(f"#pass-{k} summary").click()
    # an output node with a stored explanation for some rule: click it and ask
    key = next(key for key in T["why"] if key.startswith(f"{k}:"))
    _, node, rid = key.split(":")
    page.evaluate(f"selectNode({node})")
    page.locator(f'#g-after g[data-id="{node}"]').click()
    page.select_option("#why-rule", value=rid)
    assert page.inner_text("#why-out").endswith(T["why_text"][T["why"][key]])
    pg.close()


def _hits(T: dict, k: int, q: str) -> list[int]:
    """The firings of pass k the search `q` should list: rule name, op matched or op made."""
    return [i for i, (rid, m, a, owner, *_) in enumerate(T["firings"]) if owner == k and (
        q.lower() in T["rules"][rid][0].lower() or q.upper() in T["nodes"][m][0]
        or q.upper() in T["nodes"][a][0])]


def test_search_covers_ops_made_and_keeps_the_open_pass(browser, attention) -> None:
    pg = Page(browser, attention)
    page, T = pg.page, pg.T
    k = pg.pass_index("pm_rangeify")
    page.locator(f"#pass-{k} summary").click()
    firing = _hits(T, k, "index_reduce")[0]
    page.locator(f'#pass-{k} .firing[data-f="{firing}"]').click()
    page.select_option("#why-rule", index=3)  # a why-not question the search must not reset
    question = (page.input_value("#why-node"), page.input_value("#why-rule"))
    # an op some firing made, named neither by its rule nor by the op it matched
    made_only = next(T["nodes"][a][0] for rid, m, a, owner, *_ in T["firings"] if owner == k
                     and T["nodes"][a][0] not in T["nodes"][m][0]
                     and T["nodes"][a][0].lower() not in T["rules"][rid][0].lower())
    for q in (made_only.capitalize(), "index_reshape", "REDUCE"):
        page.fill("#search", q)
        page.wait_for_function(f"document.querySelector('#pass-{k} .count').textContent"
                               f".startsWith('{len(_hits(T, k, q))} of')")
        assert page.locator(f"#pass-{k}").get_attribute("open") is not None  # still open
        assert page.locator("#passes details[open]").count() == 1
        shown = [int(x) for x in page.locator(f"#pass-{k} .firing[data-f]").evaluate_all(
            "els => els.map((e) => e.dataset.f)")]
        assert shown == _hits(T, k, q)
        assert "pm_rangeify" in page.inner_text("#pass-name")  # the view stays on the pass
        assert (page.input_value("#why-node"), page.input_value("#why-rule")) == question
        # the firing shown stays shown, and stays highlighted if the search lists it
        assert page.locator(f'#g-after g[data-id="{T["firings"][firing][2]}"] rect.made').count()
        assert (page.locator(f'#pass-{k} .firing.active').count() == 1) == (firing in shown)
    for p in range(len(T["passes"])):  # every pass's count follows the search
        assert page.inner_text(f"#pass-{p} .count").startswith(f"{len(_hits(T, p, q))} of")
    pg.close()


def test_passes_are_labelled_with_kernel_and_run(browser, attention) -> None:
    pg = Page(browser, attention)
    page, T = pg.page, pg.T
    texts = page.locator("#passes summary").all_inner_texts()
    kernels = {n[2] for n in T["nodes"] if n[0] == "KERNEL"}  # "Kernel(name)"
    assert len(texts) == len(T["passes"]) and len(kernels) >= 2
    repeated = [k for k, p in enumerate(T["passes"]) if p["name"] in ("to_kernel", "lower", "opt")]
    assert len(repeated) >= 6
    for k in repeated:
        label = T["passes"][k]["label"]
        assert label and f"Kernel({label.split()[-1]})" in kernels
        assert label in texts[k]
    # two passes of one name on one kernel carry their run; the labels tell the rest apart
    seen = {}
    for k, t in enumerate(texts):
        key = re.sub(r" \d+ firings$", "", t.split(": ", 1)[1])
        assert key not in seen, (t, texts[seen[key]])
        seen[key] = k
    pg.close()


def test_args_are_readable_and_nothing_is_clipped(browser, attention) -> None:
    for width in (1400, 1000):
        pg = Page(browser, attention, width)
        page, T = pg.page, pg.T
        for k in (pg.pass_index("lower"), pg.pass_index("split_kernels")):
            page.locator(f"#pass-{k} summary").click()
            for graph in ("#g-before", "#g-after"):
                frame = page.locator(graph).bounding_box()
                assert frame and frame["x"] + frame["width"] <= width  # inside the page
                overflow = page.evaluate(f"""() => {{
                  const el = document.querySelector("{graph}"), svg = el.querySelector("svg");
                  const out = [];
                  if (el.scrollWidth < svg.width.baseVal.value) out.push("svg cut");
                  for (const g of el.querySelectorAll("g[data-id]")) {{
                    const r = g.querySelector("rect").getBBox();
                    for (const t of g.querySelectorAll("text")) {{
                      const b = t.getBBox();
                      if (b.x + b.width > r.x + r.width || b.y + b.height > r.y + r.height + 1)
                        out.push(g.dataset.id + ": " + t.textContent);
                    }}
                  }}
                  return out;
                }}""")
                assert overflow == [], overflow[:5]
            assert page.evaluate("document.querySelector('main').scrollWidth <= "
                                 "document.querySelector('main').clientWidth + 1")
        # a RANGE reads as its kind and number; the full arg of any node is in its panel
        page.locator(f"#pass-{pg.pass_index('lower')} summary").click()
        texts = page.locator("#g-after g[data-id] text").evaluate_all(
            "els => els.map((e) => e.textContent)")
        assert any(re.fullmatch(r"(loop|reduce) r\d+", t) for t in texts), texts
        longest = max((i for i, n in enumerate(T["nodes"]) if n[2]),
                      key=lambda i: len(T["nodes"][i][2]))
        page.evaluate(f"selectNode({longest})")
        assert T["nodes"][longest][2] in page.inner_text("#node")
        pg.close()


def test_hostile_file_names_and_rule_text_keep_the_page_working(browser, tmp_path) -> None:
    hostile = "</script><!--<script>&"
    folder = tmp_path / "proj<!--<script>"
    folder.mkdir()
    (folder / "r<!--<script>.rules").write_text(
        "rules hostile = {\n"
        "  # x * 2 -> x + x: exact in floating point\n"
        f'  mul_two: MUL[x, c:CONST] if c.arg == 2.0 and "{hostile}" != "" -> ADD(x, x)\n'
        "}\n", encoding="utf-8")
    script = folder / "p<!--<script>.py"
    script.write_text(
        "import os\nimport numpy as np\nfrom rulegrad import Tensor, add_rules\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "with add_rules(os.path.join(here, 'r<!--<script>.rules'), after='pm_rangeify'):\n"
        "    a = Tensor(np.arange(6, dtype=np.float32))\n"
        "    assert ((a + 1.0) * 2.0).numpy().tolist() == [2, 4, 6, 8, 10, 12]\n",
        encoding="utf-8")
    out = _viz(tmp_path / "hostile.html", str(script), cwd=tmp_path, backend="interp")
    pg = Page(browser, out)
    page, T = pg.page, pg.T
    assert page.inner_text("#title") == script.name == T["title"]
    assert page.locator("#passes details").count() == len(T["passes"]) > 5
    k = pg.pass_index("hostile")
    page.locator(f"#pass-{k} summary").click()
    page.locator(f"#pass-{k} .firing[data-f]").first.click()
    panel = page.inner_text("#firing")
    assert "mul_two at " in panel and "r<!--<script>.rules:3" in panel
    assert f'"{hostile}"' in panel
    assert page.locator("#g-after rect.made").count() == 1
    pg.close()


def test_viewer_stays_usable_on_a_10000_node_graph(browser, tmp_path) -> None:
    src = tmp_path / "chain.py"
    src.write_text("import numpy as np\nfrom rulegrad import Tensor\n"
                   "t = Tensor(np.ones((8,), np.float32))\n"
                   "for i in range(4000):\n    t = t * 1.0001 if i % 2 else t + 0.5\n"
                   "t.numpy()\n")
    pg = Page(browser, _viz(tmp_path / "chain.html", str(src), cwd=tmp_path, backend="interp"))
    page = pg.page
    assert int(page.inner_text("#summary").split(" nodes")[0].split()[-1]) >= 10_000
    assert page.locator("#passes details[open]").count() == 0  # collapsed by default
    page.fill("#search", "MUL")
    page.wait_for_function("document.querySelector('#pass-0 .count').textContent.includes(' of ')")
    texts = page.locator("#passes summary").all_inner_texts()
    assert any(" of " in t for t in texts)  # counts of matching firings
    k = next(i for i, t in enumerate(texts) if "earliest" in t)
    page.locator("#passes summary").nth(k).click()
    drawn = page.locator("#g-after svg rect").count()
    assert 0 < drawn <= 300  # a neighbourhood, not ten thousand boxes
    assert "nodes in the output" in page.inner_text("#matches")
    page.fill("#search", "")  # the biggest pass's first firing, drawn in its neighbourhood
    k = max(range(len(pg.T["passes"])), key=lambda p: len(pg.reach(pg.T["passes"][p]["after"])))
    i = next(i for i, f in enumerate(pg.T["firings"]) if f[3] == k)
    page.locator(f"#pass-{k} summary").click()
    page.locator(f'#pass-{k} .firing[data-f="{i}"]').click()
    assert page.locator("#g-before rect.match").count() == 1
    assert page.locator("#g-after rect.made").count() == 1
    assert page.locator("#g-after svg rect").count() <= 300
    pg.close()
