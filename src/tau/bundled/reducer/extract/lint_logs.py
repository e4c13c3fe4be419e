"""Linters and type checkers that print one finding per line or block: ruff, flake8, eslint, tsc."""

from __future__ import annotations

import re

from tau.bundled.reducer.extract.model import Failure, Found, Log, Span

__all__ = ["eslint", "flake8_style", "ruff", "tsc"]

# path:line:col: CODE message (flake8, ruff --output-format concise, pycodestyle, pylint --format parseable)
_CONCISE = re.compile(r"^(\S+?):(\d+):(\d+): ([A-Z]{1,4}\d{2,4}) (.*)$")
_RUFF_FOUND = re.compile(r"^(?:Found (\d+) errors?\.?.*|All checks passed!)$")
_RUFF_HEAD = re.compile(r"^([A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(\S.*)$")
_RUFF_ARROW = re.compile(r"^\s*--> (\S+?):(\d+):(\d+)$")


def flake8_style(log: Log) -> Found | None:
    findings = list(log.matches(_CONCISE))
    if not findings:
        return None
    summary = log.last(_RUFF_FOUND)
    found = Found("ruff" if summary is not None else "flake8")
    if summary is not None:
        found.summary.append(Span.at(summary))
    for index, match in findings:
        found.failures.append(Failure(ident=f"{match.group(1)}:{match.group(2)}", target=Span.at(index)))
    found.expected = _found_count(log, summary, len(findings))
    return found


def ruff(log: Log) -> Found | None:
    """ruff's full output: ``CODE message``, then `` --> path:line:col`` and a code frame."""
    found = Found("ruff")
    for index, _ in log.matches(_RUFF_HEAD):
        arrow = index + 1 if index + 1 < len(log) else None
        where = _RUFF_ARROW.match(log.plain[arrow]) if arrow is not None else None
        if where is None:
            continue
        found.failures.append(
            Failure(ident=f"{where.group(1)}:{where.group(2)}", target=Span(index, index + 1))
        )
    if not found.failures:
        return None
    summary = log.last(_RUFF_FOUND)
    if summary is not None:
        found.summary.append(Span.at(summary))
    found.expected = _found_count(log, summary, len(found.failures))
    return found


def _found_count(log: Log, summary: int | None, default: int) -> int | None:
    if summary is None:
        return None
    match = _RUFF_FOUND.match(log.plain[summary])
    return int(match.group(1)) if match and match.group(1) else default


# -- eslint (stylish) ----------------------------------------------------------------------------

_ESLINT_PROBLEM = re.compile(r"^\s+(\d+):(\d+)\s+(error|warning)\s+(\S.*?)(?:\s{2,}(\S+))?$")
_ESLINT_SUMMARY = re.compile(r"^[✖✕x] (\d+) problems? \((\d+) errors?, (\d+) warnings?\)$")


def eslint(log: Log) -> Found | None:
    summary = log.last(_ESLINT_SUMMARY)
    problems = list(log.matches(_ESLINT_PROBLEM))
    if summary is None or not problems:
        return None
    found = Found("eslint", summary=[Span.at(summary)])
    counts = _ESLINT_SUMMARY.match(log.plain[summary])
    found.expected = int(counts.group(2)) if counts else None  # errors; warnings are quoted if room
    header: int | None = None
    for index, match in problems:
        file_line = index - 1
        while file_line >= 0 and _ESLINT_PROBLEM.match(log.plain[file_line]):
            file_line -= 1
        if file_line >= 0 and log.plain[file_line].strip() and not log.plain[file_line].startswith(" "):
            header = file_line
        failure = Failure(
            ident=f"{log.plain[header] if header is not None else '?'}:{match.group(1)}",
            target=Span(header, index) if header is not None and index - header <= 1 else Span.at(index),
            severity=match.group(3),
        )
        if header is not None and index - header > 1:
            failure.locations.append(Span.at(header))
        found.failures.append(failure)
    return found


# -- tsc -----------------------------------------------------------------------------------------

_TSC_PLAIN = re.compile(r"^(\S+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$")
_TSC_PRETTY = re.compile(r"^(\S+?):(\d+):(\d+) - (error|warning) (TS\d+): (.*)$")
_TSC_FOUND = re.compile(r"^Found (\d+) errors?(?: in .*)?\.?$")


def tsc(log: Log) -> Found | None:
    diagnostics = list(log.matches(_TSC_PLAIN)) + list(log.matches(_TSC_PRETTY))
    if not diagnostics:
        return None
    found = Found("tsc")
    summary = log.last(_TSC_FOUND)
    if summary is not None:
        found.summary.append(Span.at(summary))
        found.expected = int(_TSC_FOUND.match(log.plain[summary]).group(1))  # type: ignore[union-attr]
    for index, match in sorted(diagnostics, key=lambda pair: pair[0]):
        found.failures.append(
            Failure(
                ident=f"{match.group(1)}:{match.group(2)}", target=Span.at(index), severity=match.group(4)
            )
        )
    return found
