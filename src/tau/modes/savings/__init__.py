"""``tau savings FILE...``: what tau's context-economy mechanisms saved, or would have saved.

Each file (a directory is searched for ``*.jsonl``) is opened read-only (decisions.md "Inspection
never writes"), and its active branch is priced with a cache-aware cost model
(:mod:`tau.modes.savings.cost_model`):

- **a tau session** (one that tau's mechanisms ran in, that has a ``sol/`` archive, or whose system
  prompt is tau's): ``tau`` is what was billed, from the usage every call recorded (agent requests,
  reducer calls, summary calls; :mod:`tau.modes.savings.billed`); the baseline is a replay of the
  session with every mechanism undone (:mod:`tau.modes.savings.undo`), an estimate;
- **a pi session**: the baseline is the replay of the file as stock pi sent it, and ``tau`` the
  replay with each mechanism of the profile alone and all together (estimates both).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tau.bundled.sol_common.replay import ReplayHost, mechanism_replays
from tau.llm.messages import entry_message
from tau.modes.savings.billed import billed_parts, is_tau_session, total
from tau.modes.savings.cost_model import PriceBook, Prices, add_figures, figures_of
from tau.modes.savings.misses import MissCounter, TokenCache, miss_figures
from tau.modes.savings.progress import Progress
from tau.modes.savings.replay import (
    MECHANISMS,
    ReplayResult,
    occ_summary_figures,
    recorded_figures,
    replay_branch,
    request_positions,
    summary_figures,
)
from tau.modes.savings.report import render_table
from tau.modes.savings.undo import UndoResult, evidence, undo_branch

__all__ = ["PROFILES", "build_parser", "main", "savings_for_branch", "savings_for_file"]

PROG = "tau savings"
PROFILES = {
    "default": ("actionFusion", "observationPack"),
    "full": MECHANISMS,
}


def _not_measured() -> dict[str, str]:
    """Mechanisms a replay cannot measure, and why (reported, never estimated)."""
    return {replay.name: replay.not_measured for replay in mechanism_replays() if replay.not_measured}


class SavingsError(Exception):
    """A file that cannot be replayed; the message names it and the fix."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Replay pi/tau session files request by request and report what tau's context-economy "
        "mechanisms would have saved (tokens and cache-aware cost), per mechanism and combined. "
        "Never writes the files.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="session file (.jsonl) or a directory of them"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per file")
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default="default",
        help="mechanisms to combine (default: default)",
    )
    parser.add_argument(
        "--price", metavar="PROVIDER/MODEL", help="price every request at this model's prices"
    )
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar on stderr"
    )
    return parser


def _settings() -> dict[str, Any]:
    """The settings the mechanisms would run with (``sol``, ``compaction``), as the live extensions
    read them: the user's ``settings.json`` (a session file says nothing of its project's trust)."""
    from tau.agent.settings import Settings

    try:
        return Settings.load(Path.cwd(), project_trusted=False).effective
    except Exception:  # unreadable settings: the defaults (the host reports the file itself)
        return {}


def main(argv: list[str]) -> int:
    """Run ``tau savings`` with ``argv``; returns the exit code (2: a file could not be replayed)."""
    args = build_parser().parse_args(argv)
    try:
        files = _collect(args.files)
        override = _override(args.price) if args.price else None
    except SavingsError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    status = 0
    reports = []
    settings = _settings()
    for file in files:
        try:
            report = savings_for_file(
                file, profile=args.profile, override=override, progress=args.progress, settings=settings
            )
        except SavingsError as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
            status = 2
            continue
        reports.append(report)
        if args.json:
            from tau.common import jsjson

            sys.stdout.write(jsjson.dumps_str(report) + "\n")
        else:
            print(render_table(report) + "\n")
        sys.stdout.flush()
    if len(reports) > 1 and not args.json:
        from tau.modes.savings.report import render_total

        print(render_total(reports))
    return status


def _collect(names: list[str]) -> list[Path]:
    files: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = [file for file in sorted(path.rglob("*.jsonl")) if _is_session_file(file)]
            if not found:
                raise SavingsError(f"no .jsonl session files under {name!r}")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise SavingsError(
                f"no such file or directory: {name!r}; pass session files (.jsonl) or directories"
            )
    return files


def _is_session_file(path: Path) -> bool:
    """Whether the first line is a session header (a directory also holds ledgers and other JSONL)."""
    from tau.common.regular_files import open_regular

    try:
        with open(open_regular(path), "rb") as stream:  # a pipe or a link in a session folder: skipped
            first = stream.readline(64 * 1024)
    except OSError:
        return False
    return first.lstrip().startswith(b'{"type":"session"')


def _override(spec: str) -> Prices:
    from tau.llm.registry import ModelRegistry

    provider, _, model_id = spec.partition("/")
    model = ModelRegistry().find(provider, model_id) if model_id else None
    if model is None:
        raise SavingsError(
            f"unknown model {spec!r} for --price; pass PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-6"
        )
    return Prices(model.cost.input, model.cost.output, f"--price {spec}")


def _open_branch(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The active branch and the session id."""
    from tau.session import SessionError, SessionManager

    try:
        manager = SessionManager.open(path, read_only=True)
    except SessionError as exc:
        raise SavingsError(str(exc)) from exc
    except OSError as exc:
        raise SavingsError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        return manager.get_branch(), manager.get_session_id()
    finally:
        manager.close()


def _archive_root(path: Path, session_id: str | None) -> Path | None:
    """The session's ``sol/<sessionId>/`` archive beside its file, when there is one."""
    if not session_id:
        return None
    root = path.parent / "sol" / session_id
    return root if root.is_dir() else None


def _price_book(branch: list[dict[str, Any]], override: Prices | None) -> PriceBook:
    from tau.llm.registry import ModelRegistry

    registry = ModelRegistry()
    book = PriceBook(lookup=registry.find, override=override)
    for entry in branch:
        message = entry_message(entry)
        if isinstance(message, dict) and message.get("role") == "assistant":
            book.learn(message)
    return book


def savings_for_file(
    path: Path,
    *,
    profile: str = "default",
    override: Prices | None = None,
    progress: bool | None = None,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The savings report of one session file (the ``--json`` object)."""
    branch, session_id = _open_branch(path)
    return savings_for_branch(
        branch,
        str(path),
        profile=profile,
        override=override,
        progress=progress,
        archive_root=_archive_root(path, session_id),
        settings=settings,
    )


def replay_host(
    book: PriceBook, archive_root: Path | None = None, settings: dict[str, Any] | None = None
) -> ReplayHost:
    """What the mechanisms' replays get from the host: its projection, the catalogue, the settings."""
    from tau.session.projection import build_session_projection

    return ReplayHost(
        projection=build_session_projection,
        model=book.lookup if book.lookup is not None else ReplayHost.model,
        settings=settings or {},
        archive_root=archive_root,
    )


def savings_for_branch(
    branch: list[dict[str, Any]],
    name: str,
    *,
    profile: str = "default",
    override: Prices | None = None,
    progress: bool | None = None,
    archive_root: Path | None = None,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The savings report of one branch (root→leaf entries); ``archive_root`` is its ``sol/<id>/``;
    ``settings`` the settings the mechanisms run with (the defaults when None)."""
    book = _price_book(branch, override)
    host = replay_host(book, archive_root, settings)
    found = evidence(branch)
    if is_tau_session(branch, found, archive_root is not None):
        return _tau_report(branch, name, book, found, host)
    enabled = PROFILES[profile]
    not_measured = _not_measured()
    measurable = [m for m in enabled if m not in not_measured]
    runs = 1 + len(measurable) + (1 if len(measurable) > 1 else 0)
    bar = Progress(len(request_positions(branch)) * runs, name, enabled=progress)
    tokens = TokenCache()
    try:
        baseline = replay_branch(branch, book, host=host, on_request=bar.step, misses=MissCounter(tokens))
        mechanisms: dict[str, Any] = {}
        for mechanism in enabled:
            if mechanism in not_measured:
                mechanisms[mechanism] = {"measured": False, "reason": not_measured[mechanism]}
                continue
            alone = replay_branch(
                branch, book, (mechanism,), host=host, on_request=bar.step, misses=MissCounter(tokens)
            )
            mechanisms[mechanism] = {
                "measured": True,
                **_with_misses(alone),
                **_details(mechanism, alone, book),
            }
        combined = (
            replay_branch(
                branch, book, measurable, host=host, on_request=bar.step, misses=MissCounter(tokens)
            )
            if len(measurable) > 1
            else None
        )
    finally:
        bar.close()
    final = combined if combined is not None else (alone if measurable else baseline)
    tau = _with_misses(final)
    summaries = summary_figures(branch, book)
    # tau sends the same summaries cache-friendly: the last request of its own replay, read again
    tau_summaries = summary_figures(branch, book, cached_prompts=final.prompts)
    add_figures(tau_summaries, occ_summary_figures(final.summary_calls, book))
    return {
        "file": name,
        "kind": "pi",
        "profile": profile,
        "requests": baseline.figures["requests"],
        "baseline": _with_misses(baseline),
        "tau": tau,
        "mechanisms": mechanisms,
        "combined": {m: _details(m, final, book) for m in measurable},
        "summaries": {"baseline": summaries, "tau": tau_summaries},
        "prices": _prices_used(branch, book),
        "recorded": recorded_figures(branch),
    }


def _with_misses(result: Any) -> dict[str, Any]:
    """A replay's figures with its evidence misses."""
    figures = result.figures
    return {**figures, **miss_figures(result.misses, figures["requests"], figures["cost"])}


def _details(mechanism: str, result: ReplayResult, book: PriceBook) -> dict[str, Any]:
    """What the mechanism did in the replay, as its replay reports it (and the summary calls it
    added, priced)."""
    details = dict(result.details.get(mechanism, {}))
    if mechanism == "onlineContextCompact":
        details["summaryCalls"] = occ_summary_figures(result.summary_calls, book)
    return details


def _prices_used(branch: list[dict[str, Any]], book: PriceBook) -> dict[str, Any]:
    used: dict[str, Any] = {}
    for position in request_positions(branch):
        message = branch[position]["message"]
        provider, model_id = str(message.get("provider", "")), str(message.get("model", ""))
        prices = book.prices(provider, model_id)
        used[f"{provider}/{model_id}"] = {
            "input": prices.input,
            "output": prices.output,
            "source": prices.source,
        }
    return used


def _packed_live(archive_root: Path | None) -> bool:
    """Whether ObservationPack ran in the session (it keeps a ledger when a result is large)."""
    from tau.bundled.obspack.wire import LEDGER_FILE, PACK_DIR

    return archive_root is not None and (archive_root / PACK_DIR / LEDGER_FILE).is_file()


def _undone_figures(
    undone: UndoResult, book: PriceBook, pack: bool, host: ReplayHost, misses: MissCounter | None = None
) -> dict[str, Any]:
    requests = replay_branch(
        undone.branch, book, ("observationPack",) if pack else (), host=host, misses=misses
    )
    parts = {"requests": requests.figures, "summaries": summary_figures(undone.branch, book, as_pi=True)}
    placeholders = requests.details.get("observationPack", {}).get("placeholders", 0)
    return {**total(parts), "parts": parts, "placeholders": placeholders}


def _receipt_logs(branch: list[dict[str, Any]], host: ReplayHost) -> dict[str, dict[str, Any]]:
    """The tool results whose receipt replaced their log, with the log back (by entry id): what the
    model saw when the result was made, before the receipt hid it."""
    restored = undo_branch(branch, ("evidencePreservingReducer",), host).branch
    return {
        str(after.get("id")): after["message"]
        for before, after in zip(branch, restored, strict=True)
        if after is not before and isinstance(after.get("message"), dict)
    }


def _tau_report(
    branch: list[dict[str, Any]],
    name: str,
    book: PriceBook,
    found: dict[str, int],
    host: ReplayHost,
) -> dict[str, Any]:
    """What a tau session was billed, against the replay of it with every mechanism undone."""
    parts = billed_parts(branch, book)
    packed = _packed_live(host.archive_root)
    used = set(found) | ({"observationPack"} if packed else set())
    everything = set(MECHANISMS)
    undone = undo_branch(branch, everything, host)
    tokens = TokenCache()
    baseline_misses = MissCounter(tokens)
    baseline = _undone_figures(undone, book, pack=False, host=host, misses=baseline_misses)
    mechanisms: dict[str, Any] = {}
    for mechanism in MECHANISMS:
        if mechanism not in used:
            mechanisms[mechanism] = {"used": False}
            continue
        kept = undo_branch(branch, everything - {mechanism}, host)
        figures = _undone_figures(kept, book, pack=mechanism == "observationPack", host=host)
        if mechanism == "evidencePreservingReducer":
            figures = {
                **figures,
                **add_figures(figures_of(figures), parts["reducer"]),
                "parts": {**figures["parts"], "reducer": parts["reducer"]},
            }
        mechanisms[mechanism] = {
            "used": True,
            "measured": False,
            **figures,
            **_undo_details(mechanism, found, undone),
        }
    replayed_branch = undo_branch(branch, (), host)
    tau_misses = MissCounter(tokens, originals=_receipt_logs(branch, host))
    replayed = _undone_figures(replayed_branch, book, pack=packed, host=host, misses=tau_misses)
    replayed = {**replayed, **add_figures(figures_of(replayed), parts["reducer"])}
    measured: dict[str, Any] = {**total(parts)}  # the figures, and the misses below
    # per 100 agent requests; the adjusted cost is everything billed (or estimated) plus the misses
    baseline.update(
        miss_figures(baseline_misses, baseline["parts"]["requests"]["requests"], baseline["cost"])
    )
    measured.update(miss_figures(tau_misses, parts["requests"]["requests"], measured["cost"]))
    return {
        "file": name,
        "kind": "tau",
        "profile": "as run",
        "requests": parts["requests"]["requests"],
        "baseline": {**baseline, "measured": False},
        "tau": {**measured, "measured": True, "parts": parts},
        "mechanisms": mechanisms,
        "replayed": {**replayed, "measured": False},
        "undone": {
            "unfused": undone.unfused,
            "receipts": undone.receipts,
            "unrestored": undone.unrestored,
            "recalls": undone.recalls,
            "occCompactions": undone.occ_compactions,
            "notes": undone.notes,
        },
        "summaries": {"baseline": baseline["parts"]["summaries"], "tau": parts["summaries"]},
        "prices": _prices_used(branch, book),
        "recorded": recorded_figures(branch),
    }


def _undo_details(mechanism: str, found: dict[str, int], undone: UndoResult) -> dict[str, Any]:
    if mechanism == "actionFusion":
        return {"fusedCalls": found.get(mechanism, 0)}
    if mechanism == "observationPack":
        return {"recalls": undone.recalls}
    if mechanism == "evidencePreservingReducer":
        return {"receipts": undone.receipts, "unrestored": undone.unrestored}
    return {"compactions": undone.occ_compactions}
