"""Argument types shared by rulegrad's commands (api/cli.py and the fuzzer's own parser)."""

from __future__ import annotations

import argparse


def count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of examples or programs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def seed_number(text: str) -> int:
    """An argparse type: a whole number of at least 0 (a random seed: numpy's generators refuse
    a negative one)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value
