"""Argument types shared by rulegrad's commands (api/cli.py and the fuzzer's own parser)."""

from __future__ import annotations

import argparse


def _whole(text: str, least: int) -> int:
    """`text` as a whole number of at least `least`, or argparse's worded refusal."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {least} or more, got {value}")
    return value


def count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of examples or programs)."""
    return _whole(text, 1)


def seed_number(text: str) -> int:
    """An argparse type: a whole number of at least 0 (a random seed: numpy's generators refuse
    a negative one)."""
    return _whole(text, 0)
