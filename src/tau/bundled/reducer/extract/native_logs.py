"""go test, cargo test and rustc, gcc and clang (and the linker), make."""

from __future__ import annotations

import re

from tau.bundled.reducer.extract.model import Failure, Found, Log, Span

__all__ = ["cargo", "gcc", "go", "make", "rustc"]

# -- go test -------------------------------------------------------------------------------------

_GO_FAIL = re.compile(r"^(\s*)--- FAIL: (\S+) \(([\d.]+)s\)$")
_GO_RUN = re.compile(r"^=== (?:RUN|CONT|PAUSE)\s+(\S+)$")
_GO_PACKAGE = re.compile(
    r"^(?:FAIL|ok  |\?   )\s*\t?(\S+)\s*(?:\t[\d.]+s|\[[^\]]+\]|\t\[no test files\])?.*$"
)
_GO_PACKAGE_FAIL = re.compile(r"^FAIL\s+(\S+)(?:\s+[\d.]+s|\s+\[[^\]]+\])$")
_GO_MESSAGE = re.compile(r"^\s+\S+\.go:\d+: ")
_GO_BUILD_HEAD = re.compile(r"^# (\S+)$")
_GO_BUILD_ERROR = re.compile(r"^(\S+\.go):(\d+):(\d+): (.*)$")
_GO_PANIC = re.compile(r"^panic: ")
_GO_FRAME = re.compile(r"^\t(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$")


def go(log: Log) -> Found | None:
    fails = list(log.matches(_GO_FAIL))
    packages = list(log.matches(_GO_PACKAGE_FAIL))
    builds = list(log.matches(_GO_BUILD_HEAD))
    if not fails and not packages and not (builds and log.first(_GO_BUILD_ERROR) is not None):
        return None
    found = Found("go")
    found.summary += [Span.at(index) for index, _ in packages]
    runs: dict[str, list[int]] = {}  # once: -v logs are long
    for index, match in log.matches(_GO_RUN):
        runs.setdefault(match.group(1), []).append(index)
    for index, match in fails:
        name = match.group(2)
        failure = Failure(ident=name, target=Span.at(index))
        depth = len(match.group(1))
        after = index + 1
        # go test without -v: the test's messages follow its --- FAIL line, indented deeper
        while (
            after < len(log)
            and log.plain[after].startswith(" " * (depth + 4))
            and not _GO_FAIL.match(log.plain[after])
        ):
            if _GO_MESSAGE.match(log.plain[after]) and failure.error is None:
                failure.error = Span.at(after)
            after += 1
        if failure.error is None:  # -v: they come between === RUN and --- FAIL
            run = max((i for i in runs.get(name, ()) if i < index), default=None)
            if run is not None:
                message = next(
                    (
                        i
                        for i in range(run + 1, index)
                        if _GO_MESSAGE.match(log.plain[i]) and not _GO_RUN.match(log.plain[i])
                    ),
                    None,
                )
                failure.error = Span.at(message) if message is not None else None
        if failure.error is None and after < len(log) and _GO_PANIC.match(log.plain[after]):
            failure.error = Span.at(after)
            frame = next(
                (
                    i
                    for i, m in log.matches(_GO_FRAME, after)
                    if not m.group(1).startswith(("/usr/", "/usr/local/go"))
                    and "/go/src/" not in m.group(1)
                    and "/libexec/src/" not in m.group(1)
                ),
                None,
            )
            if frame is not None:
                failure.locations.append(Span.at(frame))
        found.failures.append(failure)
    for index, _ in builds:
        for error, match in log.matches(_GO_BUILD_ERROR, index + 1):
            if error != index + 1 and not _GO_BUILD_ERROR.match(log.plain[error - 1]):
                break
            found.failures.append(Failure(ident=f"{match.group(1)}:{match.group(2)}", target=Span.at(error)))
    return found


# -- cargo test (libtest) ------------------------------------------------------------------------

_CARGO_TEST = re.compile(r"^test (\S+) (?:- should panic )?\.\.\. FAILED$")
_CARGO_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. \d+ passed; (\d+) failed;.*$")
_CARGO_SECTION = re.compile(r"^---- (\S+) stdout ----$")
_CARGO_PANIC = re.compile(r"^thread '([^']+)'(?: \(\d+\))? panicked at (\S+?):(\d+):(\d+):$")
_CARGO_NOTE = re.compile(r"^note: test did not panic as expected(?: at (\S+?):(\d+):(\d+))?$")
_CARGO_FAILURES = re.compile(r"^failures:$")
_CARGO_ERROR = re.compile(r"^error: (?:test failed|\d+ targets? failed).*$")


def cargo(log: Log) -> Found | None:
    results = list(log.matches(_CARGO_RESULT))
    tests = list(log.matches(_CARGO_TEST))
    if not results and not tests:
        return None
    found = Found("cargo")
    found.summary += [Span.at(index) for index, _ in results]
    found.expected = sum(int(match.group(1)) for _, match in results) if results else None
    found.fatal += [Span.at(index) for index, _ in log.matches(_CARGO_ERROR)]
    sections = {match.group(1): index for index, match in log.matches(_CARGO_SECTION)}
    for index, match in tests:
        name = match.group(1)
        failure = Failure(ident=name, target=Span.at(index))
        start = sections.get(name)
        if start is not None:
            stop = (
                next((i for i in sorted(sections.values()) if i > start), None)
                or log.first(_CARGO_FAILURES, start + 1)
                or len(log)
            )
            panic = log.first(_CARGO_PANIC, start + 1, stop)
            note = log.first(_CARGO_NOTE, start + 1, stop)
            if panic is not None:
                failure.locations.append(Span.at(panic))
                message = log.next_text(panic + 1, stop)
                if message is not None:
                    failure.error = Span.at(message)
                    last = message
                    while last + 1 < stop and log.plain[last + 1].startswith(("  left:", " right:")):
                        last += 1
                    failure.detail = Span(message, last) if last > message else None
            elif note is not None:
                failure.error = Span.at(note)
        found.failures.append(failure)
    listing = log.last(_CARGO_FAILURES)
    if listing is not None and tests:
        last = listing
        while last + 1 < len(log) and log.plain[last + 1].startswith("    ") and log.plain[last + 1].strip():
            last += 1
        if last > listing:
            found.id_blocks.append(Span(listing, last))
    return found


# -- rustc diagnostics (cargo build / check / clippy) --------------------------------------------

_RUSTC_HEAD = re.compile(r"^(error|warning)(?:\[(E\d{4}|[\w:]+)\])?: (.*)$")
_RUSTC_ARROW = re.compile(r"^\s*--> (\S+?):(\d+):(\d+)$")
_RUSTC_SUMMARY = re.compile(
    r"^(?:error: could not compile .*|warning: .* generated \d+ warnings?.*|error: aborting due to .*)$"
)


def rustc(log: Log) -> Found | None:
    found = Found("rustc")
    for index, match in log.matches(_RUSTC_HEAD):
        arrow = index + 1 if index + 1 < len(log) else None
        where = _RUSTC_ARROW.match(log.plain[arrow]) if arrow is not None else None
        if where is None or _RUSTC_SUMMARY.match(log.plain[index]):
            continue
        found.failures.append(
            Failure(
                ident=f"{where.group(1)}:{where.group(2)}",
                target=Span(index, index + 1),
                severity=match.group(1),
            )
        )
    if not found.failures:
        return None
    found.fatal += [Span.at(index) for index, _ in log.matches(_RUSTC_SUMMARY)]
    return found


# -- gcc / clang / the linker --------------------------------------------------------------------

# (not a .py file: mypy --show-column-numbers prints the same shape, and mypy reads those)
_CC = re.compile(r"^([^\s:][^:]*?(?<!\.py)(?<!\.pyi)):(\d+):(\d+): (fatal error|error|warning): (.*)$")
_CC_SUMMARY = re.compile(r"^\d+ (?:warnings? and \d+ )?errors? generated\.$|^\d+ warnings? generated\.$")
_LINK = re.compile(
    r"^(?:.*: )?(?:undefined reference to .*|multiple definition of .*)$|^(?:collect2|ld|clang(?:\+\+)?|g?cc): (?:fatal )?error: .*$|^/usr/bin/ld: .*error.*$"
)


def gcc(log: Log) -> Found | None:
    diagnostics = list(log.matches(_CC))
    links = list(log.matches(_LINK))
    if not diagnostics and not links:
        return None
    found = Found("gcc")
    summary = log.last(_CC_SUMMARY)
    if summary is not None:
        found.summary.append(Span.at(summary))
    for index, match in diagnostics:
        severity = "warning" if match.group(4) == "warning" else "error"
        found.failures.append(
            Failure(ident=f"{match.group(1)}:{match.group(2)}", target=Span.at(index), severity=severity)
        )
    found.fatal += [
        Span.at(index)
        for index, _ in links
        if log.plain[index].split(":")[0] in ("collect2", "ld", "clang", "gcc", "cc", "clang++")
    ]
    found.failures += [
        Failure(ident=log.plain[index], target=Span.at(index))
        for index, match in links
        if Span.at(index) not in found.fatal
    ]
    return found


# -- make ----------------------------------------------------------------------------------------

_MAKE = re.compile(r"^(?:g?make|mingw32-make)(?:\[\d+\])?: \*\*\* .*$")


def make(log: Log) -> Found | None:
    errors = [index for index, _ in log.matches(_MAKE)]
    if not errors:
        return None
    found = Found("make", fatal=[Span.at(index) for index in errors])
    # the recipe's last words before make gave up usually say why
    before = errors[0] - 1
    while before >= 0 and not log.plain[before].strip():
        before -= 1
    if before >= 0 and log.plain[before][:1] not in (" ", "\t", "|") and not _MAKE.match(log.plain[before]):
        found.fatal.insert(0, Span.at(before))
    return found
