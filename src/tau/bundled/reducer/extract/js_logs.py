"""JavaScript test runners: jest and vitest."""

from __future__ import annotations

import re

from tau.bundled.reducer.extract.model import Failure, Found, Log, Span

__all__ = ["jest", "vitest"]

_JEST_FILE = re.compile(r"^(PASS|FAIL) (\S+)")
_JEST_TEST = re.compile(r"^\s+● (.+)$")
_JEST_TESTS = re.compile(r"^Tests:\s+(.*\btotal)$")
_JEST_SUITES = re.compile(r"^Test Suites:\s+.*\btotal$")
_JEST_FAILED = re.compile(r"(\d+) failed")
_STACK = re.compile(r"^\s+at (?:.* \()?(\S+?):(\d+):(\d+)\)?$")
_FRAME = re.compile(r"^\s*>?\s*\d+ \|")
_EXPECTED = re.compile(r"^\s*(?:Expected|Received|- Expected|\+ Received)\b")


def jest(log: Log) -> Found | None:
    tests = log.last(_JEST_TESTS)
    files = list(log.matches(_JEST_FILE))
    if tests is None and not (files and log.first(_JEST_TEST) is not None):
        return None
    found = Found("jest")
    if tests is not None:
        suites = log.last(_JEST_SUITES, 0, tests)
        found.summary.append(Span(suites if suites is not None and suites >= tests - 1 else tests, tests))
        failed = _JEST_FAILED.search(log.plain[tests])
        found.expected = int(failed.group(1)) if failed else 0
    found.fatal += [Span.at(index) for index, match in files if match.group(1) == "FAIL"]
    bullets = [(index, match) for index, match in log.matches(_JEST_TEST)]
    for number, (index, match) in enumerate(bullets):
        stop = (
            bullets[number + 1][0]
            if number + 1 < len(bullets)
            else (tests if tests is not None else len(log))
        )
        next_file = log.first(_JEST_FILE, index + 1, stop)
        stop = next_file if next_file is not None else stop
        failure = Failure(ident=match.group(1), target=Span.at(index))
        error = log.next_text(index + 1, stop)
        if error is not None:
            failure.error = Span.at(error)
            failure.detail = _expected_block(log, error + 1, stop)
        stack = log.first(_STACK, index + 1, stop)
        if stack is not None:
            failure.locations.append(Span.at(stack))
        if match.group(1).startswith("Test suite failed to run"):
            failure.ident = log.plain[error] if error is not None else match.group(1)
        found.failures.append(failure)
    return found


def _expected_block(log: Log, start: int, stop: int) -> Span | None:
    """The ``Expected: …`` / ``Received: …`` lines after an assertion message."""
    first = log.next_text(start, stop)
    if first is None or not _EXPECTED.match(log.plain[first]):
        return None
    last = first
    while last + 1 < stop and log.plain[last + 1].strip() and not _FRAME.match(log.plain[last + 1]):
        last += 1
    return Span(first, min(last, first + 3))


# -- vitest --------------------------------------------------------------------------------------

_VITEST_FAIL = re.compile(r"^\s*FAIL\s+(\S+?) > (.+?)\s*$")
_VITEST_SUITE = re.compile(r"^\s*FAIL\s+(\S+) \[ .* \]\s*$")
_VITEST_FILES = re.compile(r"^\s*Test Files\s+(.*)$")
_VITEST_TESTS = re.compile(r"^\s*Tests\s+(.*\(\d+\))$")
_VITEST_RUN = re.compile(r"^\s*RUN\s+v\d")
_VITEST_AT = re.compile(r"^\s*❯ (\S+?):(\d+):(\d+)\s*$")
_RULE = re.compile(r"^\s*⎯{3,}")


def vitest(log: Log) -> Found | None:
    tests = log.last(_VITEST_TESTS)
    files = log.last(_VITEST_FILES)
    if tests is None and log.first(_VITEST_RUN) is None:
        return None
    found = Found("vitest")
    if tests is not None:
        found.summary.append(Span(files if files is not None and files == tests - 1 else tests, tests))
        failed = _JEST_FAILED.search(log.plain[tests])
        found.expected = int(failed.group(1)) if failed else 0
    heads = [
        (index, match)
        for index, match in log.matches(_VITEST_FAIL)
        if not _VITEST_SUITE.match(log.plain[index])
    ]
    suites = [index for index, _ in log.matches(_VITEST_SUITE)]
    found.fatal += [Span.at(index) for index in suites]
    for number, (index, match) in enumerate(heads):
        stop = heads[number + 1][0] if number + 1 < len(heads) else (files if files is not None else len(log))
        rule = log.first(_RULE, index + 1, stop)
        stop = rule if rule is not None else stop
        failure = Failure(ident=match.group(2), target=Span.at(index))
        error = log.next_text(index + 1, stop)
        if error is not None:
            failure.error = Span.at(error)
            failure.detail = _expected_block(log, error + 1, stop)
        at = log.first(_VITEST_AT, index + 1, stop)
        if at is not None:
            failure.locations.append(Span.at(at))
        found.failures.append(failure)
    for index in suites:
        error = log.next_text(index + 1)
        found.failures.append(
            Failure(
                ident=log.plain[index].strip(),
                target=Span.at(index),
                error=Span.at(error) if error is not None else None,
            )
        )
    return found
