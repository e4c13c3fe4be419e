"""Input waiting for its moment: queued steers and follow-ups, and held messages.

The agent holds the queued messages themselves (:class:`~tau.agent.queues.MessageQueue`); the
session keeps their texts for ``queue_update`` events and ``get_steering_messages``, and holds the
messages that must not land mid-turn: custom messages for the next prompt (``deliver_as="nextTurn"``),
custom messages appended after the current turn, and user bash results appended when the run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["InputQueues"]


class InputQueues:
    """The queued texts and held messages of one session.

    Args:
        emit: where ``queue_update`` events go.
    """

    def __init__(self, emit: Callable[[dict[str, Any]], None]) -> None:
        self.steering: list[str] = []
        self.follow_up: list[str] = []
        self.next_turn: list[dict[str, Any]] = []
        self.custom: list[dict[str, Any]] = []
        self.bash: list[dict[str, Any]] = []
        self._emit = emit

    def add_text(self, behavior: str, text: str) -> None:
        """A steer (``"steer"``) or follow-up (``"followUp"``) was queued with this text."""
        (self.follow_up if behavior == "followUp" else self.steering).append(text)
        self.emit_update()

    def remove_text(self, text: str) -> None:
        """A queued message was delivered: its text leaves the queue it was in."""
        for texts in (self.steering, self.follow_up):
            if text in texts:
                texts.remove(text)
                self.emit_update()
                return

    def clear_texts(self) -> dict[str, list[str]]:
        """Empty both queues; their texts."""
        cleared = {"steering": self.steering, "followUp": self.follow_up}
        self.steering, self.follow_up = [], []
        self.emit_update()
        return cleared

    def has_texts(self) -> bool:
        return bool(self.steering or self.follow_up)

    @property
    def text_count(self) -> int:
        return len(self.steering) + len(self.follow_up)

    def emit_update(self) -> None:
        self._emit(
            {"type": "queue_update", "steering": list(self.steering), "followUp": list(self.follow_up)}
        )

    def take_next_turn(self) -> list[dict[str, Any]]:
        taken, self.next_turn = self.next_turn, []
        return taken

    def take_custom(self) -> list[dict[str, Any]]:
        taken, self.custom = self.custom, []
        return taken

    def take_bash(self) -> list[dict[str, Any]]:
        taken, self.bash = self.bash, []
        return taken

    def reset(self) -> None:
        """Another session file: the queued texts and held custom messages belong to the old one."""
        self.next_turn.clear()
        self.custom.clear()
        self.steering, self.follow_up = [], []
