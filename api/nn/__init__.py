"""rulegrad.nn: training on top of the Tensor API (tinygrad's `nn` names): `nn.optim`."""

from rulegrad.nn import optim

__all__ = ["optim"]
