"""The choices an instance is drawn from, and two ways to make them.

`rulegrad check` draws thousands of instances; hypothesis's engine costs about ten times the
work of building and evaluating one (its bookkeeping for shrinking and mutation), which made a
check of `rules/` take minutes. So each choice is a small strategy object that can be sampled
two ways:

- `RandomData(seed)`: a plain `random.Random`, for the check itself (fast, and the same seed
  draws the same instances on every machine and under any load);
- hypothesis's `data` (from `st.data()`): for property tests that want shrinking, and for a
  rule whose guard random draws (almost) never satisfy (`run_hypothesis`: its search steers
  toward the values a guard wants).

`Draws.draw(strategy)` takes either. A rejected instance raises `Reject` (hypothesis's own
"unsatisfied assumption", so a hypothesis test skips it as it would an `assume`).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import UnsatisfiedAssumption as Reject


def assume(condition: object) -> None:
    """Reject the instance being drawn unless `condition` holds."""
    if not condition:
        raise Reject()


class Strategy:
    """A choice: `sample(rng)` draws it with `random`, `hypothesis` is the same choice as a
    hypothesis strategy."""

    def sample(self, rng: random.Random) -> Any:
        raise NotImplementedError

    def to_hypothesis(self) -> st.SearchStrategy:
        raise NotImplementedError

    @cached_property
    def hypothesis(self) -> st.SearchStrategy:
        return self.to_hypothesis()

    def map(self, f: Callable[[Any], Any]) -> Strategy:
        return _Map(self, f)

    def flatmap(self, f: Callable[[Any], Strategy]) -> Strategy:
        return _FlatMap(self, f)


@dataclass(eq=False)
class integers(Strategy):  # noqa: N801 - named like the hypothesis strategy it stands for
    lo: int
    hi: int

    def sample(self, rng: random.Random) -> int:
        return rng.randint(self.lo, self.hi)

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.integers(self.lo, self.hi)


@dataclass(eq=False)
class sampled_from(Strategy):  # noqa: N801
    choices: Sequence[Any]

    def sample(self, rng: random.Random) -> Any:
        return self.choices[rng.randrange(len(self.choices))]

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.sampled_from(list(self.choices))


def booleans() -> Strategy:
    return sampled_from((False, True))


def just(value: Any) -> Strategy:
    return sampled_from((value,))


class one_of(Strategy):  # noqa: N801
    def __init__(self, *options: Strategy):
        self.options = options

    def sample(self, rng: random.Random) -> Any:
        return self.options[rng.randrange(len(self.options))].sample(rng)

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.one_of(*(o.hypothesis for o in self.options))


@dataclass(eq=False)
class floats(Strategy):  # noqa: N801
    """Floats of `width` bits: in [lo, hi] when bounded, else any value at all (random bits:
    every exponent, subnormals, infinities and NaNs)."""

    width: int
    lo: float | None = None
    hi: float | None = None

    def sample(self, rng: random.Random) -> float:
        if self.lo is not None and self.hi is not None:
            return rng.uniform(self.lo, self.hi)
        fmt = {16: "<e", 32: "<f", 64: "<d"}[self.width]
        raw = rng.getrandbits(self.width).to_bytes(self.width // 8, "little")
        return float(struct.unpack(fmt, raw)[0])

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.floats(self.lo, self.hi, width=self.width)


@dataclass(eq=False)
class lists(Strategy):  # noqa: N801
    """Exactly `size` elements."""

    element: Strategy
    size: int

    def sample(self, rng: random.Random) -> list:
        return [self.element.sample(rng) for _ in range(self.size)]

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.lists(self.element.hypothesis, min_size=self.size, max_size=self.size)


@dataclass(eq=False)
class permutations(Strategy):  # noqa: N801
    items: Sequence[Any]

    def sample(self, rng: random.Random) -> list:
        out = list(self.items)
        rng.shuffle(out)
        return out

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.permutations(list(self.items))


@dataclass(eq=False)
class subsets(Strategy):  # noqa: N801
    """A non-empty subset of `items`."""

    items: Sequence[Any]

    def sample(self, rng: random.Random) -> set:
        while True:
            out = {x for x in self.items if rng.random() < 0.5}
            if out:
                return out

    def to_hypothesis(self) -> st.SearchStrategy:
        return st.sets(st.sampled_from(list(self.items)), min_size=1)


@dataclass(eq=False)
class _Map(Strategy):
    inner: Strategy
    f: Callable[[Any], Any]

    def sample(self, rng: random.Random) -> Any:
        return self.f(self.inner.sample(rng))

    def to_hypothesis(self) -> st.SearchStrategy:
        return self.inner.hypothesis.map(self.f)


@dataclass(eq=False)
class _FlatMap(Strategy):
    inner: Strategy
    f: Callable[[Any], Strategy]

    def sample(self, rng: random.Random) -> Any:
        return self.f(self.inner.sample(rng)).sample(rng)

    def to_hypothesis(self) -> st.SearchStrategy:
        return self.inner.hypothesis.flatmap(lambda v: self.f(v).hypothesis)


class RandomData:
    """Stands in for hypothesis's `data`: draws with one seeded `random.Random`."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def draw(self, strategy: Strategy) -> Any:
        return strategy.sample(self.rng)


def draw(data: Any, strategy: Strategy) -> Any:
    """One value of `strategy`, from a `RandomData` or from hypothesis's `data`."""
    if isinstance(data, RandomData):
        return data.draw(strategy)
    return data.draw(strategy.hypothesis)


def run_random(one: Callable[[RandomData], None], examples: int, seed: int,
               attempts_per_example: int = 50) -> int:
    """Call `one` on fresh draws until it has accepted `examples` instances (it returns
    without `Reject`) or `attempts_per_example` times as many were drawn; the count accepted.
    Exceptions other than `Reject` propagate (a refutation, say)."""
    rng = random.Random(seed)
    accepted = 0
    for _ in range(max(1, examples) * attempts_per_example):
        if accepted >= examples:
            break
        try:
            one(RandomData(rng))
        except Reject:
            continue
        accepted += 1
    return accepted


def run_hypothesis(one: Callable[[Any], None], examples: int, seed: int) -> None:
    """Call `one` on draws that hypothesis's engine makes (hypothesis's `data`): slower than
    `run_random`, but its search steers toward instances a guard rarely accepts. Returns when
    `examples` were accepted or hypothesis gives up; other exceptions propagate."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable

    test = settings(max_examples=examples, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), phases=[Phase.generate],
                    print_blob=False, report_multiple_bugs=False)(given(st.data())(one))
    try:
        hypothesis_seed(seed)(test)()
    except Unsatisfiable:
        pass


__all__ = ["RandomData", "Reject", "Strategy", "assume", "booleans", "draw", "floats",
           "integers", "just", "lists", "one_of", "permutations", "run_hypothesis", "run_random",
           "sampled_from", "subsets"]
