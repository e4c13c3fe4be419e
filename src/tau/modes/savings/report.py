"""What ``tau savings`` prints: a readable table per file, or one JSON object per file."""

from __future__ import annotations

from typing import Any

from tau.modes.wording import counted

__all__ = ["LABELS", "render_table", "render_total", "why_more"]

LABELS = {
    "actionFusion": "Action Fusion",
    "observationPack": "ObservationPack",
    "evidencePreservingReducer": "Evidence Reducer",
    "onlineContextCompact": "Online Context Compact",
}
_COLUMNS = ("requests", "inputTokens", "cacheRead", "cacheWrite", "outputTokens")


def _row(label: str, figures: dict[str, Any], baseline: dict[str, Any] | None, note: str = "") -> str:
    numbers = " ".join(f"{figures[key]:>12,}" for key in _COLUMNS)
    change = ""
    if baseline is not None and baseline["cost"] > 0:
        change = f"{figures['cost'] / baseline['cost'] - 1:+.1%}"
    elif baseline is not None and baseline["inputTokens"] > 0:
        change = f"{figures['inputTokens'] / baseline['inputTokens'] - 1:+.1%} tok"
    line = f"{label:<26}{numbers} {_money(figures['cost']):>10} {change:>9}"
    return f"{line}  {note}" if note else line


def _breaks(figures: dict[str, Any]) -> str:
    """The cache breaks of a set of requests, as a note."""
    count = figures.get("cacheBreaks", 0)
    if not count:
        return "no cache break"
    return f"{count} cache break{'s' if count != 1 else ''}, {figures.get('rewrittenTokens', 0):,} tokens written again"


def _money(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:,.4f}"


def _mechanism_note(name: str, data: dict[str, Any]) -> str:
    if name == "actionFusion":
        note = f"{counted(data['merged'], 'edit→command round trip')} merged"
        if data.get("alreadyFused"):
            note += f" (+{data['alreadyFused']} already fused in this session)"
        return note
    if name == "observationPack":
        return f"{counted(data['placeholders'], 'result')} packed, {data['recallable']}/{data['placeholders']} recallable"
    if name == "onlineContextCompact":
        decisions = (
            ", ".join(f"{reason} {count}" for reason, count in data["decisions"].items()) or "no boundary"
        )
        calls = data["summaryCalls"]
        return (
            f"{counted(data['compactions'], 'compaction')} at {data['boundaries']} ({decisions}); "
            f"+{counted(calls['requests'], 'summary call')}, {_money(calls['cost'])}"
        )
    return ""


def _price_lines(report: dict[str, Any]) -> list[str]:
    lines = []
    for model, price in report["prices"].items():
        if price["source"] == "none":
            lines.append(f"  {model}: no price known (cost counted as 0; use --price PROVIDER/MODEL)")
        else:
            lines.append(
                f"  {model}: ${price['input']:g} in / ${price['output']:g} out per M tokens ({price['source']})"
            )
    return lines


def _header() -> str:
    header = " ".join(
        f"{title:>12}" for title in ("requests", "input tok", "cache read", "cache write", "output")
    )
    return f"{'':<26}{header} {'cost':>10} {'vs pi':>9}"


def render_table(report: dict[str, Any]) -> str:
    """The report of one file as text lines."""
    if report.get("kind") == "tau":
        return _render_tau(report)
    lines = [f"{report['file']}  (profile {report['profile']})", *_price_lines(report), _header()]
    baseline = report["baseline"]
    lines.append(_row("stock pi (baseline)", baseline, None, _breaks(baseline)))
    for name, data in report["mechanisms"].items():
        label = f"  {LABELS[name]}"
        if not data.get("measured", True):
            lines.append(f"{label:<26}not measured: {data['reason']}")
            continue
        lines.append(_row(label, data, baseline, _mechanism_note(name, data)))
    lines.append(_row(f"tau ({report['profile']})", report["tau"], baseline, _breaks(report["tau"])))
    summaries = report["summaries"]
    if summaries["baseline"]["requests"] or summaries["tau"]["requests"]:
        lines.append(_row("summary calls, pi (apart)", summaries["baseline"], None))
        lines.append(_row("summary calls, tau (apart)", summaries["tau"], summaries["baseline"]))
    tau = report["tau"]
    lines.append(
        f"cache-aware input cost: {_money(tau['inputCost'])} instead of {_money(baseline['inputCost'])} "
        f"({_ratio(tau, baseline, 'inputCost')} of stock pi); with output "
        f"{_money(tau['cost'])} instead of {_money(baseline['cost'])} ({_ratio(tau, baseline, 'cost')})"
    )
    lines.extend(_miss_lines(report))
    pi_all = baseline["cost"] + summaries["baseline"]["cost"]
    tau_all = tau["cost"] + summaries["tau"]["cost"]
    if summaries["baseline"]["requests"] or summaries["tau"]["requests"]:
        share = f" ({tau_all / pi_all:.2f}x)" if pi_all > 0 else ""
        lines.append(f"with summary calls: {_money(tau_all)} instead of {_money(pi_all)}{share}")
    lines += why_more(tau, baseline)
    lines.append("cache write 1.25x, read 0.1x of the input price, 5-minute TTL; tokens = characters / 4")
    recorded = report.get("recorded")
    if recorded and recorded["cost"] > 0:
        lines.append(
            f"recorded in the file (provider usage, system prompt and tools included): "
            f"{recorded['inputTokens']:,} input tokens, {_money(recorded['cost'])}"
        )
    return "\n".join(lines)


def _misses(figures: dict[str, Any]) -> str:
    return f"{figures['misses']} ({figures['misses_per_100']:.1f} per 100 requests)"


def _miss_lines(report: dict[str, Any]) -> list[str]:
    """Evidence misses (requests whose tool calls use what only hidden content held) and the cost
    with each priced as one more request."""
    baseline, tau = report["baseline"], report["tau"]
    if "misses" not in tau or "misses" not in baseline:
        return []
    lines = [
        f"evidence misses: {_misses(tau)} instead of {_misses(baseline)}; miss-adjusted cost with output "
        f"{_money(tau['miss_adjusted_cost'])} instead of {_money(baseline['miss_adjusted_cost'])} "
        f"({_ratio(tau, baseline, 'miss_adjusted_cost')})"
    ]
    alone = [
        f"{LABELS[name]} {data['misses_per_100']:.1f}"
        for name, data in report.get("mechanisms", {}).items()
        if "misses_per_100" in data
    ]
    if len(alone) > 1:
        lines.append(f"  misses per 100 requests, each mechanism alone: {', '.join(alone)}")
    return lines


def _ratio(figures: dict[str, Any], baseline: dict[str, Any], key: str = "cost") -> str:
    if baseline[key] > 0:
        return f"{figures[key] / baseline[key]:.2f}x"
    if baseline["inputTokens"] > 0:
        return f"{figures['inputTokens'] / baseline['inputTokens']:.2f}x of the input tokens"
    return "n/a"


_TAU_NOTES = {
    "actionFusion": lambda d: f"{counted(d['fusedCalls'], 'fused call')} kept",
    "observationPack": lambda d: (
        f"{counted(d['placeholders'], 'result')} packed in the replay, {counted(d['recalls'], 'recall')} kept"
    ),
    "evidencePreservingReducer": lambda d: (
        f"{counted(d['receipts'], 'receipt')} kept, "
        f"{counted(d['parts']['reducer']['requests'], 'reducer call')} (measured)"
    ),
    "onlineContextCompact": lambda d: f"{counted(d['compactions'], 'compaction')} kept",
}


def _render_tau(report: dict[str, Any]) -> str:
    """A tau session: what was billed, against stock pi replayed with every mechanism undone."""
    lines = [
        f"{report['file']}  (tau session: measured cost against stock pi replayed)",
        *_price_lines(report),
    ]
    lines.append(_header())
    baseline, tau = report["baseline"], report["tau"]
    lines.append(
        _row("stock pi (estimate)", baseline, None, f"replay, every mechanism undone; {_breaks(baseline)}")
    )
    lines.append(
        _row("tau (measured)", tau, baseline, f"what the calls recorded; {_breaks(tau['parts']['requests'])}")
    )
    for part, label in (
        ("requests", "agent requests"),
        ("reducer", "reducer calls"),
        ("summaries", "summary calls"),
    ):
        if tau["parts"][part]["requests"]:
            lines.append(_row(f"  {label}", tau["parts"][part], None))
    used = {name: data for name, data in report["mechanisms"].items() if data.get("used")}
    if used:
        lines.append("each mechanism alone (estimates: the replay with only it kept):")
    for name, data in used.items():
        lines.append(_row(f"  {LABELS[name]}", data, baseline, _TAU_NOTES[name](data)))
    replayed = report["replayed"]
    check = f"{replayed['cost'] / tau['cost'] - 1:+.1%} of measured" if tau["cost"] > 0 else ""
    lines.append(_row("tau (replayed, estimate)", replayed, baseline, check))
    undone = report["undone"]
    lines.append(
        f"undone for the baseline: {counted(undone['unfused'], 'fused command')} split, "
        f"{counted(undone['receipts'], 'receipt')} restored ({undone['unrestored']} not), "
        f"{counted(undone['recalls'], 'recall')} and {counted(undone['occCompactions'], 'OCC compaction')} removed"
    )
    lines.append(
        f"cost: {_money(tau['cost'])} measured instead of {_money(baseline['cost'])} estimated for stock pi "
        f"({_ratio(tau, baseline)}); summary and reducer calls included on both sides"
    )
    lines += why_more(tau, baseline)
    lines.extend(_miss_lines({"baseline": baseline, "tau": tau}))
    lines.append("cache write 1.25x, read 0.1x of the input price; replays count tokens as characters / 4")
    return "\n".join(lines)


def _context_per_request(figures: dict[str, Any]) -> float:
    requests = figures.get("requests") or 0
    return figures.get("inputTokens", 0) / requests if requests else 0.0  # cached tokens included


def why_more(tau: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """When tau cost more than stock pi: why, in figures (a short session's usual case), else nothing."""
    if not (baseline.get("cost", 0) > 0 and tau.get("cost", 0) > baseline["cost"]):
        return []
    reasons = []
    extra = (tau.get("requests") or 0) - (baseline.get("requests") or 0)
    if extra > 0:
        reasons.append(
            f"{counted(extra, 'more request')} (the todo checklist's calls, todo-loop's continuations)"
        )
    per_request = _context_per_request(tau) - _context_per_request(baseline)
    if per_request >= 1:
        reasons.append(
            f"{per_request:,.0f} more context tokens per request (the bundled extensions' tools and instructions)"
        )
    if not reasons:
        reasons.append("the cache was written more often than stock pi writes it")
    return [
        f"why tau costs more here: {'; '.join(reasons)}. A session this short has little old output for "
        "tau to pack, fuse, reduce or compact, so the extensions' fixed costs show and their savings do "
        "not yet; they grow with the session (docs/savings.md). tau --no-extensions costs what stock pi does."
    ]


def render_total(reports: list[dict[str, Any]]) -> str:
    """The sum over several files: requests and cost of stock pi and of tau (summary calls included)."""
    pi_cost = tau_cost = 0.0
    pi_requests = tau_requests = 0
    for report in reports:
        baseline, tau = report["baseline"], report["tau"]
        pi_requests += baseline.get("requests", 0)
        tau_requests += tau.get("requests", 0)
        if report.get("kind") == "tau":  # measured: summary and reducer calls are in both sides already
            pi_cost += baseline["cost"]
            tau_cost += tau["cost"]
        else:
            summaries = report["summaries"]
            pi_cost += baseline["cost"] + summaries["baseline"]["cost"]
            tau_cost += tau["cost"] + summaries["tau"]["cost"]
    ratio = f" ({tau_cost / pi_cost:.2f}x)" if pi_cost > 0 else ""
    return (
        f"total over {counted(len(reports), 'session')}: tau {_money(tau_cost)} "
        f"({counted(tau_requests, 'request')}) instead of {_money(pi_cost)} for stock pi "
        f"({counted(pi_requests, 'request')}){ratio}"
    )
