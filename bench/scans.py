"""Scans against torch eager, interleaved in one run: cumsum, cummax and cummin forward, and
cumsum's, cumprod's, cummax's and cummin's gradients.

In: nothing (lengths from 97 to 2M, the axis first, in the middle or last, batch 1 and tall).
Out: per case, torch's median seconds per call over ours ("speed": above 1 we are faster),
from medians of interleaved rounds (harness.py), and the first call's seconds (compiling).
Each call takes a numpy array to a numpy array on both sides; ours is checked against torch's
first.

    python bench/scans.py [--only SUBSTRING] [--rounds N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from harness import interleaved_medians, torch_module

# (op, shape, axis, dtype): a long 1-D scan (blocked past the work limit), batch 1, tall
# (many short scans down a column), skinny (few long rows), the axis in the middle; ints
CASES = [
    ("cumsum", (2_000_000,), 0, "float32"), ("cumsum", (1, 65536), 1, "float32"),
    ("cumsum", (4096, 97), 0, "float32"), ("cumsum", (97, 4096), 1, "float32"),
    ("cumsum", (64, 1009, 7), 1, "float32"), ("cumsum", (1009, 997), 0, "float64"),
    ("cumsum", (997, 1009), 1, "int32"),
    ("cummax", (2_000_000,), 0, "float32"), ("cummax", (1, 65536), 1, "float32"),
    ("cummax", (4096, 97), 0, "float32"), ("cummax", (97, 4096), 1, "float32"),
    ("cummin", (1009, 997), 0, "float64"), ("cummin", (997, 1009), 1, "int32"),
    # float running max and min over the lengths of issues 32/33, and 2-D along either axis
    *[(op, (n,), 0, "float32") for op in ("cummax", "cummax grad")
      for n in (100, 513, 4099, 100_000, 1_000_000)],
    *[(op, shape, axis, "float32") for op in ("cummax", "cummin", "cummax grad", "cummin grad")
      for shape, axis in (((97, 4099), 1), ((4099, 97), 0))],
    ("cumsum grad", (65536,), 0, "float32"), ("cumsum grad", (4096, 97), 0, "float32"),
    ("cumsum grad", (97, 4096), 1, "float64"),
    ("cumprod grad", (97, 1000), 1, "float32"), ("cumprod grad", (16000,), 0, "float64"),
]


def _ours(op: str, a: np.ndarray, axis: int):
    from rulegrad import Tensor

    if op.endswith(" grad"):
        name = op.split()[0]

        def run() -> np.ndarray:
            x = Tensor(a, requires_grad=True)
            out = getattr(x, name)(axis)
            ((out[0] if isinstance(out, tuple) else out) * 1.5).sum().backward()
            return x.grad.numpy()
    elif op == "cumsum":
        def run() -> np.ndarray:
            return Tensor(a).cumsum(axis).numpy()
    else:
        def run() -> np.ndarray:
            v, i = getattr(Tensor(a), op)(axis)
            return v.numpy(), i.numpy()
    return run


def _theirs(torch, op: str, a: np.ndarray, axis: int):
    if op.endswith(" grad"):
        name = op.split()[0]

        def run() -> np.ndarray:
            x = torch.tensor(a, requires_grad=True)
            out = getattr(torch, name)(x, axis)
            ((out[0] if isinstance(out, tuple) else out) * 1.5).sum().backward()
            return x.grad.numpy()
    elif op == "cumsum":
        def run() -> np.ndarray:
            return torch.cumsum(torch.from_numpy(a), axis).numpy()
    else:
        def run() -> np.ndarray:
            v, i = getattr(torch, op)(torch.from_numpy(a), axis)
            return v.numpy(), i.numpy()
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="rows whose case holds this text")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch = torch_module()
    if torch is None:
        raise SystemExit("bench/scans.py compares with torch, which is not installed")
    for op, shape, axis, dt in CASES:
        case = f"{op:12} {str(shape):14} axis {axis} {dt}"
        if args.only not in case:
            continue
        rng = np.random.default_rng(0)
        a = (rng.integers(-9, 9, shape) if dt == "int32" else rng.standard_normal(shape))
        if op == "cumprod grad":  # (products near 1 that neither vanish nor blow up; zeros)
            a = 1 + a / 100
            a.reshape(-1)[::97] = 0.0
        a = a.astype(dt)
        ours, theirs = _ours(op, a, axis), _theirs(torch, op, a, axis)
        t0 = time.perf_counter()
        got = ours()
        first = time.perf_counter() - t0
        want = theirs()
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3)
        mine, ref = interleaved_medians([ours, theirs], rounds=args.rounds)
        print(f"{case}  speed {ref / mine:5.2f}x torch  (ours {mine * 1e3:8.2f} ms, torch "
              f"{ref * 1e3:8.2f} ms)  first call {first:.2f}s", flush=True)


if __name__ == "__main__":
    main()
