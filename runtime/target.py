"""The width of the vector registers the packed products' register tiles are made of (and,
at 512 bits, whether a contiguous upcast loop is left to gcc: rules/opt_helpers.py).

In: the machine (Linux's /proc/cpuinfo), the C flags (`RULEGRAD_CFLAGS`) and
`RULEGRAD_VECTOR_BYTES`. Out: 32 (AVX2's 256 bits) or 64 (AVX-512's 512 bits).

The tiles are TILE_ROWS rows x 2 registers of columns (`rules/pack_helpers.py`), whatever the
width: with 512-bit registers a tile holds twice the columns, so each load of x and of the
packed panel feeds twice the multiply-adds. On this project's machine (AVX-512 cores with
full-width FMA) a 512^3 matmul ran 1.6x faster than with 256-bit tiles (interleaved, 80 calls
each; bench/kernels.py shows the ratio to numpy's BLAS). The default builds with
-march=native, so 512-bit tiles are used where the CPU has AVX-512F; a user's RULEGRAD_CFLAGS
without -march=native targets another CPU, so the tiles stay 256-bit (what x86-64 compilers
handle for any target). `RULEGRAD_VECTOR_BYTES=32` (or 64) chooses.
"""

from __future__ import annotations

from functools import cache

from .env import EnvError, env_get


def vector_bytes() -> int:
    """The packed products' vector register width in bytes (read at each use: the setting may
    change between programs; the machine's answer is read once)."""
    text = (env_get("RULEGRAD_VECTOR_BYTES") or "").strip()
    if text:
        if text not in ("32", "64"):
            raise EnvError(f"RULEGRAD_VECTOR_BYTES={text!r}: expected 32 (256-bit vectors) "
                           f"or 64 (512-bit, AVX-512)")
        return int(text)
    flags = env_get("RULEGRAD_CFLAGS")
    if flags is not None and flags.strip() and "-march=native" not in flags.split():
        return 32
    return 64 if _cpu_has_avx512f() else 32


@cache
def _cpu_has_avx512f() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "avx512f" in line.split()
    except OSError:
        pass
    return False
