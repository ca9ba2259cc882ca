"""The block library (backends/c/blocks.py): its register blocks against numpy, called directly
and from the kernels that call them, built once and read back from the compile cache."""

from __future__ import annotations

import ast
import ctypes
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import blocks, build, compile_program
from rulegrad.runtime.dtype import dtypes

_DT = {"f32": (np.float32, dtypes.float32), "f64": (np.float64, dtypes.float64)}


@pytest.mark.parametrize("bits", [256, 512])
@pytest.mark.parametrize("sfx", ["f32", "f64"])
@pytest.mark.parametrize("rows", [1, 4, 6])
@pytest.mark.parametrize("table", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_a_block_sums_its_rows_products_with_the_packed_panel(bits, sfx, rows, table,
                                                              in_place):
    """out[u][0:TJ] = sum_k x_u(k) * w[k * ldw + 0:TJ], x_u(k) read at k * xs or at a table's
    offsets, each row's output ldo apart: numpy's values. w a packed panel (aligned, rows TJ
    apart) or y read in place (rows an odd number of elements apart, the first one off a
    vector's alignment: pack_helpers' `read_in_place`)."""
    np_dt, dt = _DT[sfx]
    lanes = bits // 8 // np.dtype(np_dt).itemsize
    tj, n = 2 * lanes, 37
    ldw, skew = (tj + 3, 1) if in_place else (tj, 0)
    name = blocks.name(dt, lanes, rows)
    blocks.load_for([name], build.build_library)
    fn = getattr(ctypes.CDLL(None), name)  # bound globally: what a kernel library sees
    fn.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                   ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
    rng = np.random.default_rng(rows)
    xs = [rng.standard_normal(3 * n).astype(np_dt) for _ in range(rows)]
    offsets = rng.permutation(3 * n)[:n].astype(np.int64) if table else np.arange(n) * 3
    w = np.zeros(n * ldw + 64, np_dt)
    # 64-byte aligned, as a panel is (or `skew` elements past)
    w = w[(-w.ctypes.data % 64) // w.itemsize + skew:][:n * ldw]
    w[:] = rng.standard_normal(n * ldw)
    ldo = tj + 2 * lanes  # rows further apart than a panel: a scores row
    out = np.zeros(rows * ldo + 64, np_dt)
    out = out[(-out.ctypes.data % 64) // out.itemsize:][:rows * ldo]
    xr = (ctypes.c_void_p * rows)(*(x.ctypes.data for x in xs))
    fn(n, xr, offsets.ctypes.data if table else None, 0 if table else 3, w.ctypes.data, ldw,
       out.ctypes.data, ldo)
    want = np.stack([x[offsets].astype(np.float64) @ w.reshape(n, ldw)[:, :tj] for x in xs])
    got = out.reshape(rows, ldo)[:, :tj]
    np.testing.assert_allclose(got, want, rtol=1e-5 if sfx == "f32" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("sfx", ["f32", "f64"])
@pytest.mark.parametrize("sj,cols,panels", [(1, 16, 1), (1, 5, 1), (7, 16, 1), (7, 3, 1),
                                            (1, 48, 3), (1, 37, 3), (7, 20, 2), (3, 5, 3)])
def test_a_panel_copy_reads_y_at_its_strides_and_pads_with_zeros(sfx, sj, cols, panels):
    """Panel p (columns p * tj on, at dst + p * n * tj): dst[k][c] = src[k * sk + (p * tj +
    c) * sj] for the columns, 0 past them (they add nothing to the tile): numpy's slicing."""
    np_dt, dt = _DT[sfx]
    tj, n, sk = 16, 9, 400
    name = blocks.pack_name(dt, tj // 2)
    blocks.load_for([name], build.build_library)
    fn = getattr(ctypes.CDLL(None), name)
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                   ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
    src = np.random.default_rng(sj).standard_normal(n * sk).astype(np_dt)
    dst = np.full(panels * n * tj, 7.0, np_dt)
    fn(n, cols, src.ctypes.data, sk, sj, dst.ctypes.data, tj, panels)
    want = np.zeros((n, panels * tj), np_dt)
    want[:, :cols] = src.reshape(n, sk)[:, :cols * sj:sj]
    got = dst.reshape(panels, n, tj).transpose(1, 0, 2).reshape(n, panels * tj)
    np.testing.assert_array_equal(got, want)


# a product's panels staged by its action (pack_helpers' panel_array): a kernel-local array on
# the stack, 64-byte aligned
_STAGED = r"float loc\d+\[\d+\] __attribute__\(\(aligned\(64\)\)\);"


def test_products_call_the_block_library_and_say_so(capsys, monkeypatch):
    """A matmul (x read in place: a stride; y copied, or read in place), a convolution (x read
    in place: an offset per step of its window, in a table) and a product of a computed x
    (packed per tile, row after row) call the library's blocks; DEBUG=2 names it; the values
    are numpy's."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("DEBUG", "2")
    run._programs.clear()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((40, 70), np.float32), rng.standard_normal((70, 50), np.float32)
    b1 = b[:, :16].copy()  # one panel of columns: x read in place
    tall = rng.standard_normal((64, 70), np.float32)  # 11 row tiles: y copied into a panel
    x = rng.standard_normal((2, 5, 9, 11), np.float32)
    w = rng.standard_normal((20, 5, 3, 3), np.float32)
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    # (the last: the output's 50 contiguous columns are the columns, so exp(a) is x, packed
    # per tile, and b's 4 panels all run inside each tile on one core: the packing action
    # stages them, a kernel-local array the renderer fills; a's 7 row tiles read b1 in place,
    # its rows 16 apart: pack_helpers' `read_in_place`)
    cases = [(Tensor(tall) @ Tensor(b1), tall @ b1, r"rg_block_vf32_6\(70, xr\d+, 0, 1, pb",
              "copied"),
             (Tensor(a) @ Tensor(b1), a @ b1,
              r"rg_block_vf32_6\(70, xr\d+, 0, 1, p\d+ \+ [^;]*, 16, acc", "in place"),
             (Tensor(x).conv2d(Tensor(w)), np.einsum("nchwyx,ocyx->nohw", win, w),
              r"rg_block_vf32_6\(45, xr\d+, xo\d+, 0, ", "copied"),
             (Tensor(a).exp() @ Tensor(b), np.exp(a) @ b, r"rg_block_vf32_6\(70, xq\d+, 0, 1, ",
              "staged")]
    for t, want, call, how in cases:
        source = compile_program(t.schedule()).source
        assert re.search(call, source), call
        # y's panels copied by the library where y is a plain load (into the staged array
        # too: gemm.py's `_staged_copy`), or y read in place
        assert ("rg_pack_vf32(" in source) == (how in ("copied", "staged"))
        assert bool(re.search(_STAGED, source)) == (how == "staged")
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4)
    assert "BLOCKS from the block library" in capsys.readouterr().err
    run._programs.clear()


def test_a_library_calling_blocks_loads_from_the_cache_in_a_new_process(tmp_path):
    """The second process reads both libraries from the cache (the blocks first, so the
    kernel's calls bind): nothing compiled, numpy's values."""
    script = textwrap.dedent("""
        import numpy as np
        from rulegrad import Tensor
        from rulegrad.backends.c import build
        rng = np.random.default_rng(1)
        a = rng.standard_normal((60, 80), np.float32)
        b = rng.standard_normal((80, 40), np.float32)
        got = (Tensor(a) @ Tensor(b)).numpy()
        assert np.allclose(got, a @ b, rtol=1e-4, atol=1e-4)
        print(build.stats["compiles"])
    """)
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert int(runs[0].stdout) >= 2  # the blocks, the kernel (and the 1-element probes)
    assert int(runs[1].stdout) == 0


def test_attention_tiles_call_the_block_library():
    """A flash tile's two products: the scores from q's rows, the output from the tile's
    probabilities, each staged per row of the tile (backends/c/flash.py); numpy's values."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal(s, np.float32) for s in ((3, 27, 24), (3, 40, 24), (3, 40, 37)))
    t = (Tensor(q) @ Tensor(k).transpose(1, 2) / 5).softmax(-1) @ Tensor(v)
    source = compile_program(t.schedule()).source
    assert re.search(r"rg_block_vf32_6\(24, xq\d+, 0, 1, ", source)  # q's rows, 24 steps
    assert re.search(r"rg_block_vf32_6\(40, xq\d+, 0, 1, ", source)  # probabilities, 40 keys
    # k's rows as columns (3 panels of 16 keys, 24 steps) and v's rows (3 panels of 16 columns,
    # 40 keys), staged by the flash action: kernel-local arrays the renderer fills
    assert len(re.findall(_STAGED, source)) == 2
    assert re.search(r"float loc\d+\[1152\] __attr", source)
    assert re.search(r"float loc\d+\[1920\] __attr", source)
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / 5
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(t.numpy(), e / e.sum(-1, keepdims=True) @ v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("library", ["1", "0"])
def test_a_flash_kernel_is_compiled_at_the_level_of_its_blocks(library, monkeypatch):
    """Calling the block library's blocks, a flash kernel is "flash" (flags.py: one register
    allocator region, no IV optimizer); printing them itself, it is compiled as a packed
    product, whose level keeps both for the blocks' k loops. Values are numpy's either way."""
    from rulegrad.backends.c import flags, run
    from rulegrad.backends.c.render import render_kernel

    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", library)
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s, np.float32) for s in ((2, 30, 16), (2, 33, 16), (2, 33, 20)))
    t = (Tensor(q) @ Tensor(k).transpose(1, 2) / 4).softmax(-1) @ Tensor(v)
    (item,) = t.schedule()
    kind = render_kernel(run.optimize_kernel(run.lower_only(item.ast)), "k").kind
    assert kind == ("flash" if library == "1" else "packed")
    assert ("-fira-region=one" in flags.LEVELS[kind]) == (library == "1")
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / 4
    e = np.exp(s - s.max(-1, keepdims=True))
    run._programs.clear()
    np.testing.assert_allclose(t.numpy(), e / e.sum(-1, keepdims=True) @ v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op, reduce, fn", [("sum", "add", np.sum), ("max", "max", np.max),
                                            ("min", "min", np.min)])
def test_a_first_row_reduction_builds_its_own_reduction_alone(tmp_path, op, reduce, fn):
    """A fresh process's first row sum (max, min) calls one row reduction of the block
    library: it builds that reduction's library and its kernel's, no register block and no
    other reduction (each cost the first call compiler work it never used), and computes
    numpy's values."""
    script = textwrap.dedent(f"""
        import numpy as np
        from rulegrad import Tensor
        from rulegrad.backends.c import build
        sources = []
        full = build.full_source
        build.full_source = lambda ks: sources.append(full(ks)) or sources[-1]
        x = np.random.default_rng(3).standard_normal((64, 256)).astype(np.float32)
        got = Tensor(x).{op}(axis=1).numpy()
        assert np.allclose(got, np.{fn.__name__}(x, axis=1), rtol=1e-5, atol=1e-5)
        # (what each library defines: a declaration of the prelude ends in ";", not a body)
        defines = [re.findall(r"\\b(rg_(?:reduce|block|pack)_\\w+)\\([^;{{]*\\)\\s*{{", s)
                   for s in sources]
        print(build.stats["compiles"], len(sources), sorted(n for d in defines for n in d))
    """).replace("import numpy as np", "import re\nimport numpy as np", 1)
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    # two libraries (the reduction's, then the kernel's), which define that reduction only
    assert out.stdout.strip() == f"2 2 ['rg_reduce_{reduce}_f32']", out.stdout


@pytest.mark.parametrize("m, k, n", [(64, 96, 48), (128, 130, 97), (37, 256, 64)])
def test_a_first_product_builds_the_blocks_it_calls_alone(tmp_path, m, k, n):
    """A fresh process's first matmul builds one library per block or panel copy its kernel
    calls, each defining that one alone (not the 16 of its vector type), and computes numpy's
    values."""
    script = textwrap.dedent(f"""
        import re
        import numpy as np
        from rulegrad import Tensor
        from rulegrad.backends.c import build
        sources = []
        full = build.full_source
        build.full_source = lambda ks: sources.append(full(ks)) or sources[-1]
        rng = np.random.default_rng(4)
        a = rng.standard_normal(({m}, {k})).astype(np.float32)
        b = rng.standard_normal(({k}, {n})).astype(np.float32)
        got = (Tensor(a) @ Tensor(b)).numpy()
        assert np.allclose(got, a @ b, rtol=1e-4, atol=1e-4)
        # (a definition has a body; the prelude's declarations end in ";")
        defines = [re.findall(r"\\b(rg_(?:reduce|block|pack)_\\w+)\\([^;{{]*\\)\\s*{{", s)
                   for s in sources]
        # (what the kernels call: a declaration starts with "void ")
        calls = {{c for s, d in zip(sources, defines) if not d
                  for c in re.findall(r"(?<!void )\\b(rg_(?:block|pack)_\\w+)\\(", s)}}
        print(sorted(calls), sorted(d for d in defines if d))
    """)
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    calls, defines = out.stdout.strip().split("] [", 1)
    calls = ast.literal_eval(calls + "]")
    defines = ast.literal_eval("[" + defines)
    assert calls, "the product calls no block: nothing to check"
    assert defines == [[c] for c in calls], (calls, defines)
