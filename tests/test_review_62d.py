"""rev62d: review of hunt62 (float constants rounded to their dtype; cache ownership).

1. A kernel source kept by the last release (DEBUG=4, or a failed compile) has no closing mark
   naming its entry: hunt62's ownership test left it in the cache for good, so `rulegrad cache
   clear` said it cleared the cache and left every such file, and eviction never removed them
   (the cache grew past RULEGRAD_CACHE_MAX without bound). A markless kept source is the cache's
   when it opens with a prelude the renderer wrote; one ending with another entry's mark, or a
   user's C file, is still left alone.
2. The matcher trie (generator/match_ir.exclusive) let two rules trade places when their
   pattern literals differ, yet 0.1 and 0.10000000149011612 now meet the same float32 CONST
   (a literal is compared as the CONST's dtype holds it): `x * 0.1` with rules first (guarded
   off), second (literal 0.10000000149011612, x + x), third (literal 0.1, x - x) ran third,
   [0, 0, 0] where the written order gives second's [2, -4, 7].
3. The checker rounded an integer pattern literal to a float CONST's dtype (smt._literal_matches)
   where the matchers compare it as Python does (only float literals are rounded): `MUL(x:float16,
   2049) -> ADD(x, x)` was refuted with a CONST 2048.0 that no matcher meets with 2049 ("on the
   oracle: the rule does not fire on this instance").
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

# A kernel source as the last release kept it: the renderer's prelude, no closing mark (and the
# prelude of the releases before d19ab2a, which included system headers)
_OLD_SOURCES = [
    b"\ntypedef __INT8_TYPE__ int8_t; typedef __INT16_TYPE__ int16_t;\n"
    b"typedef __INT32_TYPE__ int32_t;\nvoid k0(float *restrict d0) { d0[0] = 1.0f; }\n",
    b"\n#include <stdint.h>\n#include <stdio.h>\n#include <math.h>\n"
    b"void k0(float *restrict d0) { d0[0] = 1.0f; }\n",
]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    from rulegrad.backends.c import build, run

    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("RULEGRAD_CACHE", str(folder))
    monkeypatch.delenv("RULEGRAD_CACHE_MAX", raising=False)
    build.clear_memory_cache()
    run._programs.clear()
    yield folder
    build.clear_memory_cache()
    run._programs.clear()


def _old_entries(folder: Path) -> list[Path]:
    old = time.time() - 30 * 86400
    paths = []
    for i, data in enumerate(_OLD_SOURCES):
        path = folder / f"rg_{f'{i + 3:x}' * 40}.c"
        path.write_bytes(data)
        os.utime(path, (old, old))
        paths.append(path)
    return paths


def test_a_source_kept_by_the_last_release_is_cleared(cache, capsys):
    from rulegrad.backends.c import cache as disk
    from rulegrad.cli import main

    old = _old_entries(cache)
    assert main(["cache", "clear"]) == 0
    capsys.readouterr()
    assert [p for p in old if p.exists()] == []
    assert disk.entries(cache) == []


def test_sources_kept_by_the_last_release_are_evicted(cache):
    from rulegrad.backends.c import cache as disk

    old = _old_entries(cache)
    assert disk.evict(cache, 1) == len(old)
    assert [p for p in old if p.exists()] == []


def test_a_users_c_file_or_another_entrys_source_stays(cache):
    from rulegrad.backends.c import cache as disk

    mine = cache / f"rg_{'a' * 40}.c"
    mine.write_bytes(b"#include <stdio.h>\nint main(void) { return 0; }\n")
    other = cache / f"rg_{'b' * 40}.c"
    other.write_bytes(_OLD_SOURCES[0] + disk.kept_source_mark("c" * 40))
    text = cache / f"rg_{'d' * 40}.c"
    text.write_bytes(b"typedef __INT8_TYPE__ int8_t; \xff\xfe binary")
    disk.clear()
    assert mine.exists() and other.exists() and text.exists()


def test_rules_whose_literals_round_to_one_constant_keep_their_order(tmp_path):
    import warnings

    import numpy as np

    from rulegrad import Tensor
    from rulegrad.generator.user import UserRulesError, add_rules

    path = tmp_path / "order.rules"
    text = """rules r = {
  first:  MUL(x:float32, 0.1) if x.op is Ops.CONST -> ADD(x, x)
  second: MUL(x:float32, 0.10000000149011612) -> ADD(x, x)
  third:  MUL(x:float32, 0.1) -> SUB(x, x)
}
"""
    path.write_text(text)
    # `third` matches the float32 constant `second` matches, and `second` always fires: the
    # shadowing check says so (hunt63: it compared literals by value and missed it)
    with pytest.raises(UserRulesError, match="rule 'third' can never fire"):
        add_rules(path, "r", after="pm_rangeify", allow_refuted=True)
    path.write_text(text.replace("  third:  MUL(x:float32, 0.1) -> SUB(x, x)\n", ""))
    a = np.array([1.0, -2.0, 3.5], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (both rules are refuted: on purpose)
        ctx = add_rules(path, "r", after="pm_rangeify", allow_refuted=True)
    with ctx:
        got = (Tensor(a) * 0.1).numpy()
    np.testing.assert_array_equal(got, a + a)


def test_exclusive_literals_are_those_no_dtype_holds_alike():
    from rulegrad.generator.match_ir import ConstTest, exclusive

    def ex(a: object, b: object) -> bool:
        return exclusive((ConstTest((), a),), (ConstTest((), b),))

    assert not ex(0.1, 0.10000000149011612)  # one float32
    assert not ex(1e-50, 0.0) and not ex(-1e-50, 0.0)  # both 0.0 in float32 (-0.0 == 0.0)
    assert not ex(70000.0, float("inf"))  # inf in float16
    assert not ex(0.3333333333333333, 0.33325)  # one float16 (0.333251953125)
    assert ex(0.1, 0.2) and ex(1.0, 2.0) and ex(1, 2) and ex(0.5, 1e-8)


def test_an_integer_literal_no_float_holds_matches_no_float_constant(tmp_path):
    import textwrap
    import warnings

    import numpy as np

    from rulegrad import Tensor
    from rulegrad.generator.soundness import check_paths
    from rulegrad.generator.user import add_rules

    path = tmp_path / "ints.rules"
    path.write_text(textwrap.dedent("""\
        rules r = {
          int16: MUL(x:float16, 2049) -> ADD(x, x)
          int32: MUL(x:float32, 16777217) -> ADD(x, x)
          int64: MUL(x:float64, 9007199254740993) -> ADD(x, x)
          exact: MUL(x:float16, 2048) -> ADD(x, x)
        }
        rules s = {
          flt16: MUL(x:float16, 2049.0) -> ADD(x, x)
        }
        """))
    rep = {r.rule.name: r for r in check_paths([str(path)], examples=5).rules}
    for name in ("int16", "int32", "int64"):
        assert rep[name].verdict == "proved", rep[name].line()
    for name in ("exact", "flt16"):  # these do fire (2049.0 is the float16 2048)
        assert rep[name].verdict == "refuted", rep[name].line()
    # the matchers agree: an int literal meets no float16 CONST 2048, a float one does
    a = np.array([1.0, -2.0, 3.5], np.float16)
    for rule, want in (("int16", a * np.float16(2048)), ("flt16", a + a)):
        one = tmp_path / f"{rule}.rules"
        line = next(ln for ln in path.read_text().splitlines() if ln.strip().startswith(rule))
        one.write_text("rules r = {\n" + line + "\n}\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ctx = add_rules(one, "r", after="pm_rangeify", allow_refuted=True)
        with ctx:
            np.testing.assert_array_equal((Tensor(a) * 2049).numpy(), want)
