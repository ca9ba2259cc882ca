"""Cold builds: what a first realize makes the C compiler do, counted (never timed).

The prelude every library starts with includes no system header (the compiler would parse
3,400 lines of them on every build); with gcc the library is linked against the libraries the
kernels call and nothing else (no start files, no libc linker script). What is checked is the
work: the preprocessed size of a build, the command line, and that the libraries so built load
and compute what numpy computes.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import PRELUDE
from rulegrad.backends.kernel_interp import run_kernel
from rulegrad.runtime.ops import Ops


def _is_gcc() -> bool:
    return build.is_gcc(build.compiler())


def test_prelude_preprocesses_to_itself():
    # preprocessed, the prelude is its own lines and a few the compiler adds: a system header
    # included again would bring back thousands (math.h alone is ~1,000)
    cmd = [*build.compiler(), *build.cflags(), "-DRG_MVEC", "-E", "-P", "-x", "c", "-"]
    out = subprocess.run(cmd, input=PRELUDE, capture_output=True, text=True, check=True).stdout
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) < 150, f"the preprocessed prelude has {len(lines)} lines"
    assert "#include" not in PRELUDE


@pytest.mark.skipif(not _is_gcc(), reason="the explicit link is gcc's")
def test_gcc_link_names_no_shared_library_the_process_has_loaded():
    # libgomp, libmvec and libm are loaded into the process once (RTLD_GLOBAL) and the kernel
    # libraries bind to them when loaded: the linker reads none of them
    cmd = build.compile_command(build.compiler(), build.cflags(), "k.c", "k.so")
    assert "-nostdlib" in cmd and "-lgcc" in cmd
    assert not {"-lgomp", "-lmvec", "-lm", "-lc"} & set(cmd), cmd
    loaded = open("/proc/self/maps").read() if os.path.exists("/proc/self/maps") else ""
    for soname in ("libgomp.so.1", "libm.so.6"):
        assert soname in loaded or not loaded


@pytest.mark.skipif(not _is_gcc(), reason="the explicit link is gcc's")
def test_gcc_link_names_a_library_the_process_cannot_load(monkeypatch):
    monkeypatch.setitem(build._SONAMES, "-lgomp", "libgomp-missing.so.1")
    build._runtime.cache_clear()
    try:
        cmd = build.compile_command(build.compiler(), build.cflags(), "k.c", "k.so")
        assert "-lgomp" in cmd  # the default flags have -fopenmp
        assert "-lgomp" not in build.compile_command(build.compiler(), ["-O2"], "k.c", "k.so")
    finally:
        build._runtime.cache_clear()


def test_libraries_so_linked_load_and_compute(tmp_path, monkeypatch):
    """Kernels that need each linked library: OpenMP threads (libgomp), vector exp (libmvec /
    libm), heap scratch panels (libc's aligned_alloc through the prelude's own declaration),
    float16 conversions (libgcc), all in a fresh cache, against numpy."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    run._programs.clear()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 21).astype(np.float32)  # past PARALLEL_MIN_WORK: threads
    np.testing.assert_allclose((Tensor(x).exp() + 1).numpy(), np.exp(x) + 1, rtol=2e-6)
    a = rng.standard_normal((4, 3000)).astype(np.float32)  # K > 2048: panels on the heap
    b = rng.standard_normal((3000, 16)).astype(np.float32)
    np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, rtol=1e-4, atol=1e-3)
    h = rng.standard_normal(100).astype(np.float16)
    np.testing.assert_array_equal((Tensor(h) * 3).numpy(), h * np.float16(3))
    assert build.stats["compiles"] >= 3



def test_prelude_defines_the_integer_helpers_only_for_kernels_that_call_them(tmp_path,
                                                                             monkeypatch):
    """A float kernel's library parses none of the 56 integer helpers; kernels that call one
    (integer division, modulo, shifts, powers, float -> int casts, a threaded NaN-propagating
    max) get exactly the ones they name, and compute what numpy computes."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    run._programs.clear()
    sources: list[str] = []
    full = build.full_source
    monkeypatch.setattr(build, "full_source", lambda ks: sources.append(full(ks)) or sources[-1])
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1000).astype(np.float32)
    np.testing.assert_array_equal((Tensor(x) * 2 + 1).numpy(), x * 2 + 1)
    assert not any(f"\n{h}" in sources[-1]
                   for h in ("RG_INTS(", "RG_UINTS(", "RG_F2I_ALL(", "#pragma omp declare"))
    a = rng.integers(-50, 50, 500).astype(np.int32)
    b = rng.integers(-3, 4, 500).astype(np.int32)  # zeros: numpy gives 0 (with a warning)
    with np.errstate(divide="ignore"):
        want = a // np.where(b == 0, 1, b) * (b != 0) % np.int32(7)
    got = ((Tensor(a) // Tensor(b)) % 7).numpy()
    np.testing.assert_array_equal(got, np.where(b == 0, 0, want))
    assert "RG_INTS(int32_t, uint32_t, i32, 32)" in sources[-1]
    assert "\nRG_INTS(int8_t" not in sources[-1] and "\nRG_F2I_ALL(" not in sources[-1]
    u = rng.integers(0, 200, 300).astype(np.uint8)
    np.testing.assert_array_equal((Tensor(u) << 3).numpy(), u << 3)
    assert "RG_UINTS(uint8_t, u8, 8)" in sources[-1]
    f = (rng.standard_normal(300) * 100).astype(np.float64)
    np.testing.assert_array_equal(Tensor(f).cast("int16").numpy(), f.astype(np.int16))
    assert "RG_F2I_ALL(double, f64)" in sources[-1]
    big = rng.standard_normal(1 << 21).astype(np.float32)
    big[12345] = np.nan
    assert np.isnan(Tensor(big).max().numpy())
    if "reduction(rgmax_f32" in sources[-1]:  # threaded: OpenMP needs the declared reduction
        assert "declare reduction(rgmax_f32" in sources[-1]



@pytest.mark.parametrize("size", [3 << 20, (1 << 20) + 1])
def test_a_threaded_vector_loop_runs_blocks_of_a_known_count(size, monkeypatch):
    """An elementwise loop both threaded and vectorized is split into blocks in the AST (the
    parallel action, rules/parallel_helpers.py), printed as threads over the blocks, each a
    vector loop of a constant count (gcc then compiles no peeled prologue and epilogue), when
    a power of two of 64 or more divides it; otherwise as one `parallel for simd` loop. Either
    way each element is what numpy computes, in C and in the kernel interpreter."""
    from rulegrad.backends.c import run

    run._programs.clear()
    sources: list[str] = []
    full = build.full_source
    monkeypatch.setattr(build, "full_source", lambda ks: sources.append(full(ks)) or sources[-1])
    rng = np.random.default_rng(2)
    # float64: relu's compare and select of float32 have explicit vector lanes (opt_helpers'
    # _LANE_OPS), and those loops are not gcc's; float64 relu is a loop gcc vectorizes
    a, b, c = (rng.standard_normal(size) for _ in range(3))
    a[5], b[size - 1] = np.nan, np.inf
    got = (Tensor(a) * Tensor(b) + Tensor(c)).relu().numpy()
    x = a * b + c
    np.testing.assert_array_equal(got, np.where(x < 0, 0, x))  # relu: torch's, NaN kept
    source = next(s for s in reversed(sources) if "\nvoid k0" in s)  # (not launch.py's)
    kernel = source[source.index("\nvoid k0"):]
    # (launched: the threads' loop runs the iterations [lo_, hi_) launch.py gives it)
    if size % 64 == 0:  # (the threads' loop over the blocks, a vector loop of 4096 in each)
        assert re.search(r"for \(int64_t (r\d+) = lo_; \1 < hi_; \1\+\+\) \{\n.* \* "
                         r"\(\(int64_t\)4096LL\)\);\n *#pragma omp simd\n *"
                         r"for \(int64_t (r\d+) = 0; \2 < 4096; \2\+\+\)", kernel), kernel
        assert "omp simd\nfor (int64_t r0 = lo_" not in kernel.replace("  ", "")
    else:
        assert "#pragma omp simd\n  for (int64_t r0 = lo_; r0 < hi_; r0++)" in kernel
    # the blocks are ranges of the AST: the kernel interpreter runs it, to numpy's values
    (item,) = (Tensor(a) * Tensor(b) + Tensor(c)).relu().schedule()
    opt = optimize_kernel(lower_only(item.ast))
    kinds = {n.arg[1] for n in opt.toposort() if n.op is Ops.RANGE}
    assert ("block" in kinds) == (size % 64 == 0), kinds
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, buf in enumerate(item.bufs[1:], 1):
        bufs[i][:] = buf.ensure().reshape(-1)
    run_kernel(opt, bufs)
    np.testing.assert_array_equal(bufs[0], np.where(x < 0, 0, x))


# ---------------------------------------------------------------------------- parallel builds
def _kernel(name: str, size: int, body: str = "") -> build.RenderedKernel:
    """A rendered kernel of about `size` characters of source (padded by a comment)."""
    src = f"void {name}(void *v0) {{ {body} }}\n"
    return build.RenderedKernel(name, src + f"/* {'x' * max(0, size - len(src) - 7)} */\n",
                                1, ())


def test_partition_balances_large_kernels_only():
    big = [_kernel(f"k{i}", s) for i, s in enumerate([4000, 900, 5000, 800])]
    parts = build.partition(big, 2)
    assert len(parts) == 2
    assert sorted(k.cname for p in parts for k in p) == ["k0", "k1", "k2", "k3"]
    sizes = sorted(sum(len(k.source) for k in p) for p in parts)
    assert sizes[1] - sizes[0] <= 1000  # 4000+900 beside 5000+800
    for p in parts:  # each part keeps the program's order
        assert [k.cname for k in p] == sorted(k.cname for k in p)
    assert build.partition(big, 1) == [big]  # one CPU: one compiler run
    # the extra run would cost more than it saves: 4 x 500 characters cannot make two parts
    small = [_kernel(f"s{i}", 500) for i in range(4)]
    assert build.partition(small, 2) == [small]
    assert len(build.partition(small * 2, 2)) == 2  # 8 x 500 can
    assert build.partition([big[2]], 2) == [[big[2]]]
    # a part must hold SPLIT_MIN_CHARS: a large and a small kernel stay together
    assert build.partition([big[0], small[0]], 2) == [[big[0], small[0]]]
    assert len(build.partition(big, 8)) == 3  # 10,700 characters: at most 3 parts of 1,500+


def test_parallel_build_is_one_library_that_computes(tmp_path, monkeypatch):
    """An MLP's two products are compiled as two parts at once and linked once (3 compiler
    runs); the one library computes numpy's values and is installed as one cache entry; with
    one job the same program is one compiler run."""
    from rulegrad.backends.c import run

    rng = np.random.default_rng(1)
    # a hidden layer past LOCAL_MAX_PANEL's products per row: two kernels (a smaller MLP is one
    # flash kernel, rules/flash_cost.py)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32)
                 for s in ((32, 512), (512, 256), (256, 16)))
    # in float64: the float32 sums of 512 products differ from numpy's order by more than
    # 1e-4 at values near 500
    ref = np.maximum(x.astype(np.float64) @ w1, 0) @ w2
    _process_libraries()
    # (L2 pinned small: with x in half of L2 the first product runs its panels outside its row
    # tiles, a kernel of fewer than SPLIT_MIN_CHARS, and the sizes would follow the machine)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1K")
    for jobs, runs in (("2", 3), ("1", 1)):
        monkeypatch.setenv("RULEGRAD_BUILD_JOBS", jobs)
        monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / jobs))
        build.clear_memory_cache()
        run._programs.clear()
        before = dict(build.stats)
        out = ((Tensor(x) @ Tensor(w1)).relu() @ Tensor(w2)).numpy()
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())
        assert build.stats["compiles"] - before["compiles"] == 1
        assert build.stats["compiler_runs"] - before["compiler_runs"] == runs
        # (a printed kernel is an entry of its own, when RULEGRAD_KERNEL_INDEX is on)
        entries = sorted(p.name for p in (tmp_path / jobs).iterdir() if p.suffix != ".rk")
        assert [e for e in entries if e.endswith(".so")] and len(entries) == 2, entries


def test_parallel_build_error_names_the_failing_part(tmp_path, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BUILD_JOBS", "2")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    good = _kernel("k_good", 2000, "(void)v0;")
    bad = _kernel("k_bad", 2000, "this is not C;")
    with pytest.raises(build.CompileError) as info:
        build.build_library([good, bad])
    assert "error" in info.value.message and "-c" in info.value.command
    kept = open(info.value.source_path).read()
    assert "k_bad" in kept and "k_good" not in kept  # the part that failed, for inspection


# ---------------------------------------------------------------------------- gcc's stages
def _build_both_ways(tmp_path, monkeypatch, kernels) -> list[bytes]:
    """The library of `kernels` built with gcc's stages run directly, then through the
    driver (stages.plan refusing every command)."""
    from rulegrad.backends.c import stages

    libraries = []
    for way in ("stages", "driver"):
        if way == "driver":
            monkeypatch.setattr(stages, "plan", lambda cmd, name: None)
        monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / way))
        build.clear_memory_cache()
        lib = build.build_library(kernels)
        libraries.append(next((tmp_path / way).glob("rg_*.so")).read_bytes())
        lib.release()
    return libraries


@pytest.mark.skipif(not _is_gcc(), reason="the stages are gcc's")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_gcc_stages_run_directly_and_build_the_drivers_library(jobs, tmp_path, monkeypatch):
    """With gcc, a build runs cc1 | as and then ld itself, without the driver or collect2,
    and makes the same library, byte for byte, as the driver would: in one compiler run, and
    in two parts compiled at once, then linked."""
    from rulegrad.backends.c import stages

    cc = build.compiler()
    steps = stages.plan(build.compile_command(cc, build.cflags(), "rg_K.c", "rg_K.so"), "K")
    assert steps is not None
    programs = [[os.path.basename(c[0]) for c in pipe] for pipe in steps]
    assert programs == [["cc1", "as"], ["ld"]], programs
    assert not any(a.startswith("-plugin") for a in steps[1][0])
    assert "rg_K.c" in steps[0][0] and "rg_K.so" in steps[1][0]
    monkeypatch.setenv("RULEGRAD_BUILD_JOBS", jobs)
    kernels = [_kernel(f"k{i}", 2000, f"((float *)v0)[{i}] = __builtin_expf({i});")
               for i in range(2)]
    assert len(build.partition(kernels, int(jobs))) == int(jobs)
    direct, driver = _build_both_ways(tmp_path, monkeypatch, kernels)
    assert direct == driver


def test_a_compiler_that_is_not_gcc_itself_runs_as_the_user_named_it(tmp_path):
    """A wrapper (ccache, a script) named by RULEGRAD_CC is run for the build, not bypassed."""
    from rulegrad.backends.c import stages

    log = tmp_path / "cc.log"
    cc = tmp_path / "cc"
    cc.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {build.compiler()[0]} "$@"\n')
    cc.chmod(0o755)
    cmd = build.compile_command([str(cc)], ["-O1"], "rg_K.c", "rg_K.so")
    assert stages.plan(cmd, "K") is None
    (tmp_path / "rg_K.c").write_text("int k(void) { return 7; }\n")
    status, messages = stages.Job(cmd, "K", tmp_path, "k.log").wait()
    assert status == 0, messages
    runs = [ln for ln in log.read_text().splitlines() if "-###" not in ln]
    assert any("rg_K.c" in ln for ln in runs), runs  # the build itself went through it
    assert (tmp_path / "rg_K.so").exists()


def test_a_question_the_compiler_does_not_answer_in_time_stops_it_and_its_children(tmp_path,
                                                                                  monkeypatch):
    """RULEGRAD_CC a wrapper whose child keeps the pipes open (`cc "$@" & sleep`): its
    `--version` question is given up at `ANSWER_SECONDS` (here half a second), the wrapper's
    whole process group is killed (the sleeping child too), its pipes are not read to their end
    (the child would hold them for 1,000 s), and the build says which question went unanswered.
    Bounded waits only: the answer comes within 60 s, the child is gone within 60 s."""
    import threading

    from rulegrad.backends.c import stages
    from rulegrad.backends.c.errors import CompilerNotFound

    pid_file = tmp_path / "sleep.pid"
    cc = tmp_path / "cc"
    cc.write_text(f'#!/bin/sh\n{build.compiler()[0]} "$@" &\n'
                  f'sleep 1000 &\necho $! > {pid_file}\nwait\n')
    cc.chmod(0o755)
    monkeypatch.setattr(stages, "ANSWER_SECONDS", 0.5)
    raised: list[BaseException] = []

    def ask() -> None:
        try:
            build.compiler_version((str(cc),))
        except BaseException as e:  # noqa: BLE001 (read by the test's thread)
            raised.append(e)

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    asking.join(60)
    sleeper = int(pid_file.read_text())
    try:
        assert not asking.is_alive(), "the question waited on the pipe its child holds open"
        assert len(raised) == 1 and isinstance(raised[0], CompilerNotFound), raised
        assert f"`{cc} --version` gave no answer in 0.5 s" in str(raised[0])
        for _ in range(600):  # killed, then reaped by init (or left a zombie where none reaps)
            try:
                if Path(f"/proc/{sleeper}/stat").read_text().split(") ")[1][0] == "Z":
                    break
            except FileNotFoundError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the wrapper's sleeping child was left running")
    finally:
        try:
            os.kill(sleeper, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_bad_build_jobs_is_refused(monkeypatch):
    from rulegrad.runtime.env import EnvError

    monkeypatch.setenv("RULEGRAD_BUILD_JOBS", "two")
    with pytest.raises(EnvError, match="RULEGRAD_BUILD_JOBS"):
        build.build_jobs()


def test_first_realize_does_not_load_the_rules_parser():
    """A process that only runs programs never parses a `.rules` file, writes a matcher or
    proves a rule: its first realize must not import Lark (loading it and the grammar cost
    50-250 ms of every cold start), Jinja2 (the generator's templates), z3 (`rulegrad check`'s
    prover) or our modules around them."""
    heavy = ("lark", "jinja2", "z3", "rulegrad.dsl.parser", "rulegrad.generator")
    code = ("import sys\nfrom rulegrad import Tensor\n"
            "assert (Tensor([1.0, 2.0]) * 3).sum().item() == 9.0\n"
            "x = Tensor([[1.0, 2.0], [3.0, 4.0]])\n"
            "assert (x @ x).relu().max().item() == 22.0\n"
            f"heavy = {heavy!r}\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy "
            "or any(m == h or m.startswith(h + '.') for h in heavy)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_first_build_runs_the_compiler_once_and_asks_its_version_first(tmp_path):
    """A fresh process's first realize: one `--version` question (started before the kernels
    are rendered, answered while they are), one compiler run for the program and one for the
    float32 exp's library (backends/c/vexp.py, built once per cache), and no `ldconfig`
    (libmvec is asked of the dynamic loader; `ctypes.util.find_library` is made to fail
    here)."""
    log = tmp_path / "cc.log"
    cc = tmp_path / "cc"
    cc.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {build.compiler()[0]} "$@"\n')
    cc.chmod(0o755)
    code = ("import ctypes.util\nctypes.util.find_library = None\n"
            "import numpy as np\nfrom rulegrad import Tensor\n"
            "from rulegrad.backends.c import build, run\n"
            "seen = []\nrender = run.render_kernel\n"
            "def spy(*a, **k):\n    seen.append(len(build._probes))\n    return render(*a, **k)\n"
            "run.render_kernel = spy\n"
            "x = np.arange(6, dtype=np.float32)\n"
            "assert np.allclose((Tensor(x) * 2 + 1).exp().numpy(), np.exp(x * 2 + 1))\n"
            "assert seen == [1], seen\n")  # the question was out while the kernel rendered
    env = {**os.environ, "RULEGRAD_CC": str(cc), "RULEGRAD_CACHE": str(tmp_path / "cache"),
           "RULEGRAD_BACKEND": "c"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    runs = log.read_text().splitlines()
    assert len(runs) == 3 and runs[0] == "--version" and all(".c" in r for r in runs[1:]), runs


@pytest.mark.skipif(not _is_gcc(), reason="the stages are gcc's")
def test_first_build_with_gcc_starts_five_programs(tmp_path):
    """A fresh process's first realize, counted in programs started: the `--version` question,
    the driver's plan (`-###`), cc1 | as, ld. The linker collect2 would run is read from the
    plan (its COMPILER_PATH), not asked of the driver in a process of its own."""
    code = ("import subprocess, numpy as np\n"
            "started = []\nreal = subprocess.Popen.__init__\n"
            "def spy(self, args, *a, **k):\n"
            "    started.append(list(args))\n    real(self, args, *a, **k)\n"
            "subprocess.Popen.__init__ = spy\n"
            "from rulegrad import Tensor\n"
            "x = np.arange(6, dtype=np.float32)\n"
            "np.testing.assert_array_equal((Tensor(x) + Tensor(x)).numpy(), x + x)\n"
            "print(repr(started))\n")
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path / "cache"), "RULEGRAD_BACKEND": "c"}
    env.pop("RULEGRAD_CC", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    started = eval(out.strip().splitlines()[-1])  # (a list of lists of str, printed by repr)
    questions = [a[1:] for a in started if a[-1] in ("--version", "-###")
                 or any(w.startswith("-print-") for w in a)]
    assert [q[-1] for q in questions] == ["--version", "-###"], questions
    programs = [os.path.basename(a[0]) for a in started if a[1:] not in questions]
    assert programs == ["cc1", "as", "ld"], started


@pytest.mark.skipif(not _is_gcc(), reason="the stages are gcc's")
def test_the_linker_read_from_the_plan_is_the_one_the_driver_names(tmp_path):
    """Where the plan's program folders hold no linker, the driver names it bare, as
    `-print-prog-name=ld` does; a folder with an `ld` of its own (a -B or cross setup) is asked
    of the driver, whose answer wins."""
    from rulegrad.backends.c import stages

    cc = build.compiler()[0]
    asked = subprocess.run([cc, "-print-prog-name=ld"], capture_output=True, text=True,
                           check=True).stdout.strip()
    plan = subprocess.run([cc, "-x", "c", os.devnull, "-shared", "-o", "x.so", "-###"],
                          capture_output=True, text=True, check=True).stderr
    assert stages.linker_of(plan, cc) == asked
    (tmp_path / "ld").write_text("#!/bin/sh\n")
    (tmp_path / "ld").chmod(0o755)
    assert stages.linker_of(f"COMPILER_PATH={tmp_path}/\n", "no-such-driver") is None
    assert stages.linker_of("no folders\n", cc) == asked


def _process_libraries() -> None:
    """Load what a process builds once and keeps (the threads' launcher, the float32 block
    library of this width, the float32 exp's), so a test counting a program's builds counts
    only its own, whichever test ran first in the process."""
    from rulegrad.backends.c import blocks, build, launch

    launch.launcher(build.build_library)
    blocks.load_float32(build.build_library)
    blocks.load_exp(build.build_library)


def _built_commands(monkeypatch, tmp_path, programs) -> list[tuple[list[str], str]]:
    """Realize each program in a fresh cache; the compiler runs it took: (command, source)."""
    from rulegrad.backends.c import run

    _process_libraries()  # (loaded once per process: not one of the programs' builds)
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    run._programs.clear()
    seen: list[tuple[list[str], str]] = []
    real = build._run

    def spy(key, cwd, sources, command):
        seen.extend((command(name), text) for name, text in sources.items())
        return real(key, cwd, sources, command)

    monkeypatch.setattr(build, "_run", spy)
    for program in programs:
        program()
    return seen


def _level(cmd: list[str]) -> list[str]:
    """The flags of `cmd` that some optimization level (flags.LEVELS) holds, or an -O."""
    from rulegrad.backends.c import flags

    ours = {f for level in flags.LEVELS.values() for f in level.split()}
    return [f for f in cmd if f.startswith("-O") or f in ours]


def _expected(kind: str) -> list[str]:
    from rulegrad.backends.c import flags

    return flags.LEVELS[kind].split()


def _programs():
    """A packed product, a 2x2 max-pool (explicit vectors) and a float64 relu (a loop gcc
    vectorizes: a float32 one has explicit vector lanes), each checked against numpy."""
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((2, 4, 16, 32)).astype(np.float32)
    y = rng.standard_normal(5000)

    def matmul():
        np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, rtol=1e-5, atol=1e-4)

    def maxpool():
        shape = (2, 4, 8, 2, 16, 2)
        out = Tensor(x).reshape(*shape).max(axis=(3, 5)).numpy()
        np.testing.assert_array_equal(out, x.reshape(shape).max(axis=(3, 5)))

    def relu():
        np.testing.assert_array_equal(Tensor(y).relu().numpy(), np.maximum(y, 0))

    return [matmul, maxpool, relu]


def test_each_kind_of_kernel_is_compiled_at_its_level(monkeypatch, tmp_path):
    """Register tiles and explicit vectors at flags.LEVELS' level for them (-O1: -O3 spent most
    of their builds and gained nothing; a pool, with no plain loop, without -ftree-vectorize),
    gcc-vectorized loops at theirs (-O3)."""
    from rulegrad.backends.c import flags

    monkeypatch.delenv("RULEGRAD_CFLAGS", raising=False)
    runs = _built_commands(monkeypatch, tmp_path, _programs())
    assert len(runs) == 3, [_level(c) for c, _ in runs]
    (packed, _), (vector, vsrc), (loops, _) = runs
    assert "rg_vload2_f32(" in vsrc.split("\nvoid k")[-1]  # the pool's explicit vectors
    assert _level(packed) == _expected("packed")
    assert _level(vector) == _expected("explicit")  # a pool: no plain loop to vectorize
    assert _level(loops) == _expected("loops")
    assert flags.LEVELS["packed"] != flags.LEVELS["loops"]


def test_user_cflags_win_over_the_levels(monkeypatch, tmp_path):
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -march=native -fopenmp")
    runs = _built_commands(monkeypatch, tmp_path, _programs())
    assert [_level(c) for c, _ in runs] == [["-O2"]] * 3


@pytest.mark.parametrize("empty", ["", "  "])
def test_empty_user_cflags_are_the_defaults(monkeypatch, empty):
    """`RULEGRAD_CFLAGS= cmd` (set, empty) builds as unset: each kind at its level with the
    default tuning, not at -O0 with no flags (30x slower kernels)."""
    from rulegrad.backends.c import flags

    monkeypatch.setenv("RULEGRAD_CFLAGS", empty)
    for kind in ("loops", "packed"):
        default = f"{flags.LEVELS[kind]} {flags.DEFAULT_TUNING}"
        assert flags.cflags(kind=kind) == flags.cflags(env=default, kind=kind)
        assert "-march=native" in flags.cflags(kind=kind)


def test_kernels_of_different_levels_are_built_apart_into_one_library(monkeypatch, tmp_path):
    """Kernels of two kinds are compiled by two runs, each at its kind's level, and linked into
    one library; the level is part of the cache key (the same source at another level is
    another library)."""
    from rulegrad.backends.c import flags

    monkeypatch.delenv("RULEGRAD_CFLAGS", raising=False)
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    monkeypatch.setenv("RULEGRAD_BUILD_JOBS", "1")
    one = _kernel("k_one", 100, "*(int *)v0 = 1;")
    two = _kernel("k_two", 100, "*(int *)v0 = 2;").replace(kind="packed")
    parts = build.build_parts([one, two], 1)
    assert [([k.cname for k in p], _level(fl)) for fl, p in parts] == [
        (["k_one"], _expected("loops")), (["k_two"], _expected("packed"))]
    build.clear_memory_cache()
    before = build.stats["compiler_runs"]
    lib = build.build_library([one, two])
    assert build.stats["compiler_runs"] - before == 3  # two parts and the link
    out = np.zeros(2, np.int32)
    lib.function("k_one", 1)(out.ctypes.data)
    lib.function("k_two", 1)(out.ctypes.data + 4)
    assert out.tolist() == [1, 2]
    key = build._key_flags(parts)
    monkeypatch.setitem(flags.LEVELS, "packed", flags.LEVELS["loops"])
    assert build._key_flags(build.build_parts([one, two], 1)) != key


def test_a_library_of_no_kernels_is_one_compiler_run(monkeypatch, tmp_path):
    # (a program whose buffers are only copied or sharded; `rulegrad fuzz --backend c` found a
    # build of no parts linking nothing into a file that is no ELF)
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    assert [fl for fl, _ in build.build_parts([], 2)] == [build.cflags()]
    before = build.stats["compiler_runs"]
    build.build_library([])
    assert build.stats["compiler_runs"] - before == 1


def test_plain_loops_inside_a_vector_kernel_are_still_vectorized(monkeypatch, tmp_path):
    """softmax's kernel is of the `vector` kind, and its exp loop is a plain loop: the level of
    that kind must still vectorize it (at plain -O1 it called scalar expf once per element and
    ran 6.5x slower), which shows as a call of the vector exp (backends/c/vexp.py's clones).
    A 256-bit target fills that row in explicit vectors instead (roof67's `lane_fill`): no plain
    loop is left, the kernel is of the `explicit` kind, and its exps are the inline vector core."""
    monkeypatch.delenv("RULEGRAD_CFLAGS", raising=False)
    x = np.random.default_rng(3).standard_normal((64, 256)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))

    def softmax():
        np.testing.assert_allclose(Tensor(x).softmax().numpy(), e / e.sum(axis=1, keepdims=True),
                                   rtol=1e-6, atol=1e-7)

    ((command, text),) = _built_commands(monkeypatch, tmp_path, [softmax])
    if "rg_vexpn_f32(" in text:
        assert _level(command) == _expected("explicit")
        kernel = text[text.rindex("\nvoid "):]  # (the prelude declares expf)
        assert not re.search(r"\bexpf\(", kernel), "a scalar exp beside the explicit vectors"
        return
    assert _level(command) == _expected("vector")
    (library,) = [p for p in tmp_path.rglob("rg_*.so") if b"k0_" in p.read_bytes()]
    assert re.search(rb"_ZGV\w+v_rg_expf", library.read_bytes())


def test_gcc_only_flags_are_left_out_for_another_compiler():
    """clang refuses -fno-tree-bit-ccp and -fvect-cost-model= (and warns on -falign-*): they
    are gcc's, left out of another compiler's flags, kept for gcc's."""
    from rulegrad.backends.c import flags

    level = flags.cflags(env=None, kind="packed")
    assert {"-fno-tree-bit-ccp", "-fvect-cost-model=very-cheap", "-falign-loops"} <= set(level)
    assert flags.for_compiler(level, gcc=True) == level
    other = flags.for_compiler(level, gcc=False)
    assert not [f for f in other if f.startswith(("-fno-tree-bit", "-fvect-cost", "-falign"))]
    assert "-fwrapv" in other and "-ffp-contract=off" in other  # the semantics' flags stay


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang is not installed")
def test_clang_builds_kernels_that_compute_what_numpy_computes(tmp_path):
    """RULEGRAD_CC=clang (without -fopenmp: libomp may be missing) builds a product, an
    elementwise kernel and a pool, each numpy's values, in a process of its own."""
    code = ("import numpy as np\nfrom rulegrad import Tensor\n"
            "rng = np.random.default_rng(0)\n"
            "a = rng.standard_normal((64, 64)).astype(np.float32)\n"
            "np.testing.assert_allclose((Tensor(a) @ Tensor(a)).numpy(), a @ a, rtol=1e-5, "
            "atol=1e-4)\n"
            "x = rng.standard_normal(1 << 16).astype(np.float32)\n"
            "assert np.array_equal((Tensor(x) * 2 + 1).numpy(), x * 2 + 1)\n"
            "p = x.reshape(4, 8, 32, 64)\n"
            "got = Tensor(p).reshape(4, 8, 16, 2, 32, 2).max(axis=(3, 5)).numpy()\n"
            "assert np.array_equal(got, p.reshape(4, 8, 16, 2, 32, 2).max(axis=(3, 5)))\n")
    env = {**os.environ, "RULEGRAD_CC": "clang", "RULEGRAD_CFLAGS": "-O2 -march=native",
           "RULEGRAD_CACHE": str(tmp_path), "RULEGRAD_BACKEND": "c"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
