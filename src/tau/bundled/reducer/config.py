"""The reducer's constants and patterns (extensions.md §5.5, SoL-Pi's ``config.ts``).

Persisted and model-visible identifiers (entry type, schemas, receipt prefix) keep SoL-Pi's names:
they end up in session files and in the model's context.
"""

from __future__ import annotations

import hashlib
import re

from tau.bundled.reducer import wire

__all__ = [
    "DIAGNOSTIC_COMMAND",
    "EXTRACTOR_COMMAND",
    "FAILURE_SIGNAL",
    "LIKELY_SECRET",
    "MAX_CHARS",
    "MAX_EVIDENCE_ITEMS",
    "MAX_OUTPUT_TOKENS",
    "MAX_QUOTE_CHARS",
    "MIN_BYTES",
    "REDUCER_EVENT_SCHEMA",
    "REDUCER_EVENT_TYPE",
    "REDUCER_RECEIPT_PREFIX",
    "REDUCER_RECEIPT_SCHEMA",
    "SCRIPT_COMMAND",
    "TIMEOUT_SECONDS",
    "sha256",
    "utf8",
]

# The names a session file holds: defined once, in the reducer's wire format.
REDUCER_EVENT_TYPE = wire.JOURNAL_TYPE
REDUCER_EVENT_SCHEMA = wire.EVENT_SCHEMA
REDUCER_RECEIPT_SCHEMA = wire.RECEIPT_SCHEMA
REDUCER_RECEIPT_PREFIX = wire.RECEIPT_PREFIX

MAX_EVIDENCE_ITEMS = 12
MAX_QUOTE_CHARS = 600  # UTF-16 code units, as JavaScript's length
MIN_BYTES = 4096  # UTF-8 bytes of the log body
MAX_CHARS = 600_000  # UTF-16 code units
MAX_OUTPUT_TOKENS = 2048
TIMEOUT_SECONDS = 90.0

# A test or build command: one of these tokens after the start, whitespace or a shell separator,
# followed by whitespace or the end (``pytest -q`` matches, ``rg test src`` does not).
DIAGNOSTIC_COMMAND = re.compile(
    r"(?:^|[;&|()\s])(?:lake\s+build|lake\s+env\s+lean|lean|coq|cargo(?:\s+(?:build|test|check))?"
    r"|zig\s+build|pytest|python(?:3)?\s+-m\s+(?:pytest|unittest|py_compile)|ctest|cmake\s+--build"
    r"|ninja|make|npm\s+test|pnpm\s+test|yarn\s+test|go\s+test|bazel\s+test)(?:\s|$)",
    re.IGNORECASE,
)
# The extractor tier also knows linters, type checkers, JavaScript runners and compilers; a command
# matching neither costs no file access. What is reduced is decided by the log (an extractor must
# recognise it), so a wide net here is safe.
EXTRACTOR_COMMAND = re.compile(
    r"(?:^|[;&|()\s/])(?:mypy|pyright|ruff|flake8|pylint|pycodestyle|tox|nox|eslint|tsc|jest|vitest|npx|pnpm|yarn"
    r"|npm\s+(?:run|test)|bun\s+test|deno\s+test|go\s+(?:build|vet|test)|gcc|g\+\+|clang|clang\+\+|cc|c\+\+"
    r"|cargo|make|pytest|python(?:3(?:\.\d+)?)?\s+-m\s+(?:pytest|unittest|mypy|ruff|flake8))(?:\s|$)",
    re.IGNORECASE,
)
# A shell script run as a command (``sh ci/pytest.sh``, ``bash -e scripts/test``, ``./run_tests.sh``):
# CI jobs and project test runners are mostly scripts, whose names say nothing of the log they print.
# The extractor tier takes them too; an extractor must still recognise the log.
SCRIPT_COMMAND = re.compile(
    r"(?:^|[;&|(])\s*(?:(?:ba|z|da|k)?sh\s+(?:-[A-Za-z]+\s+)*[^\s;&|()-][^\s;&|()]*|[^\s;&|()]*\.(?:sh|bash))(?:\s|$)"
)
FAILURE_SIGNAL = re.compile(
    r"error|failed|failure|fatal|exception|panic|timeout|unsolved|type mismatch|assert", re.IGNORECASE
)
# The seed's precaution (the full scan is ``secret_scan``): a credential-looking name, then an
# assignment and a value. Tightened from the seed's "name, any 32 characters, ``:`` or ``=``", which
# blocked every failing pytest line of a project with "secret" or "bearer" in a test name
# (``tests/test_secret.py::test_x - AssertionError: …``): only name characters may follow the name
# before the assignment, ``::`` and ``==`` are none, and the value (group ``value``, after an
# ``Authorization`` scheme) must be there; ``secret_scan`` also wants it to look generated.
LIKELY_SECRET = re.compile(
    r"(?:api[_-]?key|authorization|bearer|access[_-]?token|secret)[\w.-]{0,32}\\?[\"']?[ \t]*"
    r"(?<![:=])[:=](?![:=])[ \t]*\\?[\"']?(?:(?:Bearer|Basic|Token|Digest)[ \t]+)?(?P<value>[^\s\"'\\,;()\[\]{}<>]{4,200})",
    re.IGNORECASE,
)


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 (a lone surrogate becomes U+FFFD, as Node's encoder does)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def sha256(text: str) -> str:
    """Hex SHA-256 of ``text``'s UTF-8 bytes."""
    return hashlib.sha256(utf8(text)).hexdigest()
