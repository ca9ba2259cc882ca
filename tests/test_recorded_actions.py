"""The optimizer's actions (a reduce unrolled, merged, split, unnested, threaded or interchanged,
a scale out of a max, a transpose tile, rows across lanes, a masked exp, a product packed, an
attention head flashed) are recorded by the helper that takes each, on the optimized kernel (its
SINK's tag): each recorded line is checked here against the kernel before and after the
optimizer, as an independent reading of the ASTs, and DEBUG=2 prints them. A helper run outside
the optimizer, or a probe that refuses (rows_across unrolls a row's reduces before its cost says
no; interchange asks whether a STORE packs), records nothing."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.rules.choices import DEFAULT, chosen
from rulegrad.rules.opt_helpers import unrolled
from rulegrad.rules.row_block_helpers import ROWS_MAX, ROWS_MIN
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def _rng(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def _ids(text: str) -> list[int]:
    return [int(i) for i in re.findall(r"r(\d+)", text)]


def _ranges(k: UOp) -> dict[int, UOp]:
    return {n.arg[0]: n for n in k.toposort() if n.op is Ops.RANGE}


def _reduces(k: UOp) -> list[UOp]:
    return [n for n in k.toposort() if n.op is Ops.REDUCE]


def _size(r: UOp) -> int:
    return int(r.src[0].arg)


def _out(st: UOp) -> list[int]:
    """A STORE's output loops' ids."""
    return [r.arg[0] for r in st.src[2:]]


def _store_of(k: UOp, ids: list[int]) -> UOp:
    """The one STORE of k whose output loops include every one of `ids`."""
    (st,) = [n for n in k.toposort() if n.op is Ops.STORE and set(ids) <= set(_out(n))]
    return st


def _two_exps(k: UOp) -> int:
    return sum(n.op is Ops.WHERE and n.src[1].op is Ops.EXP and n.src[2].op is Ops.EXP
               for n in k.toposort())


def _check_line(line: str, low: UOp, opt: UOp, peeled: frozenset[int] = frozenset()) -> str:
    """Assert what `line` says of the kernel against its ASTs; the action's name. `peeled`: the
    loops a PEEL line of the kernel split into parts (gone after, whatever made them)."""
    before, after = _ranges(low), _ranges(opt)
    name = line.split()[0]
    if m := re.fullmatch(r"UNROLL (\w+) over ([r\d ]+) \((\d+) values\)", line):
        ids = _ids(m[2])
        # (a loop of the kernel, or one an action made: a split's tail, a fresh id)
        assert all((i in before or i > max(before)) and i not in after for i in ids), line
    elif m := re.fullmatch(r"MERGE (\w+) over ([r\d ]+) into ([r\d ]+)", line):
        ids, into = _ids(m[2]), _ids(m[3])
        red = [r for r in _reduces(opt) if [x.arg[0] for x in r.src[1:]] == into]
        assert red and red[0].arg.name == m[1], line
        assert math.prod(_size(before[i]) for i in ids) == math.prod(_size(after[i]) for i in into)
        assert not set(ids) - set(into) & set(after), line
    elif m := re.fullmatch(r"MERGE loops ([r\d ]+) into ([r\d ]+)", line):
        ids, into = _ids(m[1]), _ids(m[2])
        # (a peeled kernel's nests share their outer loops: merged in one part, kept in another)
        assert peeled or not set(ids) - set(into) & set(after), line
        assert set(into) - peeled <= set(after), line
    elif m := re.fullmatch(r"PEEL r(\d+) \((\d+) iterations\) into ([r\d ]+) \(([\d +]+)\)",
                           line):
        r, n, parts = int(m[1]), int(m[2]), _ids(m[3])
        sizes = [int(x) for x in m[4].split(" + ")]
        assert len(parts) == len(sizes) >= 2 and sum(sizes) == n and r in peeled, line
        assert (r in before and _size(before[r]) == n) or r > max(before), line
        # (new loops, past every id of the kernel and of the lines before: none reused)
        assert all(i > max(before) for i in parts), line
        assert any(i in after for i in parts), line
    elif m := re.fullmatch(r"SPLIT (\w+) over r(\d+) \((\d+) values\) into r(\d+) x r(\d+) "
                           r"\((\d+) blocks of (\d+)(?: \+ a tail of (\d+))?\)", line):
        old, n, outer, inner, blocks, block, tail = (int(x or 0) for x in m.groups()[1:])
        assert _size(before[old]) == n == blocks * block + tail and inner == old, line
        assert any([x.arg[0] for x in r.src[1:]] == [outer, inner] and r.arg.name == m[1]
                   for r in _reduces(opt)), line
        assert _size(after[outer]) == blocks and _size(after[inner]) == block, line
    elif m := re.fullmatch(r"UNSCALE (\w+) over ([r\d ]+) \(times (\S+) after\)", line):
        ids, c = _ids(m[2]), float(m[3])
        (red,) = [r for r in _reduces(opt) if [x.arg[0] for x in r.src[1:]] == ids]
        assert red.src[0].src[1].op is not Ops.MUL, line  # (the max is of x, not x * c)
        assert any(n.op is Ops.MUL and red in n.src and any(
            s.op is Ops.CONST and f"{s.arg:g}" == m[3] for s in n.src) for n in opt.toposort())
        assert c > 0
    elif m := re.fullmatch(r"TILE r(\d+) in blocks of (\d+), innermost \(a transpose: r(\d+) "
                           r"reads a line per step\)", line):
        i, block, j = (int(x) for x in m.groups())
        (st,) = [n for n in opt.toposort() if n.op is Ops.STORE]
        assert st.src[-1].arg[0] == i and _size(st.src[-1]) == block, line
        assert any(r.arg[1] == "block" for r in st.src[2:]), line
        (old,) = [n for n in low.toposort() if n.op is Ops.STORE]
        assert old.src[-1].arg[0] == j and i in [r.arg[0] for r in old.src[2:-1]], line
    elif m := re.fullmatch(r"ACROSS r(\d+) \((\d+) rows across vector lanes(?:, the row r(\d+) "
                           r"as (\d+) stores)?\)", line):
        i, rows, t, stores = (int(x or 0) for x in m.groups())
        assert len(opt.src) == (stores or 1) and all(s.src[-1] is after[i] for s in opt.src), line
        assert after[i].arg[1] == "vector" and _size(after[i]) == rows, line
        # (the row's loop gone, unrolled into one store per column; no row: one output per row)
        assert (t not in after and t in before) if m[3] else rows >= 8, line
    elif m := re.fullmatch(r"UNNEST (\w+) over ([r\d ]+) into the reduce over ([r\d ]+)", line):
        both = set(_ids(m[2]) + _ids(m[3]))
        assert any(both <= {x.arg[0] for x in r.src[1:]} for r in _reduces(opt)), line
    elif m := re.fullmatch(r"MASK EXP: (\d+) exps? of a select taken through it \(the masked "
                           r"arm once per row\)", line):
        assert _two_exps(opt) - _two_exps(low) == int(m[1]) > 0, line
    elif m := re.fullmatch(r"THREAD (\w+) over r(\d+) \((\d+) iterations\)", line):
        i, n = int(m[2]), int(m[3])
        assert any(r.arg.name == m[1] and r.src[1] is after[i] for r in _reduces(opt)), line
        assert after[i].arg[1] == "thread" and _size(after[i]) == n, line
    elif m := re.fullmatch(r"PACK rows ([r\d ]+) x columns r(\d+) \(tile (\d+)x(\d+)(, A packed)?\)"
                           r"(.*)", line):
        rows, j, tile, panel = _ids(m[1]), int(m[2]), int(m[3]), int(m[4])
        st = _store_of(opt, rows + [j])  # (its output loops, before as after)
        assert _store_of(low, rows + [j]) is not None and j not in rows, line
        assert j in _out(st), line  # (the columns: an output loop, a convolution's channels)
        red = [r for r in _reduces(st) if r.arg is Ops.ADD and r.src[0].src[1].op is Ops.MUL]
        assert red and 1 <= tile <= 16 and panel % 8 == 0, line  # (a sum of products)
        locals_ = sum(n.op is Ops.DEFINE_LOCAL for n in st.toposort())
        assert ("STAGED" in m[6]) == (locals_ > 0), line  # (y's panels: a local array)
    elif m := re.fullmatch(r"FLASH rows r(\d+) in tiles of (\d+): local products over "
                           r"(none|[^,]+), (output over r(\d+)|each row's outputs).*", line):
        i, prods = int(m[1]), [] if m[3] == "none" else _ids(m[3])
        (st,) = [n for n in opt.toposort() if n.op is Ops.STORE and n.src[-2] is after[i]]
        assert m[5] is None or st.src[-1].arg[0] == int(m[5]), line
        # (each local product: a kernel-local row of scores over that range)
        assert all(any(d.op is Ops.DEFINE_LOCAL and d.src[1:] and d.src[1].arg[0] == p
                       for d in st.toposort()) for p in prods), line
        assert _store_of(low, [i]) is not None and int(m[2]) >= 1, line
    elif m := re.fullmatch(r"(?:REORDER r(\d+) last, )?INTERCHANGE r(\d+) inside the reduce "
                           r"loops(.*)", line):
        j, rest = int(m[2]), m[3]
        assert m[1] is None or int(m[1]) == j and _out(_store_of(low, [j]))[-1] != j, line
        (st,) = [n for n in opt.toposort() if n.op is Ops.STORE and j in _out(n)]
        assert st.src[-1] is after[j] and after[j].arg[1] in ("upcast", "vector"), line
        # j's loop inside the reduce's: its reduce reads j
        assert any(after[j] in r.src[0].toposort() for r in _reduces(st)), line
        assert before[j].arg[1] not in ("upcast", "vector"), line
        if b := re.search(r"in (\d+) blocks of (\d+)", rest):
            assert _size(after[j]) == int(b[2]) and any(
                r.arg[1] == "block" and _size(r) == int(b[1]) for r in st.src[2:]), line
        if v := re.search(r"in blocks of (\d+) vectors of (\d+)", rest):
            width = int(v[1]) * int(v[2])
            assert after[j].arg[1] == "vector" and width - int(v[2]) < _size(after[j]) <= width
        if p := re.search(r"rows fetched (\d+) ahead", rest):
            assert any(k.arg[1:] == ("prefetch", int(p[1])) for r in _reduces(st)
                       for k in r.src[1:]), line
        if p := re.search(r"(\d+) rows per pass", rest):  # (its update combines that many)
            assert any(sum(n.op is r.arg for n in r.src[0].toposort()) >= int(p[1])
                       for r in _reduces(st)), line
    elif m := re.fullmatch(r"ROWS r(\d+) \(blocks of (\d+) rows: (\d+) passes over the block's "
                           r"rows, (\d+) values a row handed on, (\d+) rows kept a row\)", line):
        i, b, passes, hand, kept = (int(x) for x in m.groups())
        (st,) = [n for n in opt.toposort() if n.op is Ops.STORE]
        rows = _size(before[i])
        # the row loop over blocks, then the block's rows; a block within ROWS_MIN..ROWS_MAX
        assert st.src[2] is after[i] and _size(after[i]) == -(-rows // b), line
        assert _size(st.src[3]) == b and ROWS_MIN <= b <= min(ROWS_MAX, rows), line
        # a pass an array over the block: each value handed on, each kernel-local row kept
        blocked = [d for d in opt.toposort() if d.op is Ops.DEFINE_LOCAL
                   and d.src[1].src[0].arg == b]
        assert len(blocked) == hand + kept == passes - 1 and hand > 0, line
        assert kept == sum(d.op is Ops.DEFINE_LOCAL for d in low.toposort()), line
    elif m := re.fullmatch(r"TILE r(\d+) x r(\d+) \((\d+)x(\d+)\)", line):
        i, j, ti, tj = (int(x) for x in m.groups())
        (st,) = [n for n in opt.toposort() if n.op is Ops.STORE and {i, j} <= set(_out(n))]
        assert st.src[-2:] == (after[i], after[j]), line  # (the tile innermost)
        assert [_size(after[i]), _size(after[j])] == [ti, tj], line
        assert after[i].arg[1] == after[j].arg[1] == "unroll", line
        assert any(after[j] in r.src[0].toposort() for r in _reduces(st)), line
    else:
        raise AssertionError(f"a recorded line of no known action: {line!r}")
    return name


def _pool(x: Tensor) -> Tensor:
    return x.reshape(2, 4, 8, 2, 16, 2).max(axis=(3, 5))


def _softmax(x: Tensor) -> Tensor:
    e = (x - x.max(axis=1, keepdim=True)).exp()
    return e / e.sum(axis=1, keepdim=True)


def _masked_softmax(x: Tensor) -> Tensor:
    n = x.shape[1]
    keep = Tensor(np.tril(np.ones((x.shape[0], n), bool)))
    return _softmax(keep.where(x, -np.inf))


def _attention(x: Tensor) -> Tensor:
    return (x @ x.transpose(-1, -2) * 0.125).softmax(-1) @ x


def _int_matmul(x: Tensor) -> Tensor:
    a = (x * 4).cast("int32")
    return a @ a


# (program, shape, the recorded action it must take, None: none)
CASES = [
    (_pool, (2, 4, 16, 32), "UNROLL"),
    (lambda x: (x * 3.0).max(axis=1), (5, 301), "UNSCALE"),
    (lambda x: (x * 0.5).min(axis=1), (1, 97), "UNSCALE"),
    (lambda x: x.sum(), (2097169,), "SPLIT"),
    (lambda x: x.max(axis=(0, 3)), (1021, 5, 3, 64), "UNNEST"),
    (lambda x: x.sum(axis=(0, 3)), (997, 3, 1, 128), "UNNEST"),
    (lambda x: x.sum(axis=(0, 2, 3)), (3, 5, 7, 11), "MERGE"),
    (lambda x: x.sum(axis=(0, 2, 3)), (2, 4, 32, 32), "MERGE"),
    (lambda x: x * 2.0 + 1.0, (2, 3, 5, 7), "MERGE"),
    (lambda x: x.transpose(1, 2) * 2, (3, 1021, 509), "TILE"),
    (_softmax, (4099, 5), "ACROSS"),
    (_softmax, (33, 7), "ACROSS"),
    (lambda x: x.exp().sum(axis=1).log(), (4096, 5), "ACROSS"),  # (no row: an output per row)
    (_masked_softmax, (64, 64), "MASK"),
    (lambda x: x.log_softmax(1), (13, 129), "ROWS"),  # (a max, a sum and log, the outputs)
    # rows_across unrolls these rows' sum of squares, then its cost refuses: a vector reduce,
    # nothing recorded (rows of 12, refused on AMD's count and Intel's: since logf61's count
    # 8 rows of 9 go across on this AMD machine, which the merge of the two branches failed)
    (lambda x: (x * x).sum(axis=1), (64, 16), None),
    (lambda x: (x * x).sum(axis=1), (8, 12), None),
    # a refused attempt, then an unroll: recorded once
    (lambda x: x.max(axis=1), (64, 5), "UNROLL"),
    (lambda x: x.sum(), (1 << 22,), "THREAD"),  # (split by the scheduler)
    (lambda x: x.max(), (2097169,), "THREAD"),  # (split by the optimizer; 2 region costs)
    (lambda x: x @ x.T, (128, 96), "PACK"),
    (lambda x: x @ x.T, (67, 131), "PACK"),
    (lambda x: x[0] @ x[1], (2, 97, 97), "PACK"),
    (_attention, (2, 64, 32), "FLASH"),
    (_attention, (3, 27, 16), "FLASH"),
    (lambda x: x.sum(axis=1), (8, 300, 37), "INTERCHANGE"),
    (lambda x: x.sum(axis=1), (64, 512, 64), "INTERCHANGE"),
    (lambda x: x.sum(axis=(0, 2, 3)), (64, 64, 32, 32), "INTERCHANGE"),
    (lambda x: x.max(axis=(0, 2)), (13, 65521, 2), "INTERCHANGE"),
    (lambda x: x.permute(2, 0, 1).sum(axis=2), (3, 101, 16), "REORDER"),
    (_int_matmul, (64, 64), "TILE"),
    (_int_matmul, (80, 80), "TILE"),
    (_int_matmul, (31, 31), "INTERCHANGE"),  # (no whole tile of 16 columns: one per column)
    # a padded pool peeled after its window's unroll (rev61b: the parts took the unrolled
    # loops' ids r4 r5, so the UNROLL line named the peeled interior, and no line said PEEL)
    (lambda x: x.pad(((0, 0), (0, 0), (1, 1), (1, 1))).reshape(2, 4, 17, 2, 17, 2).max(
        axis=(3, 5)), (2, 4, 32, 32), "PEEL"),
    # a padded convolution: its input's pad peeled (merges of the parts after), its product
    # packed with the output channels as the columns (not the output's last loop)
    (lambda x: x.conv2d(Tensor(_rng(8, 3, 3, 3)), padding=1), (2, 3, 31, 29), "PACK"),
]


@pytest.mark.parametrize("program, shape, want", CASES,
                         ids=[f"{w or 'none'}-{'x'.join(map(str, s))}" for _, s, w in CASES])
def test_each_recorded_action_is_what_the_kernel_shows(monkeypatch, program, shape, want):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")  # (the transpose's tile: test_held_out_cliffs)
    t = program(Tensor(_rng(*shape)))
    names = set()
    for item in t.schedule():
        low = lower_only(item.ast)
        opt = optimize_kernel(low)
        recorded = list(opt.tag or ())
        assert len(set(recorded)) == len(recorded), recorded  # (each action taken once)
        peeled = frozenset(int(line.split()[1][1:]) for line in recorded
                           if line.startswith("PEEL"))
        names |= {_check_line(line, low, opt, peeled) for line in recorded}
        acts = actions(opt)
        assert acts[:len(recorded)] == recorded
        # every reduce of the lowered kernel whose loops are all gone is named by an action
        gone = [r for r in _reduces(low) if not {x.arg[0] for x in r.src[1:]} & set(_ranges(opt))]
        for r in gone:
            assert any(f"r{r.src[1].arg[0]}" in re.findall(r"r\d+", a) for a in acts), (r, acts)
    assert want in names if want else not names, names


def test_debug_2_prints_the_recorded_actions(monkeypatch, capfd):
    monkeypatch.setenv("RULEGRAD_KERNEL_INDEX", "0")
    monkeypatch.setenv("DEBUG", "2")
    x = _rng(2, 4, 16, 32)
    got = _pool(Tensor(x)).numpy()
    np.testing.assert_array_equal(got, x.reshape(2, 4, 8, 2, 16, 2).max(axis=(3, 5)))
    err = capfd.readouterr().err
    (low,) = [lower_only(item.ast) for item in _pool(Tensor(x)).schedule()]
    (red,) = _reduces(low)  # the window: 2 x 2 values, gone after (unrolled)
    window = " ".join(f"r{r.arg[0]}" for r in red.src[1:])
    assert [_size(r) for r in red.src[1:]] == [2, 2]
    assert f"UNROLL MAX over {window} (4 values)" in err, err


def test_a_helper_outside_the_optimizer_records_nothing():
    (item,) = _pool(Tensor(_rng(2, 4, 16, 32))).schedule()
    (red,) = _reduces(lower_only(item.ast))
    with chosen(DEFAULT) as taken:
        unrolled(red, noted=False)  # (rows_across's probe)
        assert taken == []
        unrolled(red)
        assert len(taken) == 1
    unrolled(red)  # (no optimizer running: nowhere to record, and no error)
