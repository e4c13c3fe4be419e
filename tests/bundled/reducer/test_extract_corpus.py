"""The extractor tier over real logs: every failing id and its first error line quoted, nothing invented.

The logs under ``corpus/`` were printed by the real tools on this machine; what failed in each comes
from the tool's own machine-readable output (``corpus/README.md``), never from the extractors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tau.bundled.reducer.config import sha256
from tau.bundled.reducer.extract import MAX_ITEMS, MAX_QUOTE_CHARS, extract
from tau.bundled.reducer.extract.model import ANSI
from tau.bundled.reducer.receipt import extracted_receipt

CORPUS = Path(__file__).parent / "corpus"
LOGS = sorted(path.stem for path in CORPUS.glob("*.log"))
# the format each log is recognised as
FORMATS = {
    "cargo-build-error": "rustc",
    "cargo-test": "cargo",
    "cargo-test-backtrace": "cargo",
    "clang": "gcc",
    "eslint": "eslint",
    "flake8": "flake8",
    "gcc": "gcc",
    "go-build-fail": "go",
    "go-test": "go",
    "go-test-v": "go",
    "jest": "jest",
    "make": "gcc+make",
    "mypy": "mypy",
    "mypy-pretty": "mypy",
    "ruff": "ruff",
    "ruff-concise": "ruff",
    "tsc": "tsc",
    "tsc-pretty": "tsc",
    "tsc7-pretty": "tsc",
    "unittest": "unittest",
    "unittest-v": "unittest",
    "vitest": "vitest",
}


def _plain(text: str) -> str:
    return " ".join(ANSI.sub("", text).split())


def _expect(name: str) -> dict:
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))


def _failing(expect: dict) -> list[dict]:
    """What must be quoted: failures and errors (a compiler's notes and a linter's warnings may not fit)."""
    keep = []
    for entry in expect["failing"]:
        if (
            entry.get("level", "error") not in ("error", "fatal error", "warning")
            or entry.get("severity", 2) != 2
        ):
            continue
        keep.append(entry)
    return keep


def _names_id(quotes: list[str], entry: dict, fmt: str) -> bool:
    ident = entry["id"]
    if fmt == "tsc":
        file, line = ident.rsplit(":", 1)
        return any(f"{file}({line}," in q or f"{file}:{line}:" in q for q in quotes)
    if fmt == "eslint":
        file, line = ident.rsplit(":", 1)
        message = entry["error"].rstrip(".")  # the stylish formatter drops the final period
        return any(line.endswith(file) for q in quotes for line in q.split("\n")) and any(
            re.search(rf"(?:^|\s){line}:\d+\s+error\s+{re.escape(message)}", q) for q in quotes
        )
    if fmt == "unittest":
        return any(f"({ident})" in q for q in quotes)
    if fmt == "go" and ":" not in ident:
        return any(f"--- FAIL: {ident} (" in q for q in quotes)
    if re.fullmatch(r"\S+:\d+", ident):  # file:line, not file:line0
        return any(re.search(re.escape(ident) + r"(?!\d)", q) for q in quotes)
    return any(ident in q for q in quotes)


def _error_text(entry: dict, fmt: str) -> str:
    error = entry["error"]
    if fmt == "jest":
        error = error.removeprefix("Error: ")  # jest's JSON names the class, its report does not
    if fmt == "eslint":
        error = error.rstrip(".")
    return _plain(error)


@pytest.mark.parametrize("name", LOGS)
def test_every_failing_id_and_its_first_error_line_are_quoted(name):
    log = (CORPUS / f"{name}.log").read_text(encoding="utf-8")
    expect = _expect(name)
    extraction = extract(log)
    assert extraction is not None, f"{name} is not recognised"
    assert extraction.format == FORMATS.get(name, expect["format"])
    quotes = [ANSI.sub("", quote) for _, quote in extraction.items]
    plain = [_plain(quote) for quote in quotes]
    for entry in _failing(expect):
        assert _names_id(quotes, entry, expect["format"]), f"{name}: no quote names {entry['id']}"
        error = _error_text(entry, expect["format"])
        assert not error or any(error in quote for quote in plain), (
            f"{name}: {entry['error']!r} is not quoted"
        )
    assert extraction.unquoted == 0 and not extraction.uncertain


@pytest.mark.parametrize("name", LOGS)
def test_no_quote_that_is_not_in_the_log(name):
    log = (CORPUS / f"{name}.log").read_text(encoding="utf-8")
    extraction = extract(log)
    is_error = _expect(name)["exit_code"] != 0
    receipt = extracted_receipt(extraction.items, log, is_error, extraction.uncertain)
    assert receipt is not None and len(receipt.evidence) == len(extraction.items) <= MAX_ITEMS
    for evidence in receipt.evidence:
        assert evidence.quote in log and 1 <= len(evidence.quote) <= MAX_QUOTE_CHARS
        first = log.index(evidence.quote)
        assert evidence.line == log.count("\n", 0, first) + 1  # the seed's rule: its first occurrence
        assert evidence.quote_sha256 == sha256(evidence.quote)
    assert receipt.status == ("failure" if is_error else "success")
    if is_error:
        assert any(e.kind in ("failure", "fatal", "target") for e in receipt.evidence)


def test_a_passing_run_keeps_its_summary_line():
    log = (CORPUS / "pytest-pass-v.log").read_text(encoding="utf-8")
    extraction = extract(log)
    assert extraction.failures == 0 and ("summary", log.strip().splitlines()[-1]) in extraction.items


def test_sixty_failures_fit_the_budget_with_every_id_in_the_short_summary():
    log = (CORPUS / "pytest-many.log").read_text(encoding="utf-8")
    extraction = extract(log)
    assert extraction.failures == 60 and extraction.unquoted == 0
    assert sum(len(quote) for _, quote in extraction.items) < len(log) / 8
    # all sixty fail alike: the error line and its location once, not sixty times
    assert [q for k, q in extraction.items if k == "failure"] == ["E       KeyError: 'de'"]


def test_more_failures_than_the_budget_holds_are_counted(tmp_path):
    blocks = "".join(
        f"{'=' * 70}\nFAIL: test_{n:03d} (tests.test_big.TestBig.test_{n:03d})\n{'-' * 70}\n"
        f'Traceback (most recent call last):\n  File "/w/tests/test_big.py", line {n + 5}, in test_{n:03d}\n'
        f"    self.assertEqual(f({n}), {n + 1})\nAssertionError: {n} != {n + 1} in case {'x' * (n % 7)}\n\n"
        for n in range(90)
    )
    log = f"{'F' * 90}\n{blocks}{'-' * 70}\nRan 90 tests in 0.010s\n\nFAILED (failures=90)\n"
    extraction = extract(log)
    assert extraction.format == "unittest" and extraction.failures == 90
    assert len(extraction.items) == MAX_ITEMS and extraction.unquoted > 0
    assert ("summary", "Ran 90 tests in 0.010s\n\nFAILED (failures=90)") in extraction.items


UNKNOWN = {
    "ls": "total 48\ndrwxr-xr-x  5 me me 4096 Dec  6 10:00 .\n-rw-r--r--  1 me me  812 Dec  6 09:58 README.md\n"
    * 40,
    "git-log": "".join(
        f"commit {n:040x}\nAuthor: A <a@example.com>\nDate:   Mon Dec 1 10:00:00 2026\n\n    fix: error handling in parser {n}\n\n"
        for n in range(60)
    ),
    "npm-install": "npm warn deprecated inflight@1.0.6: This module is not supported\n" * 30
    + "added 312 packages, and audited 313 packages in 4s\n\n42 packages are looking for funding\n",
    "docker-build": "".join(
        f"#{n} [stage {n}] RUN apt-get install -y pkg{n}\n#{n} DONE 0.{n}s\n" for n in range(80)
    )
    + "ERROR: failed to solve: process did not complete successfully: exit code: 100\n",
    "python-traceback": 'Traceback (most recent call last):\n  File "/app/main.py", line 3, in <module>\n'
    "    main()\nValueError: bad config\n" * 20,
}


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_an_unknown_format_is_left_alone(name):
    assert extract(UNKNOWN[name]) is None


def test_the_same_compiler_error_in_many_files_is_quoted_a_few_times_and_counted():
    lines = "".join(
        f"cc -O2 -c src/module_{n}.c\nsrc/module_{n}.c:12:5: error: unknown type name 'cfg_handle_t'\n"
        for n in range(130)
    )
    log = lines + "gen/cfg_handle.h: No such file or directory\nmake: *** [Makefile:2: all] Error 1\n"
    extraction = extract(log)
    assert extraction.format == "gcc+make" and extraction.failures == 130
    targets = [quote for kind, quote in extraction.items if kind == "target"]
    assert len(targets) == 6 and extraction.unquoted == 124
    assert ("fatal", "gen/cfg_handle.h: No such file or directory") in extraction.items
    assert ("fatal", "make: *** [Makefile:2: all] Error 1") in extraction.items


def test_mypy_with_columns_is_mypy_only():
    log = "typed/a.py:3:5: error: Incompatible types in assignment  [assignment]\nFound 1 error in 1 file (checked 2 source files)\n"
    extraction = extract(log)
    assert (extraction.format, extraction.failures) == ("mypy", 1)


def _unittest_failure(cls: str, n: int, error: str) -> str:
    return (
        "======================================================================\n"
        f"FAIL: test_{cls.lower()}_{n:02d} (tests.test_{cls.lower()}.Test{cls}.test_{cls.lower()}_{n:02d})\n"
        "----------------------------------------------------------------------\n"
        "Traceback (most recent call last):\n"
        f'  File "/repo/tests/test_{cls.lower()}.py", line {8 + 3 * n}, in test_{cls.lower()}_{n:02d}\n'
        f"    self.assertEqual(f({n}), {n + 1})\n"
        f"{error}\n\n"
    )


def test_more_failures_than_fit_quote_each_test_class_first_and_a_few_of_each():
    """Three bugs in three test classes, 25 failures each, all ``AssertionError: # != #``: the
    receipt quotes each class's first failure in full (the third bug was missing from fix-the-tests'
    first receipt, 17 of whose 24 items were ``FAIL:`` lines of the first class), then a few more."""
    classes = ("Scale", "Mean", "Slug")
    log = "".join(
        _unittest_failure(cls, n, f"AssertionError: {n + 7} != {n + 1}") for cls in classes for n in range(25)
    ) + "----------------------------------------------------------------------\nRan 75 tests in 0.068s\n\nFAILED (failures=75)\n"
    extraction = extract(log)
    assert extraction.format == "unittest" and extraction.failures == 75
    quotes = [quote for _, quote in extraction.items]
    for cls in classes:
        name = cls.lower()
        assert f"FAIL: test_{name}_00 (tests.test_{name}.Test{cls}.test_{name}_00)" in quotes
        assert f'File "/repo/tests/test_{name}.py", line 8, in test_{name}_00' in quotes
        assert sum(f".Test{cls}." in quote for quote in quotes) == 6  # the first, and five more
    assert "AssertionError: 7 != 1" in quotes
    assert extraction.unquoted == 75 - 18


def test_failing_tests_that_fit_are_all_quoted_whatever_their_class():
    log = "".join(_unittest_failure("Scale", n, f"AssertionError: {n + 7} != {n + 1}") for n in range(12))
    extraction = extract(log + "Ran 12 tests in 0.01s\n\nFAILED (failures=12)\n")
    assert extraction.unquoted == 0
    assert sum("FAIL: test_scale_" in quote for _, quote in extraction.items) == 12
