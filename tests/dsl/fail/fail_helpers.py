"""Helpers for the fail fixtures (the names are what matters)."""


def fold_alu(a):
    return None


class Ctx:
    """A pass context for the pipeline fixtures."""


def broadcast_of(x):
    """An analysis for the analysis fixtures: a question about a node."""
    return False


MAX_ROW = 4  # a constant rules may read (an all-caps name of a number)
LIMITS = [1, 2]  # not a constant: a list can change
limit = 3  # not a constant: constants are named in capitals
