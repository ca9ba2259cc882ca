"""What a kernel calls of the block library (backends/c/blocks.py, vexp.py) is recorded by the
printers that print the calls (RenderedKernel.calls), and build.py loads the libraries of
that record: not of a search of the kernels' text for the functions' names."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import blocks, build, run
from rulegrad.backends.c.ctext import RenderedKernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.dtype import dtypes

# the oracle: a call of a library function in the C text, comments taken out (float32's
# expf and logf, which the prelude binds to vexp's rg_expf and vlog's rg_logf, count as those)
_CALL = re.compile(r"\b(rg_(?:block|pack)_[vz]f(?:32|64)\w*|rg_reduce_[a-z]+_f32|expf|logf)\s*\(")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def _called(source: str) -> set[str]:
    bound = {"expf": "rg_expf", "logf": "rg_logf"}
    return {bound.get(n, n) for n in _CALL.findall(_COMMENT.sub("", source))}


def _rendered(t: Tensor) -> list[RenderedKernel]:
    return [render_kernel(run.optimize_kernel(run.lower_only(item.ast)), f"k{i}")
            for i, item in enumerate(t.schedule())]


def _workloads():
    rng = np.random.default_rng(0)

    def a(*shape, dt=np.float32):
        return Tensor(rng.standard_normal(shape).astype(dt))
    return {
        "matmul": lambda: a(40, 70) @ a(70, 50),
        "matmul_f64": lambda: a(33, 65, dt=np.float64) @ a(65, 17, dt=np.float64),
        "matmul_row": lambda: a(1, 300) @ a(300, 129),
        "streamed": lambda: a(2, 512) @ a(512, 2048),
        "batched_prime": lambda: a(3, 7, 13) @ a(3, 13, 31),
        "conv": lambda: a(2, 5, 9, 11).conv2d(a(20, 5, 3, 3)),
        "exp_matmul": lambda: a(40, 70).exp() @ a(70, 50),
        "attention": lambda: (a(3, 27, 24) @ a(3, 40, 24).transpose(1, 2) / 5).softmax(-1)
        @ a(3, 40, 37),
        "softmax": lambda: a(5, 300).softmax(-1),
        "row_max": lambda: a(7, 1000).max(-1),
        "row_sum": lambda: a(1, 4097).sum(-1),
        "sigmoid": lambda: a(1000).sigmoid(),
        # (a row shorter than a vector: the library's expf; a longer one computes it inline
        # in float32 lanes, rg_vexp_f32, and calls nothing)
        "exp_f16": lambda: a(5, dt=np.float16).exp(),
        "exp_f16_vectors": lambda: a(257, dt=np.float16).exp(),
        "exp_f64": lambda: a(100, dt=np.float64).exp(),
        # (a log: the library's logf in a plain loop, a row's log once per row)
        "log": lambda: a(1000).abs().log(),
        "log_softmax": lambda: a(5, 300).log_softmax(-1),
        "log_f16": lambda: a(5, dt=np.float16).abs().log(),
        "exp_int": lambda: Tensor(np.arange(-20, 20, dtype=np.int32)).exp(),
        "add": lambda: a(3, 5) + a(3, 5),
    }


@pytest.mark.parametrize("workload", list(_workloads()))
def test_each_kernel_records_the_library_functions_it_calls(workload):
    """For products (packed, streamed, flash tiles), row reductions and exps of each dtype,
    and kernels that call nothing: the record is the set of library calls in the C text."""
    kernels = _rendered(_workloads()[workload]())
    for k in kernels:
        assert set(k.calls) == _called(k.source), k.cname
        assert list(k.calls) == sorted(k.calls)
    if workload in ("matmul", "streamed", "conv", "attention", "softmax", "sigmoid", "exp_f16",
                    "log", "log_softmax", "log_f16"):
        assert any(k.calls for k in kernels)  # (the sweep meets each printer's calls)


def _kernel(name: str, body: str, calls: tuple[str, ...] = ()) -> RenderedKernel:
    return RenderedKernel(name, f"void {name}(void *v0)\n{{\n{body}\n}}\n", 1, (dtypes.float32,),
                          calls=calls)


def test_the_build_loads_the_libraries_of_the_record_not_of_the_text(monkeypatch):
    """A kernel that names library functions in a comment only loads no library; one whose
    record names some has exactly those loaded, before its own library; values are C's."""
    asked: list[set[str]] = []
    monkeypatch.setattr(build, "load_for", lambda calls, _build: asked.append(set(calls)))
    body = "  /* rg_block_vf32_6(...), rg_pack_zf64(...), rg_reduce_max_f32(x), expf(x) */\n" \
           "  ((float *)v0)[0] = 2.0f;"
    lib = build.build_library([_kernel("rg_mentions", body)])
    out = np.zeros(1, np.float32)
    lib.function("rg_mentions", 1)(out.ctypes.data)
    assert out[0] == 2.0 and asked == []
    build.build_library([_kernel("rg_records", "  ((float *)v0)[0] = 3.0f;",
                                 ("rg_expf", "rg_reduce_add_f32"))])
    assert asked == [{"rg_expf", "rg_reduce_add_f32"}]


def test_loading_an_unknown_library_function_is_refused_by_name():
    with pytest.raises(ValueError, match="'rg_blockx' is no function of the block library"):
        blocks.load_for(["rg_blockx"], build.build_library)
