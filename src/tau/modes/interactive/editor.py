"""The prompt editor: a ``prompt_toolkit`` buffer with history and completion of commands and paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import InMemoryHistory

from tau.modes.interactive.commands import Command
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["PromptCompleter", "PromptEditor"]


class PromptCompleter(Completer):
    """``/name`` at the start completes commands; a word with a path shape completes paths.

    Args:
        commands: The current commands (tau's and the extensions').
        cwd: Where relative paths start.
    """

    def __init__(self, commands: Callable[[], list[Command]], cwd: str) -> None:
        self._commands = commands
        self._cwd = cwd
        self._paths = PathCompleter(expanduser=True, get_paths=lambda: [cwd])

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before and "\n" not in before:
            typed = before[1:]
            for command in self._commands():
                if command.name.startswith(typed):
                    yield Completion(
                        command.name,
                        start_position=-len(typed),
                        display=f"/{command.name} {command.argument_hint}"
                        if command.argument_hint
                        else f"/{command.name}",
                        display_meta=command.description,
                    )
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            word = word[1:]
        if word and ("/" in word or word.startswith((".", "~"))):
            yield from self._paths.get_completions(Document(word, len(word)), complete_event)


class PromptEditor:
    """The editor as the mode and ``ctx.ui`` use it: text in, text out, history of prompts.

    Args:
        completer: What Tab (and typing ``/``) completes.
        history: Earlier prompts (oldest first), reachable with Up.
    """

    def __init__(self, completer: Completer | None = None, history: Iterable[str] = ()) -> None:
        self.history = InMemoryHistory()
        for text in history:
            self.history.append_string(text)
        self.buffer = Buffer(
            multiline=True,
            completer=completer,
            history=self.history,
            complete_while_typing=Condition(
                lambda: self.buffer.text.startswith("/") and " " not in self.buffer.text
            ),
            name="prompt",
        )

    def get_text(self) -> str:
        return self.buffer.text

    def set_text(self, text: str) -> None:
        text = sanitize_text(text)
        self.buffer.set_document(Document(text, len(text)), bypass_readonly=True)

    def insert_text(self, text: str) -> None:
        self.buffer.insert_text(sanitize_text(text))

    def take(self) -> str:
        """The text to submit; the editor is emptied and the text remembered in the history."""
        text = self.buffer.text
        if text.strip():
            self.history.append_string(text)
        self.buffer.reset()
        return text

    def add_history(self, text: str) -> None:
        self.history.append_string(text)


def relative_cwd(path: str) -> str:
    """``~/project`` for a path under the home directory."""
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home and path.startswith(home) else path
