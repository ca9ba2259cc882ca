"""runtime/record.py's FrozenRecord against its oracle, a `@dataclass(frozen=True)` with the
same fields: the same equality, hash and repr, frozen alike, and the same after pickling and
copying. The runtime's records (View, ShapeTracker, ScheduleItem, Cpu, UserPass), the
optimizer's (Choices and the Pack, Flash and Parallel actions) and the printed
RenderedKernel are such classes because a process's first realize imports them, and a
dataclass compiles its methods when its class is made."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from rulegrad.backends.c.ctext import RenderedKernel
from rulegrad.rules.choices import Choices
from rulegrad.rules.flash_helpers import Flash
from rulegrad.rules.pack_helpers import Pack
from rulegrad.rules.parallel_helpers import Parallel
from rulegrad.runtime.record import FrozenRecord
from rulegrad.runtime.view import ShapeTracker, View


@dataclasses.dataclass(frozen=True)
class _Oracle:
    shape: tuple
    strides: tuple
    offset: int = 0
    mask: tuple | None = None


_CASES = [((4,), (1,)), ((2, 3), (3, 1), 5), ((2, 3), (0, 1), 0, ((0, 1), (1, 3))),
          ((), ()), ((1,), (0,), 0, None)]


@pytest.mark.parametrize("args", _CASES)
def test_a_record_compares_hashes_and_prints_as_a_frozen_dataclass(args):
    v, o = View(*args), _Oracle(*args)
    assert repr(v) == repr(o).replace("_Oracle", "View")
    assert hash(v) == hash(o)
    for other in _CASES:
        assert (v == View(*other)) == (o == _Oracle(*other))
        assert (v != View(*other)) == (o != _Oracle(*other))
    assert v != o and v != tuple(args)  # another class is never equal (as the dataclass says)
    assert View(*args, **{}) == View(**dict(zip(("shape", "strides", "offset", "mask"), args)))


def test_a_record_is_frozen_and_survives_pickling_and_copying():
    v = View((2, 3), (3, 1), 1, ((0, 1), (0, 3)))
    for name in ("shape", "offset", "other"):
        with pytest.raises(AttributeError):
            setattr(v, name, 0)
        with pytest.raises(AttributeError):
            delattr(v, name)
    with pytest.raises(AttributeError):
        v.__dict__  # noqa: B018 - slots only: no per-instance dictionary
    for twin in (pickle.loads(pickle.dumps(v)), copy.copy(v), copy.deepcopy(v)):
        assert twin == v and hash(twin) == hash(v) and type(twin) is View
    st = ShapeTracker((v,))
    assert pickle.loads(pickle.dumps(st)) == st and repr(st) == f"ShapeTracker(views=({v!r},))"


def test_replace_changes_the_fields_it_names_as_dataclasses_replace_does():
    v, o = View((2, 3), (3, 1), 1), _Oracle((2, 3), (3, 1), 1)
    for changes in ({}, {"offset": 4}, {"mask": ((0, 1), (0, 2)), "shape": (1, 2)}):
        assert repr(v.replace(**changes)) == repr(dataclasses.replace(o, **changes)).replace(
            "_Oracle", "View")
    assert v.replace() == v and v.replace(offset=4) != v and v.offset == 1
    with pytest.raises(TypeError):
        v.replace(nope=1)


def test_a_record_of_one_field_keeps_it_in_a_tuple():
    class One(FrozenRecord):
        __slots__ = ("x",)

        def __init__(self, x):
            self._init(x)

    @dataclasses.dataclass(frozen=True)
    class OneOracle:
        x: object

    for x in (1, (1, 2), None):
        assert hash(One(x)) == hash(OneOracle(x)) and repr(One(x)) == f"One(x={x!r})"
    assert One((1, 2)) != One(1) and One(1) == One(1)

    class Other(One):  # the same fields, another class: unequal, as two dataclasses are
        __slots__ = ()

    assert One(1) != Other(1) and not One(1) == Other(1)


def _oracle_of(cls: type) -> type:
    """A frozen dataclass with the record's fields, in order, and its `__init__`'s defaults."""
    params = inspect.signature(cls.__init__).parameters
    specs = [(f, object) if params[f].default is inspect.Parameter.empty else
             (f, object, dataclasses.field(default=params[f].default)) for f in cls._fields]
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True)


# the records a first kernel makes besides the runtime's (the optimizer's actions and choices,
# the printed kernel), each with arguments for a few values
_RECORDS = [
    (Choices, [(), (None, 4), (65536, None, 1, 4, 2, 3, 6)]),
    (Pack, [((0, 1), 2, 4, 16, True, "tiles"), ((0,), 1, 6, 8, False, "", 3)]),
    (Flash, [(0, 1, (2,), (16,), 4, 16, "batch", 4096), (0, 1, (), (), 4, 0, "", 0)]),
    (Parallel, [(((0,),),), (((0, 1), (3,)),)]),
    (RenderedKernel, [("k", "void k(void) {}\n", 0, ()),
                      ("k", "src", 2, ("f",) * 2, ("n",), ("launched",), "packed", 8, 4, (64, 8))]),
]


@pytest.mark.parametrize("cls,cases", _RECORDS, ids=[c.__name__ for c, _ in _RECORDS])
def test_each_converted_record_is_its_frozen_dataclass(cls, cases):
    oracle = _oracle_of(cls)
    for args in cases:
        r, o = cls(*args), oracle(*args)
        assert repr(r) == repr(o) and hash(r) == hash(o)
        for other in cases:
            assert (r == cls(*other)) == (o == oracle(*other))
        assert pickle.loads(pickle.dumps(r)) == r
        with pytest.raises(AttributeError):
            setattr(r, cls._fields[0], None)
        change = {cls._fields[-1]: getattr(r, cls._fields[0])}  # (the last field: the first's)
        assert repr(r.replace(**change)) == repr(dataclasses.replace(o, **change))


def test_choices_name_their_set_fields_and_read_them_back_as_the_dataclass_did():
    oracle = _oracle_of(Choices)
    for args in [(), (None, 4), (65536, None, 1, 4, 2, 3, 6), (0,)]:
        c = Choices(*args)
        want = {k: v for k, v in dataclasses.asdict(oracle(*args)).items() if v is not None}
        assert c.set_fields() == want and Choices.from_fields(want) == c
    assert Choices.from_fields({"vectors_max": 2}) == Choices(vectors_max=2)
    assert Choices.from_fields({"nope": 1}) is None
    assert Choices.from_fields({"grab_tiles": -1}) is None
