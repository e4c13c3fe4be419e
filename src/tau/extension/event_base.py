"""The base of every extension event: :class:`Event`, the ``@event_class`` decorator that makes an event
dataclass and registers its type, and :func:`event_from_payload` (the events are in
:mod:`tau.extension.events`)."""

from __future__ import annotations

import dataclasses
import reprlib
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["EVENT_TYPES", "Event", "event_class", "event_from_payload"]


def _camel(name: str) -> str:
    """``tool_call_id`` → ``toolCallId``; ``continue_`` → ``continue``."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(kw_only=True)
class Event:
    """Base of every event; an event type tau does not know arrives as a plain ``Event``.

    Attributes:
        type: pi's event name (``"turn_end"``).
        raw: The plain-dict payload the session emitted, with pi's keys.
    """

    type: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def __init__(self, **values: Any) -> None:
        # One __init__ for every event, doing what @dataclass(kw_only=True) generates per class (each
        # field keyword-only, else its default): generating 41 of them cost ~10 ms at every start.
        for item in dataclasses.fields(self):
            if item.name in values:
                value = values.pop(item.name)
            elif item.default_factory is not dataclasses.MISSING:
                value = item.default_factory()
            else:
                value = item.default
            setattr(self, item.name, value)
        if values:
            unexpected = next(iter(values))
            raise TypeError(
                f"{type(self).__qualname__}.__init__() got an unexpected keyword argument {unexpected!r}"
            )

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Event:
        values: dict[str, Any] = {}
        for item in dataclasses.fields(cls):
            if item.name in ("type", "raw"):
                continue
            key = _camel(item.name)
            if key in payload:
                values[item.name] = payload[key]
        return cls(type=payload.get("type", cls.type), raw=payload, **values)

    # One __repr__ and __eq__ for every event, the ones @dataclass writes: generating them per class
    # (41 classes, two exec() each) cost ~15 ms at every start.
    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(
            f"{item.name}={getattr(self, item.name)!r}" for item in dataclasses.fields(self) if item.repr
        )
        return f"{self.__class__.__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = [item.name for item in dataclasses.fields(self) if item.compare]
        return [getattr(self, name) for name in names] == [getattr(other, name) for name in names]


# Subclasses inherit Event's __init__, __repr__ and __eq__ (and its __hash__ = None, as @dataclass(eq=True) sets).
_event_dataclass = dataclass(kw_only=True, init=False, repr=False, eq=False)

# Event name -> its dataclass, filled by ``@event_class`` as the event classes are defined.
EVENT_TYPES: dict[str, type[Event]] = {}

_E = TypeVar("_E", bound=Event)


def event_class(cls: type[_E]) -> type[_E]:
    """Make ``cls`` an event dataclass and, when it names an event type, the one for that type."""
    cls = _event_dataclass(cls)
    if cls.type:
        EVENT_TYPES[cls.type] = cls
    return cls


def event_from_payload(payload: dict[str, Any]) -> Event:
    """The dataclass for a pi-shaped payload (``{"type": "tool_call", "toolCallId": ...}``)."""
    cls = EVENT_TYPES.get(payload.get("type", ""), Event)
    return cls.from_payload(payload)
