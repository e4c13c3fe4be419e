"""Issue 10 (`tau savings`): the ``--json`` contract of the issue, on the two real pi sessions.

"``--json`` prints one object per input file with at least ``file``, ``requests``, ``baseline`` and
``tau`` (each ``{inputTokens, cacheRead, cacheWrite, outputTokens, cost}``) and ``mechanisms`` (the
same figures per mechanism)"; Online Context Compact prices "a summary size of 1,000 tokens".
"""

from __future__ import annotations

import json

import pytest

from tau.modes.savings import savings_for_file
from tau_process import run_tau

FIGURES = {"inputTokens", "cacheRead", "cacheWrite", "outputTokens", "cost"}
REAL = ("before-compaction.v3.jsonl", "large-session.v3.jsonl")


def test_one_object_per_file_in_order_with_the_figures_of_every_side_and_mechanism(pi_fixtures):
    files = [str(pi_fixtures / "real" / name) for name in REAL]
    done = run_tau(["--json", "--no-progress", *files], module="tau.modes.savings", timeout=300)
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["file"] for r in reports] == files
    for report in reports:
        assert isinstance(report["requests"], int) and report["requests"] > 0
        for side in ("baseline", "tau"):
            assert set(report[side]) >= FIGURES, (report["file"], side)
            assert report[side]["cacheRead"] + report[side]["cacheWrite"] == report[side]["inputTokens"]
        assert report["mechanisms"], report["file"]
        for name, figures in report["mechanisms"].items():
            assert set(figures) >= FIGURES, (report["file"], name)
        assert report["tau"]["cost"] < report["baseline"]["cost"]


@pytest.mark.parametrize("name", ["large-session.v3.jsonl"])
def test_the_full_profile_prices_each_summary_at_1000_tokens(name, pi_fixtures):
    report = savings_for_file(pi_fixtures / "real" / name, profile="full")
    occ = report["mechanisms"]["onlineContextCompact"]
    if not occ["measured"]:
        pytest.skip(f"Online Context Compact not measured: {occ['reason']}")
    assert set(occ) >= FIGURES
    assert occ["compactions"] > 0 and sum(occ["decisions"].values()) >= occ["compactions"]
    assert occ["summaryCalls"]["outputTokens"] == 1000 * occ["compactions"]
    combined = report["combined"]["onlineContextCompact"]
    assert combined["summaryCalls"]["outputTokens"] == 1000 * combined["compactions"]
