"""What ``tau savings`` prints: a readable table per file, or one JSON object per file."""

from __future__ import annotations

from typing import Any

__all__ = ["LABELS", "render_table"]

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


def _money(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:,.4f}"


def _mechanism_note(name: str, data: dict[str, Any]) -> str:
    if name == "actionFusion":
        note = f"{data['merged']} edit→command round trips merged"
        if data.get("alreadyFused"):
            note += f" (+{data['alreadyFused']} already fused in this session)"
        return note
    if name == "observationPack":
        return (
            f"{data['placeholders']} results packed, {data['recallable']}/{data['placeholders']} recallable"
        )
    return ""


def render_table(report: dict[str, Any]) -> str:
    """The report of one file as text lines."""
    lines = [f"{report['file']}  (profile {report['profile']})"]
    for model, price in report["prices"].items():
        if price["source"] == "none":
            lines.append(f"  {model}: no price known (cost counted as 0; use --price PROVIDER/MODEL)")
        else:
            lines.append(
                f"  {model}: ${price['input']:g} in / ${price['output']:g} out per M tokens ({price['source']})"
            )
    header = " ".join(
        f"{title:>12}" for title in ("requests", "input tok", "cache read", "cache write", "output")
    )
    lines.append(f"{'':<26}{header} {'cost':>10} {'vs pi':>9}")
    baseline = report["baseline"]
    lines.append(_row("stock pi (baseline)", baseline, None))
    for name, data in report["mechanisms"].items():
        label = f"  {LABELS[name]}"
        if not data.get("measured", True):
            lines.append(f"{label:<26}not measured: {data['reason']}")
            continue
        lines.append(_row(label, data, baseline, _mechanism_note(name, data)))
    lines.append(_row(f"tau ({report['profile']})", report["tau"], baseline))
    summaries = report["summaries"]
    if summaries["baseline"]["requests"] or summaries["tau"]["requests"]:
        lines.append(_row("summary calls (apart)", summaries["baseline"], None))
    lines.append(
        f"cache-aware cost: {_money(report['tau']['cost'])} instead of {_money(baseline['cost'])} "
        f"({_ratio(report['tau'], baseline)} of stock pi); cache write 1.25x, read 0.1x, 5-minute TTL"
    )
    return "\n".join(lines)


def _ratio(figures: dict[str, Any], baseline: dict[str, Any]) -> str:
    if baseline["cost"] > 0:
        return f"{figures['cost'] / baseline['cost']:.2f}x"
    if baseline["inputTokens"] > 0:
        return f"{figures['inputTokens'] / baseline['inputTokens']:.2f}x of the input tokens"
    return "n/a"
