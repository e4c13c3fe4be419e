"""ObservationPack wired to the extension API: the ``context`` handler and the ``obs_recall`` tool."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from dataclasses import field
from typing import Any

from tau.bundled.obspack.ledger import ledger_bytes, recall_record
from tau.bundled.obspack.observation import (
    Observation,
    arguments_observation,
    is_observation_id,
    observation_of,
    surely_small,
    text_observation,
)
from tau.bundled.obspack.placeholder import placeholder_for
from tau.bundled.obspack.planner import Planner
from tau.bundled.obspack.projection import ROOT_LEAF, Applied, PackRules, SendCounts, sizes_needed
from tau.bundled.obspack.store import ObservationStore, sha256_fd
from tau.bundled.obspack.window import WINDOW_TYPE, Window
from tau.bundled.obspack.wire import RECALL_TOOL
from tau.bundled.sol_common import (
    SolSettings,
    banner_lines,
    format_savings_count,
    runtime_root,
    show_savings,
)
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.extension import ToolDefinition, ToolError, ToolResult, entry_message, tool_calls

__all__ = ["RECALL_DESCRIPTION", "RECALL_PARAMETERS", "ObservationPack"]

MECHANISM = "Observation Pack"
RECALL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "offset": {"type": "integer", "minimum": 0, "maximum": 9007199254740991},
        "query": {"type": "string", "description": "literal text to find instead of a page"},
    },
    "required": ["id"],
}
# Lean on purpose (issue 25): the placeholder itself says how to call it.
RECALL_DESCRIPTION = "Get back a packed tool result by its placeholder's id: a page from a byte offset, or the lines matching query."


@dataclass
class RootState:
    """What ObservationPack keeps in memory for one runtime root (one session)."""

    store: ObservationStore
    window: Window
    counts: SendCounts = field(default_factory=SendCounts)
    applied: Applied = field(default_factory=Applied)
    stored: dict[str, str] = field(default_factory=dict)  # observation id → its SHA-256
    window_restored: bool = False  # read from the branch at the first request
    restoring: dict[str, asyncio.Future[None]] = field(default_factory=dict)


class ObservationPack:
    """One instance per extension: per-root state, the ``context`` handler and ``obs_recall``."""

    def __init__(self, tau: Any, settings: SolSettings) -> None:
        self.tau = tau
        self.head_bytes = settings.observation_pack_head_bytes
        self.tail_bytes = settings.observation_pack_tail_bytes
        self.rules = pack_rules(settings)
        self.max_turns = settings.stale_max_turns
        self.default_ratio = settings.cache_write_read_ratio
        self.roots: dict[str, RootState] = {}
        self._observed: dict[str, tuple[str, str, Observation | None]] = {}
        self._placeholders: dict[tuple[str, int, int], str] = {}
        self._seen: set[str] = set()
        self._planner = Planner()

    def install(self) -> None:
        self.tau.register_tool(self.recall_tool())
        self.tau.on("context", self.on_context)
        self.tau.on("session_shutdown", self.on_session_shutdown)

    # -- state ---------------------------------------------------------------------------------

    def state_for(self, ctx: Any) -> RootState:
        manager = ctx.session_manager
        root = runtime_root(manager.get_session_dir(), manager.get_session_id())
        state = self.roots.get(root.key)
        if state is None:
            window = Window(self.rules.after_turns, self.max_turns)
            state = self.roots[root.key] = RootState(ObservationStore(root), window)
        return state

    def rules_for(self, window: Window) -> PackRules:
        """The rules with the session's current window."""
        if window.turns == self.rules.after_turns:
            return self.rules
        return dataclasses.replace(self.rules, after_turns=window.turns)

    def observe(self, message: dict[str, Any]) -> Observation | None:
        """:func:`observation_of`, remembered per tool call while the text stays the same."""
        key = str(message.get("toolCallId", ""))
        self._seen.add(key)
        content = message.get("content")
        text = content[0].get("text") if isinstance(content, list) and len(content) == 1 else None
        if isinstance(text, str) and surely_small(text):
            return None  # one block, too short to be large whatever its type (observation_of's check)
        cached = self._observed.get(key)
        if (
            isinstance(text, str)
            and cached is not None
            and cached[0] == text
            and cached[1] == message.get("toolName")
        ):
            return cached[2]
        observation = observation_of(message)
        if isinstance(text, str) and observation is not None:
            self._observed[key] = (text, str(message.get("toolName")), observation)
        return observation

    def placeholder(self, observation: Observation, head_bytes: int, tail_bytes: int) -> str:
        """:func:`placeholder_for`, computed once per observation (its bytes never change)."""
        key = (observation.id, head_bytes, tail_bytes)
        text = self._placeholders.get(key)
        if text is None:
            text = self._placeholders[key] = placeholder_for(observation, head_bytes, tail_bytes)
        return text

    # -- projection ------------------------------------------------------------------------------

    async def on_context(self, event: Any, ctx: Any) -> None:
        messages = event.messages
        try:
            state = self.state_for(ctx)
        except Exception as exc:  # an unsafe session id: every message passes through
            sys.stderr.write(f"[observationpack] fail-open for tool result: {exc}\n")
            return None
        manager = ctx.session_manager
        branch: dict[str, set[str]] = {}

        def branch_ids() -> set[str]:
            if "ids" not in branch:
                branch["ids"] = {entry.get("id") for entry in manager.get_branch()}
            return branch["ids"]

        def store(observation: Observation) -> None:
            if observation.id not in state.stored:
                state.store.ensure_stored(observation.id, observation.data, observation.content_hash)
                state.stored[observation.id] = observation.content_hash

        seen_before, self._seen = self._seen, set()
        scan = self._planner.scan(messages, sized=sizes_needed(self.rules))
        if self.rules.stale and not state.window_restored:
            state.window_restored = True
            state.window.restore(manager.get_branch())
        if self.rules.stale and state.window.note_calls(scan.new_calls):
            self._record_window(state.window)
        plan = self._planner.plan(
            messages,
            store=store,
            send_counts=state.counts,
            branch_ids=branch_ids,
            rules=self.rules_for(state.window),
            applied=state.applied,
            write_read_ratio=write_read_ratio(getattr(ctx, "model", None), self.default_ratio),
            observe=self.observe,
            placeholder=self.placeholder,
            scanned=True,
        )
        if self._planner.scan.fresh:
            # A new context observed every result: remember only those, so the cache never
            # outgrows the conversation (while the context only grows, its results stay in it).
            self._observed = {key: value for key, value in self._observed.items() if key in self._seen}
        else:
            seen_before.update(self._seen)
            self._seen = seen_before
        if not plan.records:
            plan.apply_kept()
            return None
        try:
            state.store.append_ledger(ledger_bytes(plan.records))
        except Exception as exc:  # without its ledger line nothing new is committed
            sys.stderr.write(f"[observationpack] fail-open for tool result: ledger append failed: {exc}\n")
            plan.apply_kept()
            return None
        plan.apply(manager.get_leaf_id() or ROOT_LEAF, state.counts, state.applied)
        state.window.note_swaps(plan)
        if plan.first_savings:
            try:
                show_savings(ctx, MECHANISM, packed_notice(plan.first_savings))
            except Exception:  # the projection is committed; a notice is only presentation
                pass
        return None

    def _record_window(self, window: Window) -> None:
        """Persist a changed window (a small ``custom`` entry; resuming and ``tau session info`` read it)."""
        try:
            self.tau.append_entry(WINDOW_TYPE, window.entry())
        except Exception as exc:  # the window still applies in this process
            sys.stderr.write(f"[observationpack] window not recorded: {exc}\n")

    async def on_session_shutdown(self, event: Any, ctx: Any) -> None:
        try:
            manager = ctx.session_manager
            root = runtime_root(manager.get_session_dir(), manager.get_session_id())
        except Exception:
            return
        self.roots.pop(root.key, None)

    # -- recall ----------------------------------------------------------------------------------

    def recall_tool(self) -> ToolDefinition:
        return ToolDefinition(
            name=RECALL_TOOL,
            label="Recall Observation",
            description=RECALL_DESCRIPTION,
            parameters=RECALL_PARAMETERS,
            execute=self.execute_recall,
            render_call=render_recall_call,
            render_result=render_recall_result,
        )

    async def execute_recall(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        obs_id = params.get("id")
        if not is_observation_id(obs_id):
            raise ToolError(f"Unknown observation id: {obs_id}")
        # (the pages and the search load with the first recall: a run that never recalls needs none)
        from tau.bundled.obspack.recall import read_page, render_page, search

        offset = params.get("offset")
        offset = 0 if offset is None else int(offset)
        state = self.state_for(ctx)
        expected = await self.ensure_available(state, obs_id, ctx)
        with state.store.open_object(obs_id, expected) as (fd, size):
            if await asyncio.to_thread(sha256_fd, fd) != expected:
                raise ToolError(
                    f"Observation {obs_id} failed its integrity check: the stored object's SHA-256 does not "
                    f"match the tool result it was stored from (it was changed after it was stored); "
                    f"it is not served"
                )
            if params.get("query") is not None:
                query = params["query"]
                found = await search(fd, size, obs_id, query, offset, signal)
                details = found.details(obs_id, query)
                record = {
                    "event": "search",
                    "id": obs_id,
                    "offset": offset,
                    "query": query,
                    "matches": len(found.matches),
                    "nextOffset": found.next_offset,
                    "eof": found.eof,
                }
                text = jsjson.dumps_str(details)
            else:
                page = read_page(fd, size, offset)
                text = render_page(obs_id, page)
                details = page.details(obs_id)
                record = recall_record(details)
        state.store.append_ledger(ledger_bytes([record]))
        return ToolResult.text(text, details=details)

    async def ensure_available(self, state: RootState, obs_id: str, ctx: Any) -> str:
        """Make sure the object exists, restoring it from the current branch when it does not; the
        SHA-256 it must have, which also names it (objects are addressed by their content).

        The hash is the one remembered when it was stored, else its ledger records', else the tool
        result's (or call's) on the branch. Concurrent recalls of one id share one restoration; after
        a failed one, a waiting recall tries again. An unsafe existing path is refused before the
        branch is read when the hash is known without it.
        """
        known = state.stored.get(obs_id)
        if known is None:
            known = await asyncio.to_thread(_ledger_hash, state.store, obs_id)
        while not self._exists(state.store, obs_id, known):
            running = state.restoring.get(obs_id)
            if running is not None and not running.done():
                try:
                    await asyncio.shield(running)
                except Exception:
                    pass
                known = state.stored.get(obs_id, known)
                continue
            task = asyncio.ensure_future(self._restore(state, obs_id, ctx))
            state.restoring[obs_id] = task
            try:
                await task
            finally:
                if state.restoring.get(obs_id) is task:
                    del state.restoring[obs_id]
            return state.stored[obs_id]
        if known is None:  # an object an older archive named by its id: the branch says what it must be
            observation = _on_branch(ctx, obs_id)
            if observation is None:
                raise ToolError(f"Unknown observation id: {obs_id}")
            known = observation.content_hash
        state.stored[obs_id] = known
        return known

    @staticmethod
    def _exists(store: ObservationStore, obs_id: str, content_hash: str | None) -> bool:
        try:
            with store.open_object(obs_id, content_hash):
                return True
        except FileNotFoundError:
            return False

    async def _restore(self, state: RootState, obs_id: str, ctx: Any) -> None:
        observation = _on_branch(ctx, obs_id)
        if observation is None:
            raise ToolError(f"Unknown observation id: {obs_id}")
        await asyncio.to_thread(
            state.store.ensure_stored, observation.id, observation.data, observation.content_hash
        )
        state.stored[obs_id] = observation.content_hash


def packed_notice(records: list[dict[str, Any]]) -> str:
    """What one request packed, and how to get it back (the interactive notice)."""
    removed = format_savings_count(sum(r["removedTokens"] for r in records), "context tokens avoided")
    reasons = ", ".join(dict.fromkeys(str(r.get("reason")) for r in records))
    if len(records) == 1:
        record = records[0]
        what = f"{record['tool']} result {record['id']} packed ({reasons})"
        return f'{removed} · {what}; obs_recall {{"id":"{record["id"]}"}} returns it'
    return f"{removed} · {len(records)} results packed ({reasons}); obs_recall with a placeholder's id returns it"


def pack_rules(settings: SolSettings) -> PackRules:
    """The packing rules the ``sol`` settings ask for (the live extension's and its replay's)."""
    return PackRules(
        head_bytes=settings.observation_pack_head_bytes,
        tail_bytes=settings.observation_pack_tail_bytes,
        stale=settings.stale_packing,
        batch=settings.swap_batching,
        after_turns=settings.stale_after_turns,
        min_tokens=settings.stale_min_tokens,
        refetch_chance=settings.stale_refetch_chance,
    )


def write_read_ratio(model: Any, default: float) -> float:
    """The model's cache write price over its cache read price (a write costs the plain input price
    where there is no write premium, as with OpenAI); ``default`` when the model has no cache prices."""
    cost = getattr(model, "cost", None)
    read = getattr(cost, "cacheRead", 0) or 0
    if read <= 0:
        return default
    write = getattr(cost, "cacheWrite", 0) or getattr(cost, "input", 0) or 0
    return write / read if write > 0 else default


def _observations(message: dict[str, Any]) -> list[Observation]:
    """Everything of a stored message ObservationPack may have packed: the result, or call arguments."""
    if message.get("role") == "toolResult":
        found = observation_of(message) or text_observation(message)
        return [found] if found is not None else []
    if message.get("role") == "assistant":
        return [o for call in tool_calls(message) if (o := arguments_observation(call)) is not None]
    return []


def _on_branch(ctx: Any, obs_id: str) -> Observation | None:
    for entry in ctx.session_manager.get_branch():
        message = entry_message(entry)
        if message is not None:
            for observation in _observations(message):
                if observation.id == obs_id:
                    return observation
    return None


def _ledger_hash(store: ObservationStore, obs_id: str) -> str | None:
    try:
        ledger = store.read_ledger()
    except OSError:
        return None
    for line in ledger.splitlines():
        if obs_id.encode() not in line:
            continue
        try:
            record = jsjson.loads(line)
        except ValueError:
            continue
        if record.get("id") == obs_id and isinstance(record.get("contentHash"), str):
            return record["contentHash"]
    return None


def render_recall_call(args: dict[str, Any], *_: Any) -> str:
    """Interactive row title: what is recalled, marked as an Observation Pack saving."""
    if args.get("query") is not None:
        return f"⚡ obs_recall {args.get('id')} search {args.get('query')!r}"
    return f"⚡ obs_recall {args.get('id')} from byte {args.get('offset') or 0}"


def render_recall_result(result: Any, *_: Any) -> list[str]:
    """Interactive row body: the savings banner, then what came back."""
    data = result if isinstance(result, dict) else {"details": getattr(result, "details", None)}
    details = data.get("details") if isinstance(data.get("details"), dict) else {}
    if data.get("isError") or not details:
        text = "\n".join(b.get("text", "") for b in data.get("content") or [] if isinstance(b, dict))
        return text.split("\n")
    if "matches" in details:
        line = f"Found {len(details['matches'])} matches (eof={'true' if details.get('eof') else 'false'})"
    else:
        line = f"Recalled {details.get('bytes', 0)} bytes across {details.get('lines', 0)} lines"
    return [*banner_lines(MECHANISM, "full observation replay avoided"), line]
