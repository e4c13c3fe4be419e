"""Reading tau's JSON configuration files (``settings.json``, ``trust.json``, ``mcp.json``) so that every problem is one
line naming the file.

A configuration file is read as a regular file (a named pipe in its place would block ``open()``;
a link to one, as a dotfiles manager makes, is followed), decoded as UTF-8 (a BOM is dropped), and
parsed within :data:`MAX_CONFIG_DEPTH` levels: a value nested deeper would overflow the recursion
of the code that reads, merges and copies settings. Every failure raises :class:`ConfigFileError`
(a ``ValueError``) whose message is ``<path>: <what is wrong>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tau.common import jsjson
from tau.common.regular_files import read_regular

__all__ = ["MAX_CONFIG_DEPTH", "ConfigFileError", "parse_config_json", "read_config_text", "read_json_file"]

# Deeper than any configuration needs; shallow enough for every recursive reader of settings.
MAX_CONFIG_DEPTH = 64


class ConfigFileError(ValueError):
    """A configuration file that cannot be used; ``str()`` is ``<path>: <what is wrong>``."""


def read_config_text(path: Path) -> str | None:
    """The text of a configuration file; ``None`` when it does not exist.

    Raises:
        ConfigFileError: unreadable, not a regular file, or not UTF-8.
    """
    try:
        data = read_regular(path, follow=True)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigFileError(
            f"{path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8"
        ) from exc


def read_json_file(path: Path) -> tuple[Any, bool]:
    """``(value, found)``: the file's JSON value; ``(None, False)`` when the file does not exist.

    A file of only whitespace is ``(None, True)``.

    Raises:
        ConfigFileError: unreadable, not a regular file, not UTF-8, not JSON, or nested too deeply.
    """
    text = read_config_text(path)
    if text is None:
        return None, False
    return parse_config_json(path, text), True


def parse_config_json(path: Path, text: str) -> Any:
    """The JSON value of ``text``, read from ``path``; ``None`` for only whitespace.

    Raises:
        ConfigFileError: not JSON, or nested too deeply.
    """
    if not text.strip():
        return None
    if jsjson.deeper_than(text, MAX_CONFIG_DEPTH):
        raise ConfigFileError(f"{path}: JSON nested deeper than {MAX_CONFIG_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:  # cannot happen within the depth limit; never a traceback anyway
        raise ConfigFileError(f"{path}: JSON nested too deeply") from exc
