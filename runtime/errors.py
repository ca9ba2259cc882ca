"""The Tensor API's exception types, each catchable as numpy's and as torch's/tinygrad's.

numpy raises ValueError (or IndexError for an axis) where torch and tinygrad raise RuntimeError;
rulegrad follows numpy's semantics and tinygrad's signatures, so its errors are both.
"""


class AxisError(IndexError, ValueError, RuntimeError):
    """An axis outside the tensor's dimensions."""


class InvalidArgument(ValueError, RuntimeError):
    """A bad shape or argument (shapes that do not match, an unknown mode, ...)."""
