"""``@file`` arguments (``tau @notes.md @shot.png "explain"``): pi 1.6's ``cli/file-processor.ts``.

Each file goes into the first message, in order: a text file as ``<file name="ABSOLUTE">\\n…\\n</file>\\n``
(a UTF-8 BOM dropped), an image as an image block with ``<file name="ABSOLUTE"></file>\\n`` in the text
(or the note of a conversion inside it). An empty file is skipped. Paths resolve from the working
directory as ``read`` resolves them (``~``, macOS screenshot spellings). The images are not resized
here: the session resizes a prompt's images for its model, as pi does.
"""

from __future__ import annotations

import os
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["FileArgumentError", "FileArguments", "build_initial_message", "process_file_arguments"]


class FileArgumentError(ValueError):
    """A file argument that cannot be used; the message is the line to print (``Error: …``)."""


@dataclass
class FileArguments:
    """The text the files add to the first message, and its image blocks."""

    text: str = ""
    images: list[dict[str, Any]] = field(default_factory=list)


def process_file_arguments(paths: list[str], cwd: str) -> FileArguments:
    """Read the ``@`` files (``paths`` without the ``@``); raises :class:`FileArgumentError`."""
    from tau.tools.images import SNIFF_BYTES, detect_image_mime_type, prepare_image
    from tau.tools.paths import resolve_read_path

    result = FileArguments()
    for given in paths:
        path = resolve_read_path(given, cwd)
        if not os.path.exists(path):
            raise FileArgumentError(f"Error: File not found: {path}")
        try:
            if os.stat(path).st_size == 0:
                continue
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise FileArgumentError(f"Error: Could not read file {path}: {exc.strerror or exc}") from exc
        mime_type = detect_image_mime_type(data[:SNIFF_BYTES])
        if mime_type is None:
            text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
            result.text += f'<file name="{path}">\n{text}\n</file>\n'
            continue
        image = prepare_image(data, mime_type, auto_resize=False)
        if image.omitted:
            result.text += f'<file name="{path}">{image.omitted}</file>\n'
            continue
        result.images.append({"type": "image", "data": image.data, "mimeType": image.mime_type})
        result.text += f'<file name="{path}">' + "\n".join(image.hints) + "</file>\n"
    return result


def build_initial_message(
    stdin_text: str | None, files: FileArguments, messages: list[str]
) -> tuple[str | None, list[dict[str, Any]] | None, list[str]]:
    """pi's first message: piped stdin, then the files' text, then the first message, joined as they are.

    Returns the first message (``None`` when there is nothing), its images (``None`` when there are
    none) and the remaining messages.
    """
    parts = [part for part in (stdin_text, files.text or None) if part is not None]
    rest = list(messages)
    if rest:
        parts.append(rest.pop(0))
    return ("".join(parts) if parts else None), (files.images or None), rest
