"""Bounded runs of the scheduler's differential fuzzer (runtime/fuzz.py): random tensor
programs through schedule + kernel interpreter, and through schedule + C, compared with the
numpy oracle.

The full run is `rulegrad fuzz --n 10000 [--backend c]`; here a few hundred seeds keep the
suite fast. A failure prints its seed and the shrunk program.
"""

from rulegrad.runtime.fuzz import Program, Step, _without, fuzz, generate, mismatch


def test_a_few_hundred_random_programs_match_the_oracle() -> None:
    failures = fuzz(300, start=100_000)
    assert not failures, "\n\n".join(f"seed {s}: {e}\n{p.source()}" for s, e, p in failures)


def test_random_programs_through_c_match_the_oracle() -> None:
    # each program is its own C library (a compile each), so fewer seeds than on the interpreter
    failures = fuzz(40, start=200_000, backend="c")
    assert not failures, "\n\n".join(f"seed {s}: {e}\n{p.source()}" for s, e, p in failures)


def test_programs_are_deterministic_and_varied() -> None:
    assert generate(5) == generate(5)
    ops = {s.op for seed in range(200) for s in generate(seed).steps}
    assert {"reshape", "permute", "pad", "shrink", "flip", "expand", "sum", "max", "realize",
            "add", "where"} <= ops


def test_shrinking_drops_a_step_with_its_dependents() -> None:
    prog = Program(0, (Step("input", (), 0, (2, 3)), Step("input", (), 1, (2, 3)),
                       Step("add", (0, 1), None, (2, 3)), Step("relu", (0,), None, (2, 3))),
                   (2, 3))
    smaller = _without(prog, 1)  # input 1 goes, and the add that reads it
    assert smaller is not None
    assert [s.op for s in smaller.steps] == ["input", "relu"] and smaller.outputs == (1,)
    assert mismatch(smaller) is None
