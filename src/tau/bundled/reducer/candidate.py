"""Which tool results the reducer may replace, and the log inside each (extensions.md §5.5).

A candidate is a ``bash`` result whose command is a test or build command, or a fused
``edit``/``write`` result whose ``then_run`` command is one. Nested calls (``parent_tool_call_id``:
they never reach the transcript) and the ``codemode`` tool's own result are never candidates. The
diagnostic-command check comes first, so a command that will never be reduced costs no file access.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import tempfile
from collections.abc import Callable
from typing import Any

from tau.bundled.fusion.wire import FAILED, SUCCEEDED
from tau.bundled.reducer.config import DIAGNOSTIC_COMMAND, MAX_CHARS
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len
from tau.common.regular_files import open_regular
from tau.extension import content_text

__all__ = [
    "SPILL_FILE_NAME",
    "Candidate",
    "ResultView",
    "exit_failed",
    "find_candidate",
    "read_spill_file",
    "split_status",
]

# pi names its spill file pi-bash-<id>.log, tau tau-bash-<id>.log: both, so pi sessions replay.
SPILL_FILE_NAME = re.compile(r"^(?:pi|tau)-bash-[^/\\]+\.log$")
_FULL_OUTPUT = re.compile(r"Full output:\s*([^\]\r\n]+)")
# The host's final status paragraph of a failed command (pi-host §7.5).
_STATUS = re.compile(
    r"(?:\A|\n\n)(Command exited with code \d+"
    r"|Command timed out after \d+(?:\.\d+)? seconds"
    r"(?:\. The shell exited with code \d+ after \d+(?:\.\d+)? seconds, but background processes it "
    r"started kept writing output until the timeout\.)?"
    r"|Command aborted|Command terminated without an exit code)\Z"
)
_EXIT_LINE = re.compile(r"(?:\A|\n)Command exited with code (\d+)[ \t\r\n]*\Z")
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ResultView:
    """The parts of a ``tool_result`` event the reducer reads (pi's keys where they are data)."""

    tool_name: str
    tool_call_id: str
    input: dict[str, Any]
    content: list[dict[str, Any]]
    details: Any = None
    structured_content: Any = None
    is_error: bool = False
    parent_tool_call_id: str | None = None

    @classmethod
    def of(cls, event: Any) -> ResultView:
        """From a :class:`tau.extension.ToolResultEvent`."""
        return cls(
            tool_name=event.tool_name,
            tool_call_id=event.tool_call_id,
            input=event.input if isinstance(event.input, dict) else {},
            content=list(event.content or []),
            details=event.details,
            structured_content=event.structured_content,
            is_error=bool(event.is_error),
            parent_tool_call_id=event.parent_tool_call_id,
        )


@dataclass(frozen=True)
class Candidate:
    """A reducible log.

    Attributes:
        command: The test or build command.
        body: The log (the spill file's exact bytes when usable, else the inline text without the
            runtime status); ``None`` when the log is over :data:`MAX_CHARS`.
        status: The runtime status paragraph (``Command exited with code 1``) to keep after the
            receipt, or ``None``.
        exit_failed: What the result's own exit signal says (``None``: no signal).
        project: Builds the new content from the receipt text (the status already appended).
    """

    command: str
    body: str | None
    status: str | None
    exit_failed: bool | None
    project: Callable[[str], list[dict[str, Any]]]


def split_status(text: str, is_error: bool) -> tuple[str, str | None]:
    """``(text without its final status paragraph, status)``; only an error result has one."""
    match = _STATUS.search(text) if is_error else None
    if match is None:
        return text, None
    return text[: match.start()], match.group(1)


def exit_failed(view: ResultView, text: str, fused: bool) -> bool | None:
    """The result's own exit signal read from its inline text (never from the spill file).

    ``structuredContent.exit_code`` for bash; else a trailing ``Command exited with code N``; for a
    fused result the first ``then_run`` marker, a trailing non-zero exit line also meaning failure.
    """
    trailing = _EXIT_LINE.search(text)
    trailing_failed = None if trailing is None else int(trailing.group(1)) != 0
    if fused:
        succeeded, failed = text.find(SUCCEEDED), text.find(FAILED)
        if failed >= 0 and (succeeded < 0 or failed < succeeded):
            return True
        if succeeded >= 0:
            return bool(trailing_failed)
        return trailing_failed
    structured = view.structured_content
    code = structured.get("exit_code") if isinstance(structured, dict) else None
    if isinstance(code, int | float) and not isinstance(code, bool):
        return code != 0
    return trailing_failed


def _safe_spill_path(path: str) -> bool:
    if not SPILL_FILE_NAME.match(os.path.basename(path)):
        return False
    try:
        info = os.lstat(path)
        return stat.S_ISREG(info.st_mode) and os.path.dirname(os.path.realpath(path)) == os.path.realpath(
            tempfile.gettempdir()
        )
    except OSError:
        return False


class _OverLimit(Exception):
    pass


def read_spill_file(path: str, max_chars: int = MAX_CHARS) -> str | None:
    """The spill file's text; ``None`` when it is over ``max_chars``.

    Opened without following links or blocking (a regular file only), decoded as a stream, read in bounded chunks (a file that grows
    while it is read stops at the limit). Raises ``OSError`` when it cannot be read.
    """
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size >= 3 * max_chars + 1:
            return None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        parts: list[str] = []
        length = 0
        while True:
            chunk = os.read(fd, _READ_CHUNK)
            text = decoder.decode(chunk, final=not chunk)
            length += js_len(text)
            if length > max_chars:
                raise _OverLimit
            parts.append(text)
            if not chunk:
                return "".join(parts)
    except _OverLimit:
        return None
    finally:
        os.close(fd)


def _exact_body(inline: str, details: Any, max_chars: int) -> str | None:
    """The spill file's text when the result names a safe one, else ``inline``."""
    path = details.get("fullOutputPath") if isinstance(details, dict) else None
    if not isinstance(path, str):
        match = _FULL_OUTPUT.search(inline)
        path = match.group(1).strip() if match else None
    if not path or not _safe_spill_path(path):
        return inline
    try:
        return read_spill_file(path, max_chars)
    except OSError:
        return inline


Accepts = Callable[[str], Any]


def _bash_candidate(view: ResultView, max_chars: int, accepts: Accepts) -> Candidate | None:
    command = view.input.get("command")
    if not isinstance(command, str) or not command or not accepts(command):
        return None
    text = content_text(view.content)
    inline, status = split_status(text, view.is_error)

    def project(receipt: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": receipt if status is None else f"{receipt}\n\n{status}"}]

    body = _exact_body(inline, view.details, max_chars)
    return Candidate(command, body, status, exit_failed(view, text, fused=False), project)


def _marker_block(view: ResultView, marker: str) -> tuple[int, str] | None:
    for index, block in enumerate(view.content):
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if isinstance(text, str) and marker in text:
            return index, text
    return None


def _fused_candidate(view: ResultView, max_chars: int, accepts: Accepts) -> Candidate | None:
    then_run = view.input.get("then_run")
    command = then_run.get("command") if isinstance(then_run, dict) else None
    if not isinstance(command, str) or not command or not accepts(command):
        return None
    marker = FAILED if view.is_error else SUCCEEDED
    found = _marker_block(view, marker)
    if found is None:
        return None
    index, text = found
    suffix_start = text.index(marker) + len(marker)
    suffix = text[suffix_start:]
    newlines = re.match(r"(?:\r?\n)*", suffix).group(0)  # type: ignore[union-attr]
    head = text[:suffix_start] + (newlines or "\n")
    inline, status = split_status(suffix[len(newlines) :], view.is_error)

    def project(receipt: str) -> list[dict[str, Any]]:
        tail = receipt if status is None else f"{receipt}\n\n{status}"
        return [
            {**item, "text": head + tail} if position == index else item
            for position, item in enumerate(view.content)
        ]

    body = _exact_body(inline, view.details, max_chars)
    return Candidate(
        command, body, status, exit_failed(view, content_text(view.content), fused=True), project
    )


def find_candidate(
    view: ResultView, max_chars: int = MAX_CHARS, accepts: Accepts = DIAGNOSTIC_COMMAND.search
) -> Candidate | None:
    """The reducible log of this result, or ``None`` (no file is touched for other commands).

    ``accepts`` says which commands are test or build commands (the seed's list by default).
    """
    if view.parent_tool_call_id or view.tool_name == "codemode":
        return None
    if view.tool_name == "bash":
        return _bash_candidate(view, max_chars, accepts)
    if view.tool_name in ("edit", "write"):
        return _fused_candidate(view, max_chars, accepts)
    return None
