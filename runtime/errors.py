"""The Tensor API's exception types, each catchable as numpy's and as torch's/tinygrad's.

numpy raises ValueError (or IndexError for an axis) where torch and tinygrad raise RuntimeError;
rulegrad follows numpy's semantics and tinygrad's signatures, so its errors are both.
"""


class AxisError(IndexError, ValueError, RuntimeError):
    """An axis outside the tensor's dimensions."""


class InvalidArgument(ValueError, RuntimeError):
    """A bad shape or argument (shapes that do not match, an unknown mode, ...)."""


class DtypeError(TypeError, RuntimeError):
    """An operand of a dtype the op does not take (a float shifted, a bool negated): numpy's
    TypeError, torch's RuntimeError."""


def need_real(what: str, value: object) -> None:
    """Refuse, as torch does, a value that is no real number (None, a string, a complex, a
    list) where a creation function takes one: a TypeError naming the argument. numpy had
    converted None to NaN (`Tensor.full(shape, None)`). A number, a numpy scalar and a
    one-element tensor (all convert with `float()`) pass."""
    if isinstance(value, (str, bytes, complex)) or not hasattr(value, "__float__") or \
            type(value).__name__.startswith("complex"):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__}")


def need_int(what: str, value: object) -> None:
    """Refuse, as torch does, a count or a bound that is no integer (a float, None, a bool)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
