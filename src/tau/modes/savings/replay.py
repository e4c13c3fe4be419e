"""Request-by-request replay of a session file, as stock pi sent it and as tau would have.

A request is an assistant message on the active branch (error and aborted ones included); its
context is the branch up to that message, projected as pi 1.6 projects it
(:func:`tau.session.projection.build_session_projection`, extended request after request by the
host's projection-cache rule) and converted for the model
(:func:`tau.session.messages.convert_to_llm`), system messages included; it is counted as the faux
provider bills a request (:class:`~tau.modes.savings.cost_model.PromptCache`). Its output is the
message's recorded output tokens, or faux's estimate of its content when it has none. Compaction
and branch-summary calls are not requests: they are counted apart (:func:`summary_figures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import Any

from tau.agent.compaction.estimate import estimate_tokens
from tau.bundled.sol_common.replay import ReplayHost, ReplayRun, Request, mechanism_replays
from tau.common.dataclass import dataclass
from tau.common.jsstr import ms_from_iso
from tau.llm.messages import entry_message
from tau.modes.savings.cost_model import (
    CacheBreaks,
    Figures,
    PriceBook,
    PromptCache,
    count_request,
    empty_figures,
)
from tau.modes.savings.misses import MissCounter
from tau.session import projection
from tau.session.messages import convert_to_llm

__all__ = [
    "MECHANISMS",
    "ReplayResult",
    "context_tokens",
    "count_recorded",
    "occ_summary_figures",
    "output_tokens",
    "recorded_figures",
    "replay_branch",
    "request_positions",
    "summary_figures",
]

Entry = dict[str, Any]
MECHANISMS = tuple(replay.name for replay in mechanism_replays())


def request_positions(branch: list[Entry]) -> list[int]:
    """Positions of the requests (assistant messages) on ``branch``."""
    return [index for index, entry in enumerate(branch) if entry_message(entry, "assistant") is not None]


def request_time(entry: Entry) -> int | None:
    """When the request was made: the message's ``timestamp`` (ms), else the entry's ISO time."""
    message = entry.get("message") or {}
    stamp = message.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return int(stamp)
    try:
        return ms_from_iso(str(entry.get("timestamp")))
    except (TypeError, ValueError):
        return None


def context_tokens(branch: list[Entry]) -> int:
    """pi's estimate of the context a request made after ``branch`` carries (the baseline's unit)."""
    return sum(estimate_tokens(message) for message in projection.build_session_context(branch)["messages"])


def model_of(message: dict[str, Any]) -> tuple[str, str]:
    return str(message.get("provider", "")), str(message.get("model", ""))


@dataclass
class ReplayResult:
    """One replay of one branch: the request figures and what the mechanisms did."""

    figures: Figures
    details: dict[str, dict[str, Any]] = field(default_factory=dict)  # mechanism -> what it did
    summary_calls: list[Any] = field(default_factory=list)  # summary calls a mechanism added
    runs: dict[str, ReplayRun] = field(default_factory=dict)  # mechanism -> its run (its decisions)
    prompts: dict[str, int] = field(default_factory=dict)  # request entry id -> its prompt tokens
    misses: MissCounter | None = None


def replay_branch(
    branch: list[Entry],
    prices: PriceBook,
    mechanisms: Iterable[str] = (),
    *,
    host: ReplayHost | None = None,
    on_request: Callable[[], None] | None = None,
    misses: MissCounter | None = None,
) -> ReplayResult:
    """Replay every request of ``branch`` with the given mechanisms (none: stock pi), each through its
    own replay (:mod:`tau.bundled.sol_common.replay`): first what they apply to the whole branch,
    then, request by request, what they decide; ``misses`` counts the evidence misses of the
    requests as replayed (:mod:`tau.modes.savings.misses`); ``host``: what the replays get from the
    host (by default the session projection and ``prices``' catalogue, the default settings)."""
    if host is None:
        host = ReplayHost(projection.build_session_projection, prices.lookup or ReplayHost.model)
    enabled = [replay for replay in mechanism_replays() if replay.name in set(mechanisms)]
    result = ReplayResult(empty_figures(), misses=misses)
    for replay in enabled:
        branch, result.details[replay.name] = replay.apply(branch)
    runs = [(replay.name, run) for replay in enabled if (run := replay.start(branch, host)) is not None]
    cache = PromptCache()
    projector = Projector()
    breaks = CacheBreaks()
    work = list(branch)
    index = 0
    while index < len(work):
        message = entry_message(work[index], "assistant")
        if message is not None:
            projected = messages = projector.at(work, index)
            for _, run in runs:
                messages = run.request(messages, work, index)
            prompt = _request(result.figures, work, index, messages, cache, prices, breaks, misses)
            result.prompts[str(work[index].get("id"))] = prompt
            sent = Request(work, index, projected, messages, prompt, output_tokens(message))
            for _, run in runs:
                run.sent(sent)
            if on_request is not None:
                on_request()
        for _, run in runs:
            added = run.after(work, index)
            if added is not None:
                work.insert(index + 1, added)
                index += 1
        index += 1
    for name, run in runs:
        result.runs[name] = run
        result.details[name] = {**result.details.get(name, {}), **run.details()}
        result.summary_calls += getattr(run, "summaries", [])
    return result


def _request(
    figures: Figures,
    work: list[Entry],
    index: int,
    messages: list[dict[str, Any]],
    cache: PromptCache,
    prices: PriceBook,
    breaks: CacheBreaks,
    misses: MissCounter | None = None,
) -> int:
    """Count the request made for ``work[index]`` with ``messages`` as sent; returns its prompt tokens."""
    message = work[index]["message"]
    model = model_of(message)
    at = request_time(work[index])
    read, write = cache.request(convert_to_llm(messages), at, model)
    breaks.request(figures, read, read + write, at, model)
    count_request(figures, prices.prices(*model), read=read, write=write, output=output_tokens(message))
    if misses is not None:
        misses.request(work, index, messages, read + write, prices.prices(*model))
    return read + write


class Projector:
    """The projection of a branch request after request, extended while entries are only appended, by
    the host's own projection-cache rule (:func:`tau.session.projection.extend_projection`): a message
    keeps its object from one request to the next (what ObservationPack's scan relies on), and a
    compaction or a context edit rebuilds it."""

    def __init__(self) -> None:
        self._projection: dict[str, Any] | None = None
        self._end = 0

    def at(self, work: list[Entry], index: int) -> list[dict[str, Any]]:
        """The messages of a request made after ``work[:index]``."""
        current = self._projection
        if (
            current is None
            or index < self._end
            or not projection.extend_projection(current, work[self._end : index])
        ):
            current = self._projection = projection.build_session_projection(work[:index])
        self._end = index
        return list(current["messages"])


def output_tokens(message: dict[str, Any]) -> int:
    """A request's output: its recorded output tokens, else faux's estimate of its content."""
    usage = message.get("usage")
    recorded = usage.get("output") if isinstance(usage, dict) else None
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        return recorded
    from tau.llm.providers.faux import estimate_usage

    content = message.get("content")
    return estimate_usage([], content if isinstance(content, list) else [])["output"]


def summary_figures(
    branch: list[Entry],
    prices: PriceBook,
    *,
    cached_prompts: dict[str, int] | None = None,
    as_pi: bool = False,
) -> Figures:
    """The summary calls the file records (compactions, branch summaries), counted apart.

    A call with recorded ``usage`` (pi 1.6 and tau store it on the entry) costs what it records.
    Without it, a compaction's input is the context it replaced (pi's estimate of the projection
    just before it) sent uncached, as pi sends summary requests, and its output the stored summary;
    a branch summary's input (the abandoned branch) is not on this branch, so only its output counts.

    ``cached_prompts`` (a replay's ``prompts``): price each compaction as tau sends it,
    cache-friendly (:func:`cached_compaction`). ``as_pi``: a recorded call that read the prompt cache
    (tau's cache-friendly summary) is priced as pi would have sent it, uncached.
    """
    figures = empty_figures()
    model: tuple[str, str] = ("", "")
    last_request: int | None = None
    for position, entry in enumerate(branch):
        message = entry_message(entry, "assistant")
        if message is not None:
            model, last_request = model_of(message), position
            continue
        kind = entry.get("type")
        if kind not in ("compaction", "branch_summary"):
            continue
        rates = prices.prices(*model)
        usage = entry.get("usage")
        output = _summary_output(entry)
        if cached_prompts is not None and kind == "compaction" and last_request is not None:
            prompt = cached_prompts.get(str(branch[last_request].get("id")))
            if prompt is not None:
                cached_compaction(figures, rates, branch, position, last_request, prompt, output)
                continue
        recorded = isinstance(usage, dict) and any(
            _count(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite", "output")
        )
        if (
            recorded
            and isinstance(usage, dict)
            and not (as_pi and kind == "compaction" and _count(usage.get("cacheRead")))
        ):
            count_recorded(figures, usage, rates)
            continue
        prompt = context_tokens(branch[:position]) if kind == "compaction" else 0
        count_request(figures, rates, uncached=prompt, output=output)
    return figures


def _summary_output(entry: Entry) -> int:
    """A summary call's output: its recorded output tokens, else the stored summary's estimate."""
    usage = entry.get("usage")
    recorded = _count(usage.get("output")) if isinstance(usage, dict) else 0
    if recorded:
        return recorded
    summary = entry.get("summary")
    return -(-len(summary.encode("utf-16-le")) // 8) if isinstance(summary, str) else 0


def _instruction_tokens() -> int:
    """The tokens of a cache-friendly summary instruction (a 300-character quote in it)."""
    from tau.agent.compaction.cached import QUOTE_CHARS, history_instruction

    return -(-len(history_instruction("x" * QUOTE_CHARS, previous_summary=False)) // 4)


def cached_compaction(
    figures: Figures,
    rates: Any,
    branch: list[Entry],
    position: int,
    last_request: int,
    prompt: int,
    output: int,
) -> Figures:
    """Add the summary calls of the compaction ``branch[position]`` as tau sends them, cache-friendly:
    each reads the last request's ``prompt`` from the cache and writes the messages added since
    (up to the first kept entry) and its instruction; a split turn with history before it is two
    calls (history and turn prefix), any other compaction one; ``output`` is shared between them."""
    from tau.agent.compaction.summary import SPLIT_TURN_SEPARATOR

    entry = branch[position]
    kept = next(
        (i for i, e in enumerate(branch[:position]) if e.get("id") == entry.get("firstKeptEntryId")), position
    )
    since = sum(
        estimate_tokens(m) for e in branch[last_request : min(kept, position)] if (m := entry_message(e))
    )
    summary = str(entry.get("summary") or "")
    calls = 1
    if SPLIT_TURN_SEPARATOR in summary:
        history = summary.split(SPLIT_TURN_SEPARATOR, 1)[0]
        previous = next(
            (str(e.get("summary")) for e in reversed(branch[:position]) if e.get("type") == "compaction"),
            None,
        )
        calls = 1 if history in ("No prior history.", previous) else 2
    write = since + _instruction_tokens()
    for call in range(calls):
        share = output // calls + (output % calls if call == 0 else 0)
        count_request(figures, rates, read=prompt, write=write, output=share)
    return figures


def count_recorded(figures: Figures, usage: dict[str, Any], rates: Any) -> Figures:
    """Add one call as its recorded ``usage`` bills it, at ``rates``."""
    return count_request(
        figures,
        rates,
        uncached=_count(usage.get("input")),
        read=_count(usage.get("cacheRead")),
        write=_count(usage.get("cacheWrite")),
        output=_count(usage.get("output")),
    )


def recorded_figures(branch: list[Entry]) -> Figures:
    """What the file's own ``usage`` records for its requests (the provider's counts and costs)."""
    figures = empty_figures()
    for position in request_positions(branch):
        usage = branch[position]["message"].get("usage")
        usage = usage if isinstance(usage, dict) else {}
        cost = found_cost if isinstance(found_cost := usage.get("cost"), dict) else {}
        tokens = {key: _count(usage.get(key)) for key in ("input", "cacheRead", "cacheWrite", "output")}
        figures["requests"] += 1
        figures["inputTokens"] += tokens["input"] + tokens["cacheRead"] + tokens["cacheWrite"]
        figures["uncachedInput"] += tokens["input"]
        figures["cacheRead"] += tokens["cacheRead"]
        figures["cacheWrite"] += tokens["cacheWrite"]
        figures["outputTokens"] += tokens["output"]
        figures["cost"] += _amount(cost.get("total"))
        figures["inputCost"] += sum(_amount(cost.get(key)) for key in ("input", "cacheRead", "cacheWrite"))
    return figures


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _amount(value: Any) -> float:
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0.0
    )


def occ_summary_figures(calls: Iterable[Any], prices: PriceBook) -> Figures:
    """The summary calls Online Context Compact added, as tau sends them (cache-friendly): each reads
    the boundary's last request from the cache and writes its instruction; the 1,000 tokens of
    summary are shared between the calls (two for a split turn with history before it)."""
    from tau.bundled.occ.replay import SUMMARY_TOKENS

    figures = empty_figures()
    write = _instruction_tokens()
    for call in calls:
        for n in range(call.calls):
            share = SUMMARY_TOKENS // call.calls + (SUMMARY_TOKENS % call.calls if n == 0 else 0)
            count_request(figures, prices.prices(*call.model), read=call.prompt, write=write, output=share)
    return figures
