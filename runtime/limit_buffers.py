"""The setting of the per-kernel buffer limit, which both schedulers read (the pass itself is
`limit_buffers` in rules/rangeify.rules, its walk rules/buffer_limit.py); the schedule cache
keys on it too."""

from __future__ import annotations

from .env import env_int

DEFAULT_MAX_KERNEL_BUFFERS = 128


def max_kernel_buffers() -> int:
    """The limit (0 turns it off; otherwise at least 4: an output and a ternary op's inputs).
    tinygrad's name, MAX_KERNEL_BUFFERS, sets it for both schedulers; RULEGRAD_MAX_KERNEL_BUFFERS
    else."""
    n = env_int("MAX_KERNEL_BUFFERS", 0) or env_int("RULEGRAD_MAX_KERNEL_BUFFERS",
                                                    DEFAULT_MAX_KERNEL_BUFFERS)
    return 0 if n == 0 else max(n, 4)
