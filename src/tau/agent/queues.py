"""Queues of messages waiting for the running agent: steering and follow-up (pi ``PendingMessageQueue``)."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["QUEUE_MODES", "MessageQueue", "QueueMode"]

QueueMode = Literal["one-at-a-time", "all"]
QUEUE_MODES: tuple[QueueMode, ...] = ("one-at-a-time", "all")


class MessageQueue:
    """Messages queued while the agent runs, handed over at the loop's drain points.

    In ``"one-at-a-time"`` mode (pi's default) a drain hands over the oldest message only and
    leaves the rest for later drain points; in ``"all"`` mode it hands over everything.
    """

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self.mode = mode
        self._messages: list[dict[str, Any]] = []

    @property
    def mode(self) -> QueueMode:
        return self._mode

    @mode.setter
    def mode(self, mode: QueueMode) -> None:
        if mode not in QUEUE_MODES:
            raise ValueError(f"unknown queue mode {mode!r}; use 'one-at-a-time' or 'all'")
        self._mode = mode

    def enqueue(self, message: dict[str, Any]) -> None:
        self._messages.append(message)

    def __len__(self) -> int:
        return len(self._messages)

    def has_items(self) -> bool:
        return bool(self._messages)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of every queued message, oldest first."""
        return list(self._messages)

    def peek(self) -> list[dict[str, Any]]:
        """The messages the next drain would hand over, without removing them."""
        if self._mode == "all":
            return list(self._messages)
        return self._messages[:1]

    def drain(self) -> list[dict[str, Any]]:
        """Remove and return the messages for this drain point."""
        drained = self.peek()
        del self._messages[: len(drained)]
        return drained

    def clear(self) -> list[dict[str, Any]]:
        """Remove every queued message and return them."""
        cleared, self._messages = self._messages, []
        return cleared
