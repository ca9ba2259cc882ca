"""`rulegrad demo`: the main job on a built-in model, end to end, checked against numpy.

In: nothing (fixed-seed data, embedded model). Out: a table of the kernels the scheduler made
(name, loop shape, time), totals, then a training run (tools/demo_train.py: loss per epoch,
test accuracy), and exit status 0 only if every result matches numpy and the training converged.

The model: an MLP block (layernorm -> linear -> relu -> linear -> softmax) and an attention
block (q, k, v projections, softmax(q k^T / sqrt(d)) v, output projection, residual). Each is
scheduled (the rangeify rule passes), lowered and rendered to C, compiled into a shared library
(cached on disk; the first run compiles), and run on numpy buffers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SEED = 0
BATCH, D_IN, D_HID, D_OUT = 32, 64, 128, 10
SEQ, D_MODEL = 32, 64
RTOL, ATOL = 1e-4, 1e-5


@dataclass
class Block:
    name: str
    build: Callable[[], object]        # -> lazy Tensor
    reference: Callable[[], np.ndarray]


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def demo_blocks() -> list[Block]:
    from rulegrad import Tensor

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    w1, b1 = _weights(rng, D_IN, D_HID), rng.standard_normal(D_HID).astype(np.float32) * 0.1
    w2, b2 = _weights(rng, D_HID, D_OUT), rng.standard_normal(D_OUT).astype(np.float32) * 0.1
    s = rng.standard_normal((SEQ, D_MODEL)).astype(np.float32)
    wq, wk, wv, wo = (_weights(rng, D_MODEL, D_MODEL) for _ in range(4))
    t = {k: Tensor(v) for k, v in dict(x=x, w1=w1, b1=b1, w2=w2, b2=b2, s=s, wq=wq, wk=wk,
                                        wv=wv, wo=wo).items()}
    scale = np.float32(1 / np.sqrt(D_MODEL))

    def layernorm(v, keep):
        mu = v.mean(axis=1, **{keep: True})
        d = v - mu
        return d / ((d * d).mean(axis=1, **{keep: True}) + 1e-5) ** 0.5

    def softmax_np(v):
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def mlp_rg():
        h = (layernorm(t["x"], "keepdim") @ t["w1"] + t["b1"]).relu()
        return (h @ t["w2"] + t["b2"]).softmax()

    def mlp_np():
        h = np.maximum(layernorm(x, "keepdims") @ w1 + b1, 0)
        return softmax_np(h @ w2 + b2)

    def attn_rg():
        q, k, v = t["s"] @ t["wq"], t["s"] @ t["wk"], t["s"] @ t["wv"]
        att = (q @ k.transpose() * float(scale)).softmax()
        return att @ v @ t["wo"] + t["s"]

    def attn_np():
        q, k, v = s @ wq, s @ wk, s @ wv
        return softmax_np(q @ k.T * scale) @ v @ wo + s

    return [Block("mlp (layernorm, relu, softmax)", mlp_rg, mlp_np),
            Block("attention block", attn_rg, attn_np)]


class _Out:
    """rich when it is installed, plain text otherwise."""

    def __init__(self) -> None:
        try:
            from rich.console import Console

            self.console: object | None = Console()
        except ImportError:
            self.console = None

    def status(self, text: str):
        if self.console is not None:
            return self.console.status(text)  # type: ignore[attr-defined]
        print(text, flush=True)
        return _Null()

    def print(self, text: str) -> None:
        if self.console is not None:
            self.console.print(text)  # type: ignore[attr-defined]
        else:
            print(text)

    def table(self, title: str, columns: list[str], rows: list[list[str]]) -> None:
        if self.console is not None:
            from rich.table import Table

            tab = Table(title=title)
            for i, c in enumerate(columns):
                tab.add_column(c, justify="left" if i < 2 else "right")
            for r in rows:
                tab.add_row(*r)
            self.console.print(tab)  # type: ignore[attr-defined]
            return
        print(title)
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
        print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
        for r in rows:
            print("  ".join(v.ljust(w) for v, w in zip(r, widths)))


class _Null:
    def __enter__(self) -> None: ...
    def __exit__(self, *a: object) -> None: ...


def run_demo() -> int:
    """Schedule, compile, run and check the demo model; 0 when every result matches numpy."""
    from rulegrad.backends.c import compile_program
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.schedule import schedule_with_outputs

    out = _Out()
    rows: list[list[str]] = []
    ok_all = True
    totals = {"schedule": 0.0, "compile": 0.0, "first": 0.0, "run": 0.0, "kernels": 0}
    blocks = demo_blocks()
    for i, block in enumerate(blocks, 1):
        tag = f"[{i}/{len(blocks)}] {block.name}"
        with out.status(f"{tag}: scheduling"):
            t0 = time.perf_counter()
            tensor = block.build()
            items, outs = schedule_with_outputs([tensor.uop])  # type: ignore[attr-defined]
            totals["schedule"] += time.perf_counter() - t0
        with out.status(f"{tag}: compiling {len(items)} kernels to C"):
            t0 = time.perf_counter()
            restrict = [len({id(b) for b in it.bufs}) == len(it.bufs) for it in items]
            prog = compile_program(items, restrict)
            totals["compile"] += time.perf_counter() - t0
        with out.status(f"{tag}: running"):
            arrays = [[b.ensure() for b in it.bufs] for it in items]
            first: list[float] = []
            prog.run(arrays, first)  # the first call also starts OpenMP's threads
            timings: list[float] = []
            prog.run(arrays, timings)  # the table shows this one: warm, same inputs
            totals["first"] += sum(first)
            totals["run"] += sum(timings)
            totals["kernels"] += len(items)
        root = outs[0]
        buf = root.arg if root.op is Ops.BUFFER else root.base.arg
        got = buf.data.reshape(tensor.shape)  # type: ignore[attr-defined]
        ref = block.reference()
        ok = got.shape == ref.shape and np.allclose(got, ref, rtol=RTOL, atol=ATOL)
        err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
        ok_all &= ok
        for item, t in zip(items, timings):
            rows.append([item.name, "x".join(map(str, item.shape)) or "()", f"{t * 1e6:.1f}",
                         block.name])
        verdict = "[green]matches numpy[/green]" if ok else "[red]DIFFERS from numpy[/red]"
        out.print(f"{tag}: {len(items)} kernels, max |error| {err:.2e}: {verdict}"
                  if out.console else f"{tag}: {len(items)} kernels, max |error| {err:.2e}: "
                  + ("matches numpy" if ok else "DIFFERS from numpy"))
    out.table("kernels (warm run)", ["kernel", "shape", "time (us)", "block"], rows)
    out.print(f"total: {totals['kernels']} kernels; schedule {totals['schedule'] * 1e3:.1f} ms, "
              f"compile {totals['compile'] * 1e3:.1f} ms (0 when cached), first run "
              f"{totals['first'] * 1e3:.1f} ms, warm kernels {totals['run'] * 1e6:.1f} us")
    out.print("all results match numpy" if ok_all else "SOME RESULTS DIFFER FROM NUMPY")
    # training: an MLP learns a synthetic task (tools/demo_train.py); exit 1 if it does not
    from rulegrad.tools.demo_train import run_training

    trained = run_training(out.print)
    return 0 if ok_all and trained else 1
