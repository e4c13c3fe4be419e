"""``@dataclass`` as the standard library's, with ``__repr__``, ``__eq__`` and ``__hash__`` made without ``exec``.

The standard decorator writes each method it adds as source text and compiles it: ~0.12 ms a method,
three or four methods a class, and a ``tau -p`` run defines ~150 dataclasses (~70 ms of its ~200 ms
of CPU went to ``dataclasses._process_class``). The ``__init__`` (and a frozen class's
``__setattr__``/``__delattr__``) still come from the standard library; ``__repr__``, ``__eq__`` and
``__hash__`` are closures over the class's field names, which cost nothing to make. They return
what the generated ones return (Python 3.11's): ``Name(a=1, b='x')`` over the fields with
``repr=True`` (``...`` for a recursive reference), equality of the ``compare=True`` fields as tuples
when both objects have the same class (else ``NotImplemented``), and the hash the standard table
decides (``None`` for a mutable class with ``eq``, a hash of the compared fields for a frozen one).
The class is a dataclass in every other way (``fields``, ``replace``, ``asdict``, ``__match_args__``).

Options that need the generated ordering methods or an ``unsafe_hash`` go to the standard decorator.
"""

from __future__ import annotations

import dataclasses
from _thread import get_ident
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["dataclass"]

_T = TypeVar("_T")


@overload
def dataclass(cls: type[_T], /) -> type[_T]: ...


@overload
def dataclass(
    *,
    init: bool = ...,
    repr: bool = ...,
    eq: bool = ...,
    order: bool = ...,
    unsafe_hash: bool = ...,
    frozen: bool = ...,
    match_args: bool = ...,
    kw_only: bool = ...,
    slots: bool = ...,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(cls: type[Any] | None = None, /, **options: Any) -> Any:
    """``dataclasses.dataclass`` (same options, same result), cheaper to apply: see the module's doc."""
    if cls is None:
        return lambda target: _process(target, options)
    return _process(cls, options)


def _process(cls: type[Any], options: dict[str, Any]) -> type[Any]:
    if options.get("order") or options.get("unsafe_hash"):
        return dataclasses.dataclass(cls, **options)
    want_repr = options.pop("repr", True)
    want_eq = options.pop("eq", True)
    frozen = options.get("frozen", False)
    # Read before the class changes, as the standard library does.
    class_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (
        class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in cls.__dict__)
    )
    cls = dataclasses.dataclass(cls, repr=False, eq=False, **options)
    fields = dataclasses.fields(cls)
    if want_repr and "__repr__" not in cls.__dict__:
        _set(cls, _repr_method([field.name for field in fields if field.repr]))
    if want_eq:
        if "__eq__" not in cls.__dict__:
            _set(cls, _eq_method(_tuple_of([field.name for field in fields if field.compare])))
        if not explicit_hash:
            if frozen:
                hashed = [
                    field.name for field in fields if (field.compare if field.hash is None else field.hash)
                ]
                _set(cls, _hash_method(_tuple_of(hashed)))
            else:
                cls.__hash__ = None  # type: ignore[assignment]
    return cls


def _set(cls: type, method: Callable[..., Any]) -> None:
    method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    setattr(cls, method.__name__, method)


def _tuple_of(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple ``(obj.a, obj.b, ...)`` the generated methods build, read at C level."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _repr_method(names: list[str]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()
    reads = [(f"{name}=", attrgetter(name)) for name in names]

    def __repr__(self: Any) -> str:
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join([label + repr(read(self)) for label, read in reads])
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq_method(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_method(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__
