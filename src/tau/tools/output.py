"""Streaming command output with bounded memory (pi 1.6 ``output-accumulator.ts``).

Raw bytes are decoded incrementally the way Node's ``TextDecoder`` does (invalid UTF-8 becomes
U+FFFD, never an error); only a rolling tail of the decoded text is kept for display. Once the
output passes either display limit, the raw bytes (all of them, from the first) go to a spill
file ``<tmpdir>/tau-bash-<16 hex>.log`` created with mode 0600.

A spill file that cannot be created or written (a full disk, ``ulimit -f``: ``ENOSPC``, ``EFBIG``) never
raises into the command's output callbacks (an exception there is an asyncio "Exception in callback"
and the output is lost without a word): the accumulator stops writing it, keeps the display tail,
and :attr:`OutputAccumulator.spill_failure` says what the file holds and why the rest is missing.
"""

from __future__ import annotations

import codecs
import os

from tau.common.dataclass import dataclass
from tau.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_tail,
    utf8_len,
)

__all__ = [
    "FullOutput",
    "OutputAccumulator",
    "OutputSnapshot",
    "SpillFailure",
    "create_output_file",
    "write_all",
]

OUTPUT_FILE_MODE = 0o600


def create_output_file(prefix: str, extension: str) -> tuple[str, int]:
    """A new ``<tmpdir>/<prefix>-<16 hex><extension>`` opened for writing: ``(path, fd)``.

    ``O_EXCL`` never follows a link someone else placed at the path; output may be private, so 0600.
    """
    import tempfile  # only when output spills to a file

    # os.urandom is what secrets.token_hex reads; importing secrets (random, hashlib) costs ~7 ms at start.
    path = os.path.join(tempfile.gettempdir(), f"{prefix}-{os.urandom(8).hex()}{extension}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OUTPUT_FILE_MODE)
    return path, fd


@dataclass
class OutputSnapshot:
    content: str
    truncation: TruncationResult
    full_output_path: str | None


@dataclass
class FullOutput:
    content: str
    truncated: bool  # whether content omits part of the output


@dataclass(frozen=True)
class SpillFailure:
    """Why the spill file does not hold the whole output."""

    path: str | None  # the file, when it was created
    kept: int  # bytes of the output it holds (its first ones)
    reason: str  # the system's words: "File too large", "No space left on device"

    def describe(self, total: int) -> str:
        """``Full output not saved: …`` / ``Full output incomplete: <path> holds the first …``."""
        if self.path is None or self.kept == 0:
            where = f" ({self.path} is empty)" if self.path is not None else ""
            return f"Full output not saved{where}: {self.reason}"
        return (
            f"Full output incomplete: {self.path} holds the first {format_size(self.kept)} of "
            f"{format_size(total)}; writing the rest failed: {self.reason}"
        )


def _decoder() -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


class OutputAccumulator:
    """Collects a command's output; see the module docstring."""

    def __init__(
        self,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_file_prefix: str = "tau-output",
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._max_rolling = max(max_bytes * 2, 1)
        self._prefix = temp_file_prefix
        self._decoder = _decoder()
        self._at_start = True
        self._raw_chunks: list[bytes] = []
        self._tail = ""
        self._tail_bytes = 0
        self._tail_at_line_start = True
        self._raw_bytes = 0
        self._decoded_bytes = 0
        self._completed_lines = 0
        self._total_lines = 0
        self._line_bytes = 0
        self._open_line = False
        self._finished = False
        self._path: str | None = None
        self._fd: int | None = None
        self._written = 0  # bytes in the spill file
        self._failure: SpillFailure | None = None

    @property
    def full_output_path(self) -> str | None:
        """The spill file, when it holds the whole output (``None`` once writing it failed)."""
        return None if self._failure is not None else self._path

    @property
    def spill_failure(self) -> SpillFailure | None:
        """Why the spill file is missing or incomplete (``None`` while it is whole, or not needed)."""
        return self._failure

    @property
    def raw_bytes(self) -> int:
        """Bytes of output received so far."""
        return self._raw_bytes

    @property
    def last_line_bytes(self) -> int:
        """UTF-8 size of the last (unterminated) line."""
        return self._line_bytes

    def append(self, data: bytes) -> None:
        if self._finished:
            raise RuntimeError("Cannot append to a finished output accumulator")
        self._raw_bytes += len(data)
        self._append_text(self._decode(data, final=False))
        if self._failure is not None:
            return  # the spill file failed: only the display tail goes on
        if self._fd is not None or self._needs_file():
            self._ensure_file()
            self._write(data)
        elif data:
            self._raw_chunks.append(data)

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        self._append_text(self._decode(b"", final=True))
        if self._needs_file():
            self._ensure_file()

    def snapshot(self, persist_if_truncated: bool = False) -> OutputSnapshot:
        # When the retained tail is only the end of one over-long line, show that end.
        text = self._snapshot_text() or self._tail
        tail = truncate_tail(text, self.max_lines, self.max_bytes)
        truncated = self._total_lines > self.max_lines or self._decoded_bytes > self.max_bytes
        truncated_by = None
        if truncated:
            truncated_by = tail["truncatedBy"] or (
                "bytes" if self._decoded_bytes > self.max_bytes else "lines"
            )
        truncation: TruncationResult = {
            **tail,
            "truncated": truncated,
            "truncatedBy": truncated_by,
            "totalLines": self._total_lines,
            "totalBytes": self._decoded_bytes,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }
        if persist_if_truncated and truncated:
            self._ensure_file()
        return OutputSnapshot(truncation["content"], truncation, self.full_output_path)

    def close_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def read_full_output(self, max_bytes: int) -> FullOutput:
        """All output (after :meth:`finish` and :meth:`close_file`); over ``max_bytes`` raw bytes, the
        first and last halves around ``[... N bytes omitted ...]``. Without a whole spill file: what
        is kept in memory (the display tail, ``truncated`` when the output was longer)."""
        if self._failure is not None:
            return FullOutput(self._snapshot_text() or self._tail, self._decoded_bytes > utf8_len(self._tail))
        if self._path is None:
            return FullOutput(_decode_all(b"".join(self._raw_chunks)), False)
        from tau.common.regular_files import open_regular

        with open(open_regular(self._path), "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= max_bytes:
                return FullOutput(_decode_all(handle.read()), False)
            head_size = max_bytes // 2
            tail_size = max_bytes - head_size
            head = handle.read(head_size)
            handle.seek(size - tail_size)
            tail = handle.read(tail_size)
        # Cut at character boundaries: the head drops an incomplete trailing sequence, the tail skips
        # leading continuation bytes.
        head_text = _decoder().decode(head, final=False)
        start = 0
        while start < len(tail) and (tail[start] & 0xC0) == 0x80:
            start += 1
        omitted = size - head_size - tail_size
        return FullOutput(
            f"{head_text}\n\n[... {omitted} bytes omitted ...]\n\n{_decode_all(tail[start:])}", True
        )

    def _decode(self, data: bytes, final: bool) -> str:
        text = self._decoder.decode(data, final=final)
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")  # TextDecoder drops a leading byte order mark
        return text

    def _append_text(self, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        self._decoded_bytes += size
        self._tail += text
        self._tail_bytes += size
        if self._tail_bytes > self._max_rolling * 2:
            self._trim_tail()
        newlines = text.count("\n")
        if newlines == 0:
            self._line_bytes += size
            self._open_line = True
        else:
            self._completed_lines += newlines
            rest = text[text.rfind("\n") + 1 :]
            self._line_bytes = utf8_len(rest)
            self._open_line = bool(rest)
        self._total_lines = self._completed_lines + (1 if self._open_line else 0)

    def _trim_tail(self) -> None:
        data = self._tail.encode("utf-8", "surrogatepass")
        if len(data) <= self._max_rolling:
            self._tail_bytes = len(data)
            return
        start = len(data) - self._max_rolling
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        if start != 0:
            self._tail_at_line_start = data[start - 1] == 0x0A
        self._tail = data[start:].decode("utf-8", "replace")
        self._tail_bytes = utf8_len(self._tail)

    def _snapshot_text(self) -> str:
        if self._tail_at_line_start:
            return self._tail
        newline = self._tail.find("\n")
        return self._tail if newline == -1 else self._tail[newline + 1 :]

    def _needs_file(self) -> bool:
        return (
            self._raw_bytes > self.max_bytes
            or self._decoded_bytes > self.max_bytes
            or self._total_lines > self.max_lines
        )

    def _ensure_file(self) -> None:
        if self._path is not None or self._failure is not None:
            return
        try:
            self._path, self._fd = create_output_file(self._prefix, ".log")
        except OSError as exc:
            self._fail(exc)
            return
        chunks, self._raw_chunks = self._raw_chunks, []
        for chunk in chunks:
            self._write(chunk)

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            return
        try:
            self._written += write_all(self._fd, data)
        except OSError as exc:
            self._written += getattr(exc, "written", 0)
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """Stop spilling: the file keeps what was written, the result says why the rest is missing."""
        self._failure = SpillFailure(self._path, self._written, exc.strerror or str(exc))
        self._raw_chunks = []
        self.close_file()


def write_all(fd: int, data: bytes) -> int:
    """Write every byte of ``data`` to ``fd``; returns how many (an ``OSError`` carries ``written``)."""
    view = memoryview(data)
    written = 0
    try:
        while view:
            count = os.write(fd, view)
            written += count
            view = view[count:]
    except OSError as exc:
        exc.written = written  # type: ignore[attr-defined]
        raise
    return written


def _decode_all(data: bytes) -> str:
    return _decoder().decode(data, final=True).removeprefix("\ufeff")
