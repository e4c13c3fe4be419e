"""pytest (every verbosity and traceback style), unittest and mypy."""

from __future__ import annotations

import re

from tau.bundled.reducer.extract.model import Failure, Found, Log, Span

__all__ = ["mypy", "pytest", "unittest"]

# -- pytest ------------------------------------------------------------------------------------

_BANNER = re.compile(r"^=+ (.+?) =+$")
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")
_OUTCOMES = r"(?:failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun|no tests ran)"
_FINAL = re.compile(
    rf"^(?:=+ )?(?:\d+ {_OUTCOMES}|no tests ran)(?:, \d+ {_OUTCOMES})* in [\d.]+s(?: \([\d:]+\))?(?: =+)?$"
)
_SHORT = re.compile(r"^(FAILED|ERROR) (.+?)(?: - (.*))?$")
_VERBOSE = re.compile(r"^(\S+::\S+(?:\[.*?\])?) (FAILED|ERROR)\b")
_E_LINE = re.compile(r"^E\s+(\S.*)$")
_PY_LOCATION = re.compile(r"^(\S+\.py):(\d+): ?(.*)$")
_NATIVE_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Iteration)\b(?::.*)?$"
)
_COUNT = re.compile(r"(\d+) (failed|errors?)\b")


def _pytest_id(name: str) -> str:
    """``TestCart.test_x[a.b]`` as the tail of a node id: ``TestCart::test_x[a.b]``."""
    head, bracket, params = name.partition("[")
    return head.replace(".", "::") + bracket + params


def _section_failure(log: Log, header: int, stop: int, name: str) -> Failure:
    failure = Failure(ident=name, target=Span.at(header))
    errors = list(log.matches(_E_LINE, header + 1, stop))
    if errors and errors[0][1].group(1).startswith("File "):  # a SyntaxError rendered: its last line says it
        errors = [(index, match) for index, match in errors if _EXCEPTION.match(match.group(1))] or errors
    if errors:
        failure.error = Span.at(errors[0][0])
    frames = [index for index, _ in log.matches(_NATIVE_FRAME, header + 1, stop)]
    if failure.error is None:
        after = frames[-1] + 1 if frames else header + 1
        exception = log.first(_EXCEPTION, after, stop)
        if exception is not None:
            failure.error = Span.at(exception)
    locations = [index for index, _ in log.matches(_PY_LOCATION, header + 1, stop)]
    picks = [locations[-1], locations[0]] if locations else [frames[-1], frames[0]] if frames else []
    for index in dict.fromkeys(picks):
        failure.locations.append(Span.at(index))
    return failure


def pytest(log: Log) -> Found | None:
    banners = [(index, match.group(1)) for index, match in log.matches(_BANNER)]
    names = {name for _, name in banners}
    final = log.last(_FINAL)
    known = {"FAILURES", "ERRORS", "short test summary info"}
    if final is None and not names & known and not any("test session starts" in name for name in names):
        return None
    found = Found("pytest")
    if final is not None:
        found.summary.append(Span.at(final))
        found.expected = sum(int(n) for n, _ in _COUNT.findall(log.plain[final]))
    found.fatal += [
        Span.at(index)
        for index, line in enumerate(log.plain)
        if line.startswith("!!") and "Interrupted" in line
    ]
    sections: dict[str, Failure] = {}
    bare_regions: list[tuple[int, int]] = []  # FAILURES without section headers: --tb=line
    for start in (index for index, name in banners if name in ("FAILURES", "ERRORS")):
        stop = next((index for index, _ in banners if index > start), len(log))
        headers = [(index, match.group(1)) for index, match in log.matches(_SECTION, start + 1, stop)]
        if not headers:
            bare_regions.append((start + 1, stop))
        for number, (header, name) in enumerate(headers):
            end = headers[number + 1][0] if number + 1 < len(headers) else stop
            sections[name] = _section_failure(log, header, end, name)
    lines = [_line_failure(log, region) for region in bare_regions]
    in_lines = [failure for group in lines for failure in group]
    short = list(log.matches(_SHORT))
    listed = [(index, match.group(2), match.group(1)) for index, match in short] or [
        (index, match.group(1), match.group(2)) for index, match in log.matches(_VERBOSE)
    ]
    for index, node, outcome in listed:
        failure = _matching_section(sections, node)
        if failure is None and outcome == "FAILED" and in_lines:
            failure = in_lines.pop(0)
        failure = failure or Failure(ident=node)
        failure.ident, failure.target = node, Span.at(index)
        found.failures.append(failure)
    if not listed:
        found.failures += [*sections.values(), *in_lines]
    if short:
        found.id_blocks.append(Span(short[0][0], short[-1][0]))
    return found


def _matching_section(sections: dict[str, Failure], node: str) -> Failure | None:
    for name in list(sections):
        bare = name.removeprefix("ERROR at setup of ").removeprefix("ERROR at teardown of ")
        collecting = name.removeprefix("ERROR collecting ")
        if node.endswith("::" + _pytest_id(bare)) or node in (collecting, bare):
            return sections.pop(name)
    return None


def _line_failure(log: Log, region: tuple[int, int]) -> list[Failure]:
    """``--tb=line``: each failure is its ``E`` lines, then one ``path.py:N: message`` line."""
    failures = []
    previous = region[0]
    for index, match in log.matches(_PY_LOCATION, *region):
        failure = Failure(ident=f"{match.group(1)}:{match.group(2)}", locations=[Span.at(index)])
        error = log.first(_E_LINE, previous, index)
        failure.error = Span.at(error if error is not None else index)
        failures.append(failure)
        previous = index + 1
    return failures


# -- unittest ----------------------------------------------------------------------------------

_UT_HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([\w.]+)\)(.*)$")
_UT_RULE = re.compile(r"^(?:=|-){20,}$")
_UT_RAN = re.compile(r"^Ran \d+ tests? in [\d.]+s$")
_UT_RESULT = re.compile(r"^(?:FAILED \(.*\)|OK(?: \(.*\))?)$")
_UT_COUNT = re.compile(r"(?:failures|errors|unexpected successes)=(\d+)")


def unittest(log: Log) -> Found | None:
    ran = log.last(_UT_RAN)
    headers = list(log.matches(_UT_HEADER))
    if ran is None and not headers:
        return None
    found = Found("unittest")
    if ran is not None:
        result = log.next_text(ran + 1)
        if result is not None and _UT_RESULT.match(log.plain[result]):
            found.summary.append(Span(ran, result))
            found.expected = sum(int(n) for n in _UT_COUNT.findall(log.plain[result]))
        else:
            found.summary.append(Span.at(ran))
    for number, (header, match) in enumerate(headers):
        stop = headers[number + 1][0] if number + 1 < len(headers) else (ran if ran is not None else len(log))
        failure = Failure(ident=match.group(3), target=Span.at(header))
        frames = [index for index, _ in log.matches(_NATIVE_FRAME, header + 1, stop)]
        after = frames[-1] + 1 if frames else header + 1
        exception = next(
            (
                index
                for index in range(after, stop)
                if log.plain[index].strip()
                and not log.plain[index].startswith((" ", "\t"))
                and not _UT_RULE.match(log.plain[index])
            ),
            None,
        )
        if exception is not None:
            failure.error = Span.at(exception)
        failure.locations += (
            [Span.at(index) for index in dict.fromkeys([frames[-1], frames[0]])] if frames else []
        )
        found.failures.append(failure)
    return found


# -- mypy --------------------------------------------------------------------------------------

_MYPY = re.compile(r"^([^\s:][^:]*\.pyi?):(\d+)(?::\d+)?: (error|note|warning): (.*)$")
_MYPY_FOUND = re.compile(
    r"^(?:Found (\d+) errors? in \d+ files? \(checked \d+ source files?\)|Success: no issues found in \d+ source files?)$"
)


def mypy(log: Log) -> Found | None:
    diagnostics = list(log.matches(_MYPY))
    summary = log.last(_MYPY_FOUND)
    if summary is None and not any("[" in match.group(4) for _, match in diagnostics):
        return None
    found = Found("mypy")
    if summary is not None:
        found.summary.append(Span.at(summary))
        count = _MYPY_FOUND.match(log.plain[summary]).group(1)  # type: ignore[union-attr]
        found.expected = int(count) if count else 0
    starts = {index for index, _ in diagnostics}
    for index, match in diagnostics:
        if match.group(3) == "note":
            continue
        last = index  # --pretty wraps a message: its lines run on until the indented source line
        while (
            last + 1 < len(log)
            and last + 1 not in starts
            and log.plain[last + 1].strip()
            and not log.plain[last + 1].startswith(" ")
            and last + 1 != summary
        ):
            last += 1
        found.failures.append(
            Failure(
                ident=f"{match.group(1)}:{match.group(2)}", target=Span(index, last), severity=match.group(3)
            )
        )
    return found
