"""Bounded runs of the scheduler's differential fuzzer (tools/fuzz.py): random tensor
programs through schedule + kernel interpreter, and through schedule + C, compared with the
numpy oracle.

The full run is `rulegrad fuzz --n 10000 [--backend c]`; here a few hundred seeds keep the
suite fast. A failure prints its seed and the shrunk program.
"""

from rulegrad.tools.fuzz import fuzz, generate, mismatch


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
            "add", "where", "symshrink"} <= ops


def test_symbolic_size_programs_reduce_and_output_symbolic_shapes() -> None:
    from rulegrad.tools.fuzz import SymDim

    def symbolic_reduce(p, s):  # a sum or max over a symbolic axis
        shape = p.steps[s.srcs[0]].shape if s.srcs else ()
        return s.op in ("sum", "max") and any(isinstance(shape[a], SymDim) for a in s.arg[0])

    def reaches_output(p, pred):
        hit = [False] * len(p.steps)
        for i, s in enumerate(p.steps):
            hit[i] = pred(p, s) or any(hit[j] for j in s.srcs)
        return any(hit[o] for o in p.outputs)

    progs = [generate(seed) for seed in range(300_000, 300_400)]
    reduced = [p for p in progs if reaches_output(p, symbolic_reduce)]
    shaped = [p for p in progs if any(isinstance(d, SymDim) for o in p.outputs
                                      for d in p.steps[o].shape)]
    assert len(reduced) >= 8 and len(shaped) >= 8
    for p in reduced[:8] + shaped[:8]:
        assert mismatch(p) is None, p.source()


def test_programs_assign_into_shards() -> None:
    def sharded_assign(p, s):  # an assign whose target is realized shards
        t = p.steps[s.srcs[0]] if s.op == "assign" else None
        return t is not None and t.op == "realize" and p.steps[t.srcs[0]].op == "shard"

    progs = [generate(seed) for seed in range(400_000, 400_300)]
    hits = [p for p in progs if any(sharded_assign(p, s) for s in p.steps)]
    # both kinds of value: read from the shards as they are, and from a copy (then scattered)
    via_copy = [p for p in hits if any(sharded_assign(p, s) and s.arg[:1] and s.arg[0][0] == "to"
                                       for s in p.steps)]
    assert len(hits) >= 20 and len(via_copy) >= 5
    for p in hits:
        assert mismatch(p) is None, p.source()
