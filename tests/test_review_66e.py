"""Review of fast66 (the optimizer's kept answers, runtime/uop.py's `keeping_answers`): a kernel
optimized with answers kept is the kernel optimized with none kept (the definition), on programs
outside bench/render_hashes.py's corpus."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.backends.c import opt
from rulegrad.backends.c.lower import lower_only
from rulegrad.runtime.kernelize import using


def _t(*shape: int) -> Tensor:
    return Tensor(np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32))


PROGRAMS = {
    # scans whose rows are interleaved (rules/scan_helpers.py `_interleaved`): the kept free
    # ranges table holds the nodes of every root asked before, and `_interleaved` read all of
    # them (the un-scanned term's LOADs, which do not read the scan range), so the rows were
    # left uninterleaved inside optimize_kernel only
    "cumsum 131x131": lambda: _t(131, 131).cumsum(1),
    "cumsum 127x257": lambda: _t(127, 257).cumsum(1),
    "cumsum down 97x40": lambda: _t(97, 40).cumsum(0),
    "cumsum 6x101x7": lambda: _t(6, 101, 7).cumsum(1),
    "cummax 31x200": lambda: _t(31, 200).cummax(1)[0],
    "argmax 17x33": lambda: _t(17, 33).argmax(1),
    "causal attention": lambda: _t(1, 37, 8).scaled_dot_product_attention(
        _t(1, 37, 8), _t(1, 37, 8), is_causal=True),
    "softmax 1x97": lambda: _t(1, 97).softmax(-1),
    "attention 2x256x64": lambda: _t(2, 256, 64).scaled_dot_product_attention(
        _t(2, 256, 64), _t(2, 256, 64)),
    "matmul 257x129x67": lambda: _t(257, 129) @ _t(129, 67),
    "matmul batch 1": lambda: _t(1, 509) @ _t(509, 263),
    "layernorm 9x1000": lambda: _t(9, 1000).layernorm(axis=1),
    "symbolic rows": lambda: _sym(lambda t: (t - t.mean(0)).exp().sum(1) + t.max(0).sum()),
    "symbolic cumsum": lambda: _sym(lambda t: t.cumsum(1)),
}


def _sym(f):
    n = Variable("n", 1, 64).bind(37)
    return f(_t(64, 131).shrink(((0, n), None)))


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kept_answers_optimize_as_none_kept(name, scheduler, monkeypatch):
    with using(scheduler):
        items = PROGRAMS[name]().schedule()
    lows = [lower_only(item.ast) for item in items]
    kept = [opt.optimize_kernel(low) for low in lows]
    monkeypatch.setattr(opt, "keeping_answers", contextlib.nullcontext)
    plain = [opt.optimize_kernel(low) for low in lows]
    assert [k is p for k, p in zip(kept, plain)] == [True] * len(lows)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_raise_inside_optimize_kernel_drops_its_table(error, monkeypatch):
    """A helper that raises inside the block (a rule's error, ^C) leaves no table set; inside
    an enclosing block, the enclosing one's table stays."""
    from rulegrad.runtime.uop import keeping_answers, kept_answers

    low = lower_only(_t(7, 13).softmax(-1).schedule()[-1].ast)
    seen = []

    def raising() -> bool:
        seen.append(kept_answers())
        raise error("a rule failed")

    monkeypatch.setattr(opt, "optimizer_on", raising)
    with pytest.raises(error):
        opt.optimize_kernel(low)
    assert seen[-1] is not None and kept_answers() is None
    with keeping_answers():
        outer = kept_answers()
        with pytest.raises(error):
            opt.optimize_kernel(low)
        assert seen[-1] is outer and kept_answers() is outer
    assert kept_answers() is None


def test_the_kept_free_ranges_table_refuses_a_walk():
    """Inside a block free_ranges' mapping holds every root's nodes, not root's: iterating it
    (as scan_helpers' `_interleaved` did) raises instead of reading other roots' nodes; reads
    at root's nodes are answered."""
    from rulegrad.runtime.loops import free_ranges
    from rulegrad.runtime.uop import keeping_answers, toposort

    low = lower_only(_t(7, 13).softmax(-1).schedule()[-1].ast)
    with keeping_answers():
        deps = free_ranges(low)
        assert all(isinstance(deps[n], frozenset) for n in toposort(low))
        for walk in (iter, lambda d: d.keys(), lambda d: d.items(), lambda d: d.values()):
            with pytest.raises(TypeError):
                walk(deps)
        with pytest.raises(TypeError):
            any(n for n in deps)
    assert set(free_ranges(low)) == set(toposort(low))  # (outside a block: root's nodes)
