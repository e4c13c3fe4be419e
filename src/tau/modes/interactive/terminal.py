"""The terminal side of the interactive mode: output without cursor position requests, stray writes."""

from __future__ import annotations

from prompt_toolkit.output import Output, create_output

from tau.modes.interactive.model import ChatController

__all__ = ["StrayOutput", "output_without_cpr"]


def output_without_cpr() -> Output:
    """The terminal, without cursor position requests.

    With CPR, prompt_toolkit sizes a non-full-screen app from the terminal's asynchronous answer;
    an answer that arrives after tau printed into the scrollback makes it redraw over printed
    lines. The app's height then follows its content only.
    """
    output = create_output()
    if hasattr(output, "enable_cpr"):
        output.enable_cpr = False
    return output


class StrayOutput:
    """A text stream whose complete lines are shown as notices."""

    encoding = "utf-8"

    def __init__(self, controller: ChatController) -> None:
        self._controller = controller
        self._partial = ""

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            if line.strip():
                self._controller.notice(line, "warning")
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False
