"""Helpers for the fail fixtures (the names are what matters)."""


def fold_alu(a):
    return None


class Ctx:
    """A pass context for the pipeline fixtures."""
