"""rulegrad: a tensor compiler whose every graph transformation is a declarative rewrite rule.

The public surface: the lazy `Tensor`, the IR (`UOp`, `Ops`, `dtypes`) and the rewrite engine.
"""

from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.rewrite import RewriteNotReady, graph_rewrite, graph_rewrite_map
from rulegrad.runtime.uop import UOp
from rulegrad.runtime.variable import Variable

__all__ = ["DType", "GroupOp", "Ops", "RewriteNotReady", "Tensor", "UOp", "Variable", "add_rules",
           "dtypes", "graph_rewrite", "graph_rewrite_map", "jit", "remove_rules"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # the Tensor front end pulls in the backends; load it on first use
    if name == "Tensor":
        from rulegrad.runtime.tensor import Tensor

        return Tensor
    if name == "jit":  # record a step's kernels once, replay them (runtime/jit.py)
        from rulegrad.runtime.jit import jit

        return jit
    if name == "add_rules":  # a user's rule set, loaded and checked, as a pass of the pipeline
        from rulegrad.generator.user import add_rules

        return add_rules
    if name == "remove_rules":
        from rulegrad.runtime.schedule import remove_rules

        return remove_rules
    raise AttributeError(f"module 'rulegrad' has no attribute {name!r}")
