"""``tau session context|info|check ID|FILE``: look into a session file without ever writing it.

A session is named by its file, or by its id or a unique start of one, as ``tau --session`` takes it
(:func:`tau.session.lookup.resolve_session`); a prefix several sessions share is an error that lists
them.

``tau session list`` (:mod:`tau.modes.session_list`) lists the sessions of a directory.

Files are opened read-only: a v1/v2 file is migrated in memory only (pi would rewrite it on open),
nothing is locked, nothing is appended. Exit codes: 0 fine, 1 ``check`` found problems, 2 the file
cannot be read as a session (or the command line is wrong), 3 an internal error (one line on stderr,
never a traceback). Whatever a file holds is a reported line, never a crash: values are quoted
shortened (:func:`tau.common.brief.brief`), text output escapes lone surrogates, and values are
nested at most :data:`tau.session.jsonl.MAX_DEPTH` levels.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tau.common import jsjson
from tau.common.brief import brief, clip, label
from tau.common.regular_files import open_regular
from tau.modes.session_list import add_list_parser, run_list
from tau.modes.wording import counted
from tau.session import CURRENT_VERSION, SessionError, SessionManager, jsonl
from tau.session.check import Finding, check_entries, read_layout
from tau.session.jsonl import MAX_DEPTH
from tau.session.projection import convert_to_llm

__all__ = ["build_parser", "main"]

PROG = "tau session"


class InspectError(Exception):
    """The file cannot be inspected; the message names the file and what to do."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="List sessions, or inspect a pi/tau session file (JSONL). Never writes anything.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_list_parser(commands)

    context = commands.add_parser(
        "context",
        help="print the model context (the messages a provider is sent) as a JSON array",
        description="Print convert_to_llm(projection) at the leaf as a JSON array, as pi 1.6 builds it.",
    )
    context.add_argument(
        "file", metavar="ID|FILE", help="session id (or a unique start of one) or file (.jsonl)"
    )
    context.add_argument("--session-dir", metavar="DIR", help="where session files are kept (for an id)")
    context.add_argument("--leaf", metavar="ID", help="project at this entry instead of the last one")
    context.add_argument("--pretty", action="store_true", help="indent the JSON (JSON.stringify(x, null, 2))")
    context.add_argument(
        "--block-images", action="store_true", help='replace images by "Image reading is disabled."'
    )

    info = commands.add_parser("info", help="header, entry counts, branches, leaf and name")
    info.add_argument(
        "file", metavar="ID|FILE", help="session id (or a unique start of one) or file (.jsonl)"
    )
    info.add_argument("--session-dir", metavar="DIR", help="where session files are kept (for an id)")
    info.add_argument("--json", action="store_true", help="print one JSON object instead of text")

    check = commands.add_parser(
        "check",
        help="report every problem with its line number (exit 1 when there is one)",
        description="Report malformed lines, repeated ids, missing parents, cycles, broken targets and "
        "unknown entry types (as notes), each with its line number. Exit 1 when there is a problem.",
    )
    check.add_argument(
        "file", metavar="ID|FILE", help="session id (or a unique start of one) or file (.jsonl)"
    )
    check.add_argument("--session-dir", metavar="DIR", help="where session files are kept (for an id)")
    return parser


def main(argv: list[str]) -> int:
    """Run ``tau session ...`` with ``argv`` (after ``session``); returns the exit code."""
    args = build_parser().parse_args(argv)
    command = {"list": run_list, "context": run_context, "info": run_info, "check": run_check}[args.command]
    try:
        if args.command != "list":
            args.file = session_file(args.file, args.session_dir)
        with recursion_headroom():
            return command(args)
    except InspectError as exc:
        print(f"{PROG} {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # the reader went away: the CLI ends quietly
    except Exception as exc:  # boundary: a bug in tau, not a problem of the file; never a traceback
        reason = clip(str(exc) or "no message", 300)
        print(
            f"{PROG} {args.command}: internal error ({type(exc).__name__}: {reason}); "
            "please report it with the file",
            file=sys.stderr,
        )
        return 3


# Session values nest at most MAX_DEPTH levels; printing one takes up to a few frames per level (the
# JSON encoder, js_string on a nested timestamp), more than Python's default limit of 1000 allows.
RECURSION_LIMIT = 4 * MAX_DEPTH + 1000


@contextlib.contextmanager
def recursion_headroom() -> Iterator[None]:
    """Room for the deepest value a session line may hold (restored afterwards)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


# --- opening ----------------------------------------------------------------------------------


def session_file(value: str, session_dir: str | None) -> str:
    """``value`` as a file: itself when it exists or looks like a path, else the session with that id."""
    import os

    from tau.session.lookup import AmbiguousSessionError, NoSessionError, looks_like_path, resolve_session

    if os.path.exists(value) or looks_like_path(value):
        return value
    from tau.modes.runtime import configured_session_dir, load_settings

    cwd = os.getcwd()
    settings, _ = load_settings(cwd, None)
    try:
        return resolve_session(value, cwd, configured_session_dir(session_dir, cwd, settings)).path
    except AmbiguousSessionError as exc:
        raise InspectError(str(exc)) from exc
    except NoSessionError:
        raise InspectError(
            f"no such file or session id: {value!r}; pass a .jsonl file, or an id from `tau session list`"
        ) from None


def open_session(file: str) -> SessionManager:
    """The session at ``file``, read-only; :class:`InspectError` when it cannot be read as one."""
    path = Path(file)
    if not path.exists():
        raise InspectError(f"no such file: {file!r}; pass the path of a .jsonl session file")
    if not path.is_file():
        raise InspectError(f"{file!r} is not a file; pass the path of a .jsonl session file")
    try:
        return SessionManager.open(path, read_only=True)
    except SessionError as exc:
        raise InspectError(str(exc)) from exc
    except OSError as exc:
        raise InspectError(f"cannot read {file!r}: {exc.strerror or exc}") from exc


def written_header(file: str) -> dict[str, Any]:
    """The header as it is in the file (the store migrates its copy in memory)."""
    with open(open_regular(file), "rb") as stream:
        for raw in stream:
            try:
                value = jsonl.parse(raw)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return {}


def write_bytes(data: bytes) -> None:
    """Write UTF-8 JSON to stdout as bytes (exactly what JSON.stringify gives, whatever the locale)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # stdout replaced by a text-only stream
        sys.stdout.write(data.decode("utf-8", "surrogatepass"))
    else:
        buffer.write(data)
        buffer.flush()


def write_text(text: str) -> None:
    """Write text to stdout as UTF-8; a lone surrogate (from the file, or a file name's undecodable
    byte) is written as its escape ``\\udXXX`` instead of failing the whole output."""
    write_bytes(text.encode("utf-8", "backslashreplace"))


def written_version(header: dict[str, Any]) -> Any:
    """The file's version as pi reads it (``header.version ?? 1``)."""
    version = header.get("version")
    return 1 if version is None else version


# --- context ----------------------------------------------------------------------------------


def run_context(args: argparse.Namespace) -> int:
    session = open_session(args.file)
    leaf = session.get_leaf_id()
    if args.leaf is not None:
        if session.get_entry(args.leaf) is None:
            raise InspectError(
                f"no entry with id {args.leaf!r} in {args.file!r}; "
                f"pass an entry id of this file (`{PROG} info` shows the leaf)"
            )
        leaf = args.leaf
    context = session.build_session_context(leaf)
    messages = convert_to_llm(context["messages"], block_images=args.block_images)
    out = (
        jsjson.dumps_indented(messages).encode("utf-8", "surrogatepass")
        if args.pretty
        else jsjson.dumps(messages)
    )
    write_bytes(out + b"\n")
    return 0


# --- info -------------------------------------------------------------------------------------


def summarize(session: SessionManager, file: str) -> dict[str, Any]:
    """What ``info`` reports, as one JSON-ready dict."""
    entries = session.get_entries()
    types: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    parents = set()
    for entry in entries:
        types[label(entry.get("type"))] += 1
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict):
            roles[label(message.get("role"))] += 1
        parent = entry.get("parentId")
        if isinstance(parent, str) and parent != entry.get("id"):
            parents.add(parent)
    leaves = sum(1 for entry in entries if not (isinstance(entry.get("id"), str) and entry["id"] in parents))
    header = written_header(file)
    context = session.build_session_context()
    return {
        "file": str(Path(file).resolve()),
        "header": header,
        "version": written_version(header),
        "entries": len(entries),
        "types": dict(types),
        "roles": dict(roles),
        "branches": leaves,
        "leafId": session.get_leaf_id(),
        "name": session.get_session_name(),
        "contextMessages": len(context["messages"]),
        "thinkingLevel": context["thinkingLevel"],
        "model": context["model"],
        "problems": len(session.problems),
        "occDecisions": _occ_decisions(session),
        "reducer": _reducer_summary(session),
        "observationWindow": _observation_window(session),
    }


def _reducer_summary(session: SessionManager) -> dict[str, Any] | None:
    """The Evidence-Preserving Reducer's journal on the active branch: receipts by tier, the reducer
    model(s) and how each was chosen, the logs left in full by reason."""
    from tau.bundled.reducer.wire import JOURNAL_TYPE as REDUCER_EVENT_TYPE

    applied: Counter[str] = Counter()
    formats: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter()
    routes: list[dict[str, Any]] = []
    for entry in session.get_branch():
        data = entry.get("data") if entry.get("customType") == REDUCER_EVENT_TYPE else None
        if entry.get("type") != "custom" or not isinstance(data, dict):
            continue
        kind = data.get("kind")
        if kind == "applied":
            tier = label(data.get("tier") or "model")
            applied[tier] += 1
            if tier == "extract":
                formats[label(data.get("format"))] += 1
        elif kind == "fallback":
            fallbacks[label(data.get("reason"))] += 1
        elif kind == "route":
            routes.append(
                {k: data.get(k) for k in ("provider", "model", "source", "sessionProvider", "sessionModel")}
            )
    if not (applied or fallbacks or routes):
        return None
    return {
        "receipts": dict(applied),
        "formats": dict(formats),
        "fallbacks": dict(fallbacks),
        "routes": routes,
    }


def _observation_window(session: SessionManager) -> dict[str, Any] | None:
    """ObservationPack's window on the active branch (its newest record), if it ever changed."""
    from tau.bundled.obspack.window import WINDOW_TYPE

    for entry in reversed(session.get_branch()):
        if entry.get("type") == "custom" and entry.get("customType") == WINDOW_TYPE:
            data = entry.get("data")
            if isinstance(data, dict):
                return data
    return None


def _occ_decisions(session: SessionManager) -> list[dict[str, Any]]:
    """Online Context Compact's boundary decisions on the active branch, oldest first."""
    from tau.bundled.occ.decision_record import DECISION_TYPE

    return [
        entry["data"]
        for entry in session.get_branch()
        if entry.get("type") == "custom"
        and entry.get("customType") == DECISION_TYPE
        and isinstance(entry.get("data"), dict)
    ]


def run_info(args: argparse.Namespace) -> int:
    summary = summarize(open_session(args.file), args.file)
    if args.json:
        write_bytes(jsjson.dumps(summary) + b"\n")
    else:
        write_text("\n".join(info_lines(summary)) + "\n")
    return 0


def _version_text(version: Any) -> str:
    if isinstance(version, int | float) and not isinstance(version, bool) and version < CURRENT_VERSION:
        return (
            f"{jsjson.dumps_str(version)} (migrated to {CURRENT_VERSION} in memory; the file is not changed)"
        )
    return clip(jsjson.dumps_str(version))


def info_lines(summary: dict[str, Any]) -> list[str]:
    header = summary["header"]
    model = summary["model"]
    model_text = f"{label(model.get('provider'))}/{label(model.get('modelId'))}" if model else "none"
    lines = [
        f"file        {summary['file']}",
        f"session     {label(header.get('id'))}",
        f"version     {_version_text(summary['version'])}",
        f"created     {label(header.get('timestamp'))}",
        f"cwd         {label(header.get('cwd'))}",
    ]
    if "parentSession" in header:
        lines.append(f"parent      {label(header['parentSession'])}")
    for key, value in header.items():
        if key not in ("type", "version", "id", "timestamp", "cwd", "parentSession"):
            lines.append(f"header.{clip(key, 80)}  {clip(jsjson.dumps_str(value))}")
    lines.append(f"name        {label(summary['name']) if summary['name'] is not None else '(none)'}")
    lines.append(f"entries     {summary['entries']}")
    width = max((len(kind) for kind in summary["types"]), default=0)
    for kind, count in summary["types"].items():
        roles = ""
        if kind == "message" and summary["roles"]:
            roles = "  (" + ", ".join(f"{role} {n}" for role, n in summary["roles"].items()) + ")"
        lines.append(f"  {kind.ljust(width)}  {count}{roles}")
    lines += [
        f"branches    {summary['branches']}",
        f"leaf        {label(summary['leafId']) if summary['leafId'] is not None else '(none)'}",
        f"context     {summary['contextMessages']} messages at the leaf; "
        f"thinking {label(summary['thinkingLevel'])}, model {model_text}",
        f"problems    {summary['problems'] or 'none'}"
        + (f" (`{PROG} check` lists them)" if summary["problems"] else ""),
    ]
    reducer = summary.get("reducer")
    if reducer:
        lines += _reducer_lines(reducer)
    window = summary.get("observationWindow")
    if window:
        refetches = window.get("refetches")
        lines.append(
            f"observation pack  window {window.get('staleAfterTurns')} turns "
            f"(started at {window.get('startTurns')}, at most {window.get('maxTurns')}), "
            f"{refetches} refetch{'' if refetches == 1 else 'es'} of packed results"
        )
    decisions = summary["occDecisions"]
    if decisions:
        from tau.bundled.occ.decision_record import format_decision

        compacted = sum(1 for data in decisions if data.get("compact"))
        lines.append(f"online compact  {len(decisions)} boundaries, {compacted} compacted")
        lines += [f"  {n}. {format_decision(data)}" for n, data in enumerate(decisions, 1)]
    return lines


_ROUTE_WHY = {
    "configured": "set in sol.reducerModel",
    "cheapest": "the cheapest {provider} model, chosen automatically",
    "session": "the session's model",
}


def _reducer_lines(reducer: dict[str, Any]) -> list[str]:
    receipts = reducer["receipts"]
    extracted, by_model = receipts.get("extract", 0), receipts.get("model", 0)
    formats = ", ".join(f"{name} {count}" for name, count in reducer["formats"].items())
    left = sum(reducer["fallbacks"].values())
    lines = [
        f"evidence reducer  {counted(extracted + by_model, 'receipt')}: {extracted} extracted"
        + (f" ({formats})" if formats else "")
        + f", {by_model} by a reducer model; {left} left in full"
    ]
    if left:
        lines.append(
            "  left in full: " + ", ".join(f"{reason} {n}" for reason, n in reducer["fallbacks"].items())
        )
    for route in reducer["routes"]:
        why = _ROUTE_WHY.get(route.get("source") or "", "{provider}").format(
            provider=label(route.get("provider"))
        )
        lines.append(
            f"  reducer model {label(route.get('provider'))}/{label(route.get('model'))} ({why}; "
            f"session model {label(route.get('sessionProvider'))}/{label(route.get('sessionModel'))})"
        )
    return lines


# --- check ------------------------------------------------------------------------------------


def findings_for(session: SessionManager, file: str) -> list[Finding]:
    """Everything wrong with the file: the store's reading problems and the entry checks."""
    findings = [Finding(line, "error", _strip_line_prefix(line, text)) for line, text in session.problems]
    layout = read_layout(Path(file))
    header = layout.header if layout else {}
    findings += _header_findings(header, layout.header_line if layout else 0)
    entries = session.get_entries()
    lines = layout.entry_lines if layout and len(layout.entry_lines) == len(entries) else [0] * len(entries)
    findings += check_entries(entries, lines)
    return sorted(findings)


def _strip_line_prefix(line: int, text: str) -> str:
    prefix = f"line {line}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


def _header_findings(header: dict[str, Any], line: int) -> list[Finding]:
    version = written_version(header)
    if not isinstance(version, int | float) or isinstance(version, bool):
        return [Finding(line, "error", f"header version {brief(version)} is not a number")]
    if version < CURRENT_VERSION:
        return [
            Finding(
                line,
                "note",
                f"version {jsjson.dumps_str(version)} file: migrated to {CURRENT_VERSION} in memory "
                "(pi rewrites it on open; tau session commands never do)",
            )
        ]
    if version > CURRENT_VERSION:
        return [
            Finding(
                line,
                "note",
                f"version {jsjson.dumps_str(version)} is newer than tau knows ({CURRENT_VERSION})",
            )
        ]
    return []


def run_check(args: argparse.Namespace) -> int:
    session = open_session(args.file)
    findings = findings_for(session, args.file)
    lines = []
    for finding in findings:
        where = f"{args.file}:{finding.line}" if finding.line else args.file
        lines.append(f"{where}: {finding.severity}: {finding.message}")
    errors = sum(1 for finding in findings if finding.severity == "error")
    notes = len(findings) - errors
    count = len(session.get_entries())
    if errors:
        lines.append(
            f"{args.file}: {counted(errors, 'problem')}, {counted(notes, 'note')} ({counted(count, 'entry')})"
        )
    else:
        lines.append(
            f"{args.file}: ok, {counted(count, 'entry')}, no problems"
            + (f", {counted(notes, 'note')}" if notes else "")
        )
    write_text("\n".join(lines) + "\n")
    return 1 if errors else 0
