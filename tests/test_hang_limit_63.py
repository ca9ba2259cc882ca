"""The hang limit never raises where the raise would print a traceback the run cannot catch:
inside a `__del__`, or inside a z3 object's `__init__` (a half-built z3 Context's `__del__`
printed "Exception ignored in ... AttributeError: 'Context' object has no attribute 'owner'"
in about 1 of 25 runs of `rulegrad check --hang-timeout 0.03`)."""
import signal
import sys

import pytest

from rulegrad.generator.soundness import _hang_limit, _Hung


def _frame_inside(tmp_path, package: str, method: str):
    """A live frame of `method` of a class in a module of a folder named `package`."""
    folder = tmp_path / package
    folder.mkdir()
    (folder / "made_here.py").write_text(
        "import sys\n"
        "class Thing:\n"
        f"    def {method}(self, seen=None):\n"
        "        if seen is not None:\n"
        "            seen.append(sys._getframe())\n")
    sys.path.insert(0, str(folder))
    try:
        import made_here
        seen = []
        getattr(made_here.Thing.__new__(made_here.Thing), method)(seen)
        return seen[0]
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("made_here", None)


@pytest.mark.parametrize("package, method", [("z3", "__init__"), ("anything", "__del__")])
def test_the_limit_waits_for_the_next_firing_inside_a_constructor_or_finalizer(
        tmp_path, package, method):
    limit = _hang_limit(60)
    limit.quiet = False
    limit._fire(signal.SIGPROF, _frame_inside(tmp_path, package, method))  # no raise


@pytest.mark.parametrize("package, method", [("z3", "check"), ("anything", "__init__")])
def test_the_limit_raises_anywhere_else(tmp_path, package, method):
    limit = _hang_limit(60)
    limit.quiet = False
    with pytest.raises(_Hung):
        limit._fire(signal.SIGPROF, _frame_inside(tmp_path, package, method))
