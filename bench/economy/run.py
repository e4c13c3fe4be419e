"""The economy benchmark: whole tasks run live by ``tau -p`` with each profile and persona, priced as billed.

    .venv/bin/python bench/economy/run.py            # every task x persona x profile, a table
    .venv/bin/python bench/economy/run.py --json     # one JSON object per run
    .venv/bin/python bench/economy/run.py --tasks fix-the-tests --personas rerun --profiles none,default

Each run is a real ``tau -p`` with the faux model, whose answers come from the task's policy
(``tasks/``) played as one persona (``policy.PERSONAS``); the cost is the faux provider's bill for
every call of the run (``harness.py``), and the task's check on the workspace says whether the run
finished its task (a run that did not is a failure, whatever it cost). ``ratio_vs_none`` compares
with the ``none`` profile of the same task and persona, measured in the same invocation. Every
run's session file is also priced by ``tau savings --json``; ``savings_delta`` is how far its
measured cost is from the bill (the two must agree within 2%).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import policy  # noqa: E402
import tasks  # noqa: E402

KEYS = (
    "requests",
    "side_requests",
    "input_tokens",
    "cache_read",
    "cache_write",
    "output_tokens",
    "cost_units",
    "ratio_vs_none",
)


def _names(value: str, known: tuple[str, ...], what: str) -> list[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def measure(
    task_name: str,
    profile: str,
    workdir: Path,
    *,
    persona: str = "recall",
    check_savings: bool = True,
    sol: dict | None = None,
) -> dict[str, Any]:
    """One task with one profile and persona: its figures, whether it finished, and (by default)
    the ``tau savings`` cross-check."""
    run = harness.run_task(tasks.load(task_name), profile, workdir, sol=sol, persona=persona)
    result = run.result()
    if run.exit_code != 0:
        result["error"] = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "non-zero exit"
    if check_savings and run.session is not None:
        units, _ = harness.savings_units(run.session)
        result["savings_cost_units"] = round(units, 2)
        result["savings_delta"] = round(units / result["cost_units"] - 1, 4) if result["cost_units"] else 0.0
    result["session"] = str(run.session) if run.session else None
    return result


def with_ratios(results: list[dict[str, Any]], reducer_price: float) -> list[dict[str, Any]]:
    """``ratio_vs_none`` (and the cheap-reducer figures) of every run, against the ``none`` run of
    the same task and persona; runs without one get ``None``."""
    baselines = {(r["task"], r["persona"]): r["cost_units"] for r in results if r["profile"] == "none"}
    todo = {(r["task"], r["persona"]): r["cost_units"] for r in results if r["profile"] == "todo"}
    for r in results:
        baseline = baselines.get((r["task"], r["persona"]))
        r["ratio_vs_none"] = round(r["cost_units"] / baseline, 3) if baseline else None
        planned = todo.get((r["task"], r["persona"]))
        r["ratio_vs_todo"] = round(r["cost_units"] / planned, 3) if planned else None
        if r["reducer_cost_units"]:
            cheap = r["cost_units"] - (1 - reducer_price) * r["reducer_cost_units"]
            r["cheap_reducer_cost_units"] = round(cheap, 2)
            r["cheap_reducer_ratio_vs_none"] = round(cheap / baseline, 3) if baseline else None
    return results


def worst(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per task and profile, the persona that did worst: a failed run first, else the highest cost
    ratio to ``none`` (the same persona's); with the personas that failed."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["task"], r["profile"]), []).append(r)
    rows = []
    for (task, profile), runs in groups.items():
        failed = [r["persona"] for r in runs if not r["finished"] or "error" in r]
        pick = max(
            runs,
            key=lambda r: (not r["finished"] or "error" in r, r["ratio_vs_none"] or 0.0, r["cost_units"]),
        )
        rows.append(
            {
                "task": task,
                "profile": profile,
                "persona": pick["persona"],
                "ratio_vs_none": pick["ratio_vs_none"],
                "ratio_vs_todo": pick.get("ratio_vs_todo"),
                "cost_units": pick["cost_units"],
                "failed": failed,
            }
        )
    return rows


def added_per_request(results: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """What each profile adds to every request over ``none``: the difference of the first
    request's prompt (system prompt and tool declarations; the first prompt is the same), as the
    lowest and highest over the tasks and personas measured."""
    none = {(r["task"], r["persona"]): r["first_prompt_tokens"] for r in results if r["profile"] == "none"}
    added: dict[str, list[int]] = {}
    for r in results:
        base = none.get((r["task"], r["persona"]))
        if r["profile"] != "none" and base is not None and r["first_prompt_tokens"]:
            added.setdefault(r["profile"], []).append(r["first_prompt_tokens"] - base)
    return {profile: (min(values), max(values)) for profile, values in added.items()}


def _status(r: dict[str, Any]) -> str:
    if "error" in r:
        return "ERROR"
    return "yes" if r["finished"] else "FAILED"


def _table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'task':<18} {'persona':<11} {'profile':<8} {'requests':>8} {'side':>5} {'input':>9} "
        f"{'cache read':>11} {'cache write':>11} {'output':>7} {'cost units':>11} {'vs none':>8} "
        f"{'breaks':>6} {'savings Δ':>9} {'done':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        ratio = f"{r['ratio_vs_none']:.2f}x" if r.get("ratio_vs_none") is not None else "n/a"
        delta = f"{r['savings_delta']:+.2%}" if "savings_delta" in r else ""
        problem = r.get("error") or r.get("unfinished")
        lines.append(
            f"{r['task']:<18} {r['persona']:<11} {r['profile']:<8} {r['requests']:>8} {r['side_requests']:>5} "
            f"{r['input_tokens']:>9,} {r['cache_read']:>11,} {r['cache_write']:>11,} {r['output_tokens']:>7,} "
            f"{r['cost_units']:>11,.0f} {ratio:>8} {r['cache_breaks']:>6} {delta:>9} {_status(r):>6}"
            + (f"  {problem}" if problem else "")
        )
    return "\n".join(lines)


def _worst_table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'task':<18} {'profile':<8} {'worst':<11} {'vs none':>8} {'vs todo':>8} {'cost units':>11}  failed"
    )
    lines = [head, "-" * len(head)]
    for row in rows:
        ratio = f"{row['ratio_vs_none']:.2f}x" if row["ratio_vs_none"] is not None else "n/a"
        planned = f"{row['ratio_vs_todo']:.2f}x" if row.get("ratio_vs_todo") is not None else "n/a"
        lines.append(
            f"{row['task']:<18} {row['profile']:<8} {row['persona']:<11} {ratio:>8} {planned:>8} "
            f"{row['cost_units']:>11,.0f}  " + (", ".join(row["failed"]) or "-")
        )
    return "\n".join(lines)


def _workdirs(root: Path, keep: bool, personas: list[str]) -> dict[str, Path]:
    """Where each persona's runs live. Without ``--keep`` every persona gets a temporary directory of
    its own with the same name length, so that the working directory the system prompt names costs
    every persona the same (and ``recall`` runs where it always did)."""
    if keep:
        return {persona: root if persona == "recall" else root / persona for persona in personas}
    return {
        persona: root if persona == "recall" else Path(tempfile.mkdtemp(prefix="tau-economy-"))
        for persona in personas
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    parser.add_argument("--tasks", default=",".join(tasks.NAMES), help="comma-separated task names")
    parser.add_argument(
        "--personas", default=",".join(policy.PERSONAS), help="comma-separated personas (default: all)"
    )
    parser.add_argument("--profiles", default=",".join(harness.PROFILES), help="comma-separated profiles")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="runs at a time (default 1)")
    parser.add_argument("--keep", metavar="DIR", help="keep every run's repository, agent dir and bill here")
    parser.add_argument("--no-savings-check", action="store_true", help="skip the tau savings cross-check")
    parser.add_argument(
        "--reducer-price",
        type=float,
        default=1 / 3,
        metavar="F",
        help="also price each run with the reducer's calls at F x the session model's price (default 1/3: "
        "Claude Haiku 4.5 reducing for Claude Sonnet 4.6)",
    )
    parser.add_argument(
        "--sol",
        metavar="JSON",
        type=json.loads,
        help="settings merged over the default and full profiles' sol block",
    )
    args = parser.parse_args(argv)
    names = _names(args.tasks, tasks.NAMES, "task")
    personas = _names(args.personas, policy.PERSONAS, "persona")
    profiles = _names(args.profiles, tuple(harness.PROFILES), "profile")
    if args.jobs < 1:
        raise SystemExit("--jobs must be at least 1")
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tau-economy-"))
    root.mkdir(parents=True, exist_ok=True)
    dirs = _workdirs(root, bool(args.keep), personas)
    started = time.monotonic()
    runs = [(name, persona, profile) for name in names for persona in personas for profile in profiles]
    done: dict[tuple[str, str, str], dict[str, Any]] = {}
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {
                pool.submit(
                    measure,
                    name,
                    profile,
                    dirs[persona] / f"{name}-{profile}",
                    persona=persona,
                    check_savings=not args.no_savings_check,
                    sol=args.sol,
                ): (name, persona, profile)
                for name, persona, profile in runs
            }
            for future in as_completed(futures):
                key = futures[future]
                result = done[key] = future.result()
                print(
                    f"  {key[0]} / {key[1]} / {key[2]}: {result['cost_units']:,.0f} units, "
                    f"{result['requests']} requests, {_status(result).lower()}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if not args.keep:
            for path in {root, *dirs.values()}:
                shutil.rmtree(path, ignore_errors=True)
    results = with_ratios([done[key] for key in runs], args.reducer_price)
    if args.json:
        for result in results:
            print(json.dumps(result), flush=True)
    else:
        _print_report(results, args.reducer_price, personas)
        print(
            f"\n{len(results)} runs in {time.monotonic() - started:.0f} s; cost units: uncached input 1, "
            "cache read 0.1, cache write 1.25, output 5 per token"
        )
    return 1 if any("error" in r or not r["finished"] for r in results) else 0


def _print_report(results: list[dict[str, Any]], reducer_price: float, personas: list[str]) -> None:
    print(_table(results))
    if len(personas) > 1:
        print(
            "\nthe worst persona per task and profile (a failed run first, else the highest ratio to none; "
            "vs todo: to the same persona's todo run):"
        )
        print(_worst_table(worst(results)))
    added = added_per_request(results)
    if added:
        parts = [
            f"{profile} +{low:,}" + (f"..{high:,}" if high != low else "")
            for profile, (low, high) in added.items()
        ]
        print(
            "\nadded to every request over none (the first request's prompt: system prompt and tool "
            f"declarations), tokens: {', '.join(parts)}"
        )
    cheap = [r for r in results if "cheap_reducer_cost_units" in r]
    if cheap:
        print(f"\nwith the reducer's calls at {reducer_price:.2g}x the price (a cheaper reducer model):")
        for r in cheap:
            ratio = r.get("cheap_reducer_ratio_vs_none")
            print(
                f"  {r['task']:<18} {r['persona']:<11} {r['profile']:<8} {r['cheap_reducer_cost_units']:>11,.0f} "
                "units" + (f"  {ratio:.2f}x of none" if ratio is not None else "")
            )
    finished = [r for r in results if r["finished"] and "error" not in r]
    print(f"\n{len(finished)} of {len(results)} runs finished their task")


if __name__ == "__main__":
    sys.exit(main())
