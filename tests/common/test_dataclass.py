"""tau's ``@dataclass`` gives the classes the standard decorator gives: same repr, equality, hash and fields.

Each case defines one class body twice, once under each decorator, and compares what a user of the
class can observe.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import pytest

from tau.common.dataclass import dataclass


def _both(options: dict[str, Any], body: dict[str, Any], bases: tuple[type, ...] = ()) -> tuple[type, type]:
    made = []
    for decorate in (dataclasses.dataclass, dataclass):
        namespace = {
            key: (
                dataclasses.field(**value) if isinstance(value, dict) and key != "__annotations__" else value
            )
            for key, value in body.items()
        }
        cls = type("Sample", bases, {"__module__": __name__, "__qualname__": "Sample", **namespace})
        made.append(decorate(**options)(cls))
    return made[0], made[1]


MUTABLE = {
    "__annotations__": {"a": "int", "b": "str", "c": "list[int]"},
    "b": "x",
    "c": {"default_factory": list},
}
HIDDEN = {
    "__annotations__": {"a": "int", "secret": "str", "note": "str"},
    "secret": {"default": "s", "repr": False},
    "note": {"default": "n", "compare": False},
}
CASES = [
    pytest.param({}, MUTABLE, id="mutable"),
    pytest.param({"frozen": True}, MUTABLE, id="frozen"),
    pytest.param({"slots": True}, MUTABLE, id="slots"),
    pytest.param({"frozen": True, "slots": True}, MUTABLE, id="frozen-slots"),
    pytest.param({"kw_only": True}, MUTABLE, id="kw-only"),
    pytest.param({}, HIDDEN, id="repr-compare-false"),
    pytest.param({"frozen": True}, HIDDEN, id="frozen-repr-compare-false"),
    pytest.param({"eq": False}, MUTABLE, id="eq-false"),
    pytest.param({"repr": False}, MUTABLE, id="repr-false"),
    pytest.param({}, {"__annotations__": {}}, id="no-fields"),
    pytest.param({"frozen": True}, {"__annotations__": {"a": "float"}}, id="one-field"),
    pytest.param({}, {"__annotations__": {"a": "int", "k": "ClassVar[int]"}, "k": 3}, id="classvar"),
]


def _hash_or_error(value: Any) -> Any:
    try:
        return hash(value)
    except TypeError as exc:
        return str(exc)


@pytest.mark.parametrize(("options", "body"), CASES)
def test_same_repr_equality_and_hash_as_the_standard_decorator(options, body):
    standard, ours = _both(options, body)
    names = [field.name for field in dataclasses.fields(standard)]
    assert names == [field.name for field in dataclasses.fields(ours)]
    values = {"a": 1, "b": "y", "c": [2], "secret": "t", "note": "m"}
    given = {name: values[name] for name in names}
    other = {**given, **({"a": 2} if "a" in given else {})}
    for left, right in [
        (given, given),
        (given, other),
        ({**given, "note": "z"} if "note" in given else given, given),
    ]:
        expect = standard(**left) == standard(**right)
        assert (ours(**left) == ours(**right)) == expect
        assert (ours(**left) != ours(**right)) == (standard(**left) != standard(**right))
    if options.get("repr", True):
        assert repr(ours(**given)) == repr(standard(**given))
    else:
        assert ours.__repr__ is standard.__repr__ is object.__repr__
    assert (ours.__hash__ is None) == (standard.__hash__ is None)
    if standard.__hash__ is not None and options.get("frozen"):
        assert _hash_or_error(ours(**given)) == _hash_or_error(standard(**given))
    assert ours.__match_args__ == standard.__match_args__
    assert ours.__doc__ == standard.__doc__
    assert (ours(**given) == object()) is False
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            ours(**given).a = 5


def test_nan_and_identity_compare_as_tuples_do():
    standard, ours = _both({"frozen": True}, {"__annotations__": {"a": "float"}})
    nan = math.nan
    assert (ours(nan) == ours(nan)) == (standard(nan) == standard(nan)) is True


def test_a_recursive_repr_shows_dots():
    standard, ours = _both({}, {"__annotations__": {"a": "Any"}})
    loop_standard, loop_ours = standard(None), ours(None)
    loop_standard.a, loop_ours.a = [loop_standard], [loop_ours]
    assert repr(loop_ours) == repr(loop_standard) == "Sample(a=[...])"


def test_methods_written_in_the_class_are_kept():
    def __repr__(self: Any) -> str:
        return "mine"

    def __eq__(self: Any, other: Any) -> bool:
        return True

    standard, ours = _both(
        {"frozen": True}, {"__annotations__": {"a": "int"}, "__repr__": __repr__, "__eq__": __eq__}
    )
    assert repr(ours(1)) == repr(standard(1)) == "mine"
    assert ours(1) == ours(2)
    # A frozen class whose own __eq__ made Python set __hash__ = None gets the generated hash back.
    assert hash(ours(1)) == hash(standard(1))


def test_an_explicit_hash_is_kept():
    def __hash__(self: Any) -> int:
        return 7

    standard, ours = _both({}, {"__annotations__": {"a": "int"}, "__hash__": __hash__})
    assert hash(ours(1)) == hash(standard(1)) == 7


def test_a_subclass_compares_its_own_fields_and_never_equals_its_base():
    @dataclass
    class Base:
        a: int

    @dataclass
    class Child(Base):
        b: int = 0

    assert Child(1, 2) != Child(1, 3)
    assert Child(1, 0) != Base(1)
    assert (
        repr(Child(1, 2))
        == "test_a_subclass_compares_its_own_fields_and_never_equals_its_base.<locals>.Child(a=1, b=2)"
    )
    assert dataclasses.replace(Child(1, 2), b=5) == Child(1, 5)
    assert dataclasses.asdict(Child(1, 2)) == {"a": 1, "b": 2}


def test_order_goes_to_the_standard_decorator():
    @dataclass(frozen=True, order=True)
    class Ranked:
        a: int

    assert Ranked(1) < Ranked(2)
    assert sorted([Ranked(3), Ranked(1)]) == [Ranked(1), Ranked(3)]


_ = ClassVar  # the annotation strings above name it
