"""The economy benchmark: whole tasks run live by ``tau -p`` with each profile, priced as billed.

    .venv/bin/python bench/economy/run.py            # every task x profile, a table
    .venv/bin/python bench/economy/run.py --json     # one JSON object per task and profile
    .venv/bin/python bench/economy/run.py --tasks fix-the-tests --profiles none,default --keep /tmp/econ

Each run is a real ``tau -p`` with the faux model, whose answers come from the task's policy
(``tasks/``); the cost is the faux provider's bill for every call of the run (``harness.py``).
``ratio_vs_none`` compares with the ``none`` profile of the same task, measured in the same run.
Every run's session file is also priced by ``tau savings --json``; ``savings_delta`` is how far its
measured cost is from the bill (the two must agree within 2%).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import harness  # noqa: E402
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
    task_name: str, profile: str, workdir: Path, *, check_savings: bool = True, sol: dict | None = None
) -> dict[str, Any]:
    """One task with one profile, its figures and (by default) the ``tau savings`` cross-check."""
    run = harness.run_task(tasks.load(task_name), profile, workdir, sol=sol)
    result = run.result()
    if run.exit_code != 0:
        result["error"] = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "non-zero exit"
    if check_savings and run.session is not None:
        units, _ = harness.savings_units(run.session)
        result["savings_cost_units"] = round(units, 2)
        result["savings_delta"] = round(units / result["cost_units"] - 1, 4) if result["cost_units"] else 0.0
    result["session"] = str(run.session) if run.session else None
    return result


def _table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'task':<18} {'profile':<8} {'requests':>8} {'side':>5} {'input':>9} {'cache read':>11} "
        f"{'cache write':>11} {'output':>7} {'cost units':>11} {'vs none':>8} {'breaks':>6} {'savings Δ':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        ratio = f"{r['ratio_vs_none']:.2f}x" if r.get("ratio_vs_none") is not None else "n/a"
        delta = f"{r['savings_delta']:+.2%}" if "savings_delta" in r else ""
        lines.append(
            f"{r['task']:<18} {r['profile']:<8} {r['requests']:>8} {r['side_requests']:>5} {r['input_tokens']:>9,} "
            f"{r['cache_read']:>11,} {r['cache_write']:>11,} {r['output_tokens']:>7,} {r['cost_units']:>11,.0f} "
            f"{ratio:>8} {r['cache_breaks']:>6} {delta:>9}"
            + (f"  ERROR {r['error']}" if "error" in r else "")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per task and profile")
    parser.add_argument("--tasks", default=",".join(tasks.NAMES), help="comma-separated task names")
    parser.add_argument("--profiles", default=",".join(harness.PROFILES), help="comma-separated profiles")
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
    profiles = _names(args.profiles, tuple(harness.PROFILES), "profile")
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tau-economy-"))
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    results: list[dict[str, Any]] = []
    try:
        for name in names:
            baseline: float | None = None
            for profile in profiles:
                result = measure(
                    name,
                    profile,
                    root / f"{name}-{profile}",
                    check_savings=not args.no_savings_check,
                    sol=args.sol,
                )
                if profile == "none":
                    baseline = result["cost_units"]
                result["ratio_vs_none"] = round(result["cost_units"] / baseline, 3) if baseline else None
                if result["reducer_cost_units"]:
                    cheap = result["cost_units"] - (1 - args.reducer_price) * result["reducer_cost_units"]
                    result["cheap_reducer_cost_units"] = round(cheap, 2)
                    result["cheap_reducer_ratio_vs_none"] = round(cheap / baseline, 3) if baseline else None
                results.append(result)
                if args.json:
                    print(json.dumps(result), flush=True)
                else:
                    print(
                        f"  {name} / {profile}: {result['cost_units']:,.0f} units, {result['requests']} requests",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if not args.json:
        print(_table(results))
        cheap = [r for r in results if "cheap_reducer_cost_units" in r]
        if cheap:
            print(
                f"\nwith the reducer's calls at {args.reducer_price:.2g}x the price (a cheaper reducer model):"
            )
            for r in cheap:
                ratio = r.get("cheap_reducer_ratio_vs_none")
                print(
                    f"  {r['task']:<18} {r['profile']:<8} {r['cheap_reducer_cost_units']:>11,.0f} units"
                    + (f"  {ratio:.2f}x of none" if ratio is not None else "")
                )
        print(
            f"\n{len(results)} runs in {time.monotonic() - started:.0f} s; cost units: uncached input 1, "
            "cache read 0.1, cache write 1.25, output 5 per token"
        )
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
