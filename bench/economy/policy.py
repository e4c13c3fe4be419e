"""What a scripted model of the economy benchmark sees, read from the request it receives.

A task's policy is a faux ``factory``: tau calls it with the request (``systemPrompt``, ``messages``,
``tools``) and it answers with the next step. It keeps no state of its own: everything it knows it
reads from the request, as a real model does, so a mechanism that changes the context (a
placeholder, a receipt, a compaction, a fused result) changes what it does next. When what it needs
is no longer visible it does what a model would: recall the packed result, read the file again, or
run the command again, and that costs requests like any other.

:class:`View` parses one request; :func:`side_answer` answers the side requests a run makes of the
same model (compaction and turn-prefix summaries, the Evidence-Preserving Reducer's receipts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PERSONAS",
    "PERSONA_ENV",
    "Call",
    "Shown",
    "View",
    "side_answer",
]

# How a scripted model behaves when what it needs is no longer in view (bench/README.md, "Personas"):
# - ``recall``: recalls a packed result with ``obs_recall`` (once), else reads or runs again;
# - ``rerun``: never calls ``obs_recall``: it reads the file again or re-runs the command, as
#   mini-SWE-agent-like models do;
# - ``early-facts``: explores first and acts late on what it saw early (line numbers, values, names),
#   writing none of it into its own text; it finds those facts in the context or fetches them again
#   (a recall when a placeholder offers one).
PERSONAS = ("recall", "rerun", "early-facts")
PERSONA_ENV = "TAU_ECONOMY_PERSONA"

PLACEHOLDER_ID = re.compile(r"(obs_[0-9a-f]{24})")
PLACEHOLDER_STARTS = ("[large tool result replaced", "[tool result packed")
RECEIPT_MARK = "sol_pi_evidence_receipt_v1"
RECEIPT_QUOTE = re.compile(r'^- kind=\w+ line=\d+ quote_sha256=[0-9a-f]+ quote=(".*")$', re.MULTILINE)
TODO_LIST = re.compile(r'\{"revision":\d+,"tasks":\[')
TODO_REVISION = re.compile(r"todo revision (\d+)")
SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:"
REDUCER_PROMPT = "You are a lossless test/build output reducer."
SUMMARIZER_PROMPT = "You are a context summarization assistant."
SUMMARY_ASKS = (
    "Create a structured context checkpoint summary",
    "Update the existing structured summary",
    "Create a concise checkpoint of the user's request",
)


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        block.get("text", "")
        for block in content or []
        if isinstance(block, dict) and block.get("type") == "text"
    )


def readable(text: str) -> str:
    """A recall's text as the model reads it: a search's matches (JSON) as their context lines,
    a page as it is."""
    if not text.startswith("{"):
        return text
    try:
        found = json.loads(text)
    except ValueError:
        return text
    matches = found.get("matches") if isinstance(found, dict) else None
    if not isinstance(matches, list):
        return text
    return "\n".join(str(m.get("context", "")) for m in matches if isinstance(m, dict))


@dataclass
class Shown:
    """How a tool result reaches the model: in full, as a placeholder, or as a reducer receipt."""

    kind: str  # "full" | "placeholder" | "receipt"
    text: str
    obs_id: str | None = None

    def excerpts(self) -> str:
        """The bytes of the original the model can read here (all of it, or the excerpt/quotes)."""
        if self.kind == "receipt":
            return "\n".join(json.loads(quote) for quote in RECEIPT_QUOTE.findall(self.text))
        return self.text


@dataclass
class Call:
    """One tool call of the context with its result (``None`` while it has none)."""

    name: str
    args: dict[str, Any]
    result: dict[str, Any] | None
    position: int  # index of the assistant message in the context

    @property
    def command(self) -> str | None:
        """The shell command this call ran: a bash command, or a fused ``then_run``."""
        if self.name == "bash":
            return self.args.get("command")
        then_run = self.args.get("then_run")
        return then_run.get("command") if isinstance(then_run, dict) else None

    @property
    def failed(self) -> bool:
        return bool(self.result and self.result.get("isError"))

    def shown(self) -> Shown | None:
        if self.result is None:
            return None
        text = text_of(self.result)
        if text.startswith(RECEIPT_MARK) or f"\n{RECEIPT_MARK}\n" in text:
            return Shown("receipt", text)
        found = PLACEHOLDER_ID.search(text, 0, 400)
        if found and text.startswith(PLACEHOLDER_STARTS):
            return Shown("placeholder", text, found.group(1))
        return Shown("full", text)

    def command_output(self) -> Shown | None:
        """What the model sees of this call's command output (after a fused marker for then_run)."""
        shown = self.shown()
        if shown is None or self.name == "bash" or shown.kind == "placeholder":
            return shown
        for marker in ("[then_run:succeeded]\n", "[then_run:failed]\n"):
            if marker in shown.text:
                return Shown(shown.kind, shown.text.split(marker, 1)[1])
        return Shown(shown.kind, "") if shown.kind == "full" else shown


class View:
    """One request as the model reads it, by a model of the given persona."""

    def __init__(self, request: dict[str, Any], persona: str = "recall") -> None:
        if persona not in PERSONAS:
            raise ValueError(f"unknown persona {persona!r}; known: {', '.join(PERSONAS)}")
        self.persona = persona
        self.system: str = request.get("systemPrompt") or ""
        self.messages: list[dict[str, Any]] = request.get("messages") or []
        self.tools: dict[str, dict[str, Any]] = {tool["name"]: tool for tool in request.get("tools") or []}
        self.calls: list[Call] = list(self._calls())
        self.all_text = "\n".join(self._texts())

    # -- the persona ---------------------------------------------------------------------------

    @property
    def recalls(self) -> bool:
        """Whether this model calls ``obs_recall`` at all (the ``rerun`` persona never does)."""
        return self.persona != "rerun"

    @property
    def early(self) -> bool:
        """Whether this model explores first and acts late on what it saw early."""
        return self.persona == "early-facts"

    def bring_back(self, call: Call | None, query: str | None, refetch: dict[str, Any]) -> dict[str, Any]:
        """The step that brings back what ``call``'s result showed, now that it is needed and hidden:
        a recall of its placeholder (once, by a persona that recalls), else ``refetch`` (the same
        read or command again)."""
        shown = call.shown() if call is not None else None
        if (
            self.recalls
            and shown is not None
            and shown.kind == "placeholder"
            and not self.recalls_of(shown.obs_id)
        ):
            return recall_step(shown.obs_id, query=query)
        return refetch

    def recalled_text(self, call: Call | None) -> str:
        """What the recalls of ``call``'s placeholder returned (visible in full), joined."""
        shown = call.shown() if call is not None else None
        if shown is None or shown.kind != "placeholder":
            return ""
        return "\n".join(
            readable(r.shown().text)
            for r in self.recalls_of(shown.obs_id)
            if r.shown() is not None and not r.failed
        )

    def sees(self, call: Call | None) -> str:
        """Everything of ``call``'s output the model can read now: the output (in full, or a
        placeholder's excerpt, or a receipt's quotes) and what its recalls returned."""
        shown = call.shown() if call is not None else None
        if shown is None:
            return ""
        return shown.excerpts() + "\n" + self.recalled_text(call)

    # -- what is in the context --------------------------------------------------------------

    def _calls(self) -> Iterator[Call]:
        results = {
            message.get("toolCallId"): message
            for message in self.messages
            if message.get("role") == "toolResult"
        }
        for position, message in enumerate(self.messages):
            if message.get("role") != "assistant":
                continue
            for block in message.get("content") or []:
                if block.get("type") == "toolCall":
                    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
                    yield Call(block["name"], args, results.get(block.get("id")), position)

    def _texts(self) -> Iterator[str]:
        for message in self.messages:
            yield text_of(message)
            for block in message.get("content") or [] if isinstance(message.get("content"), list) else []:
                if block.get("type") == "toolCall":
                    yield json.dumps(block.get("arguments"))

    @property
    def last(self) -> dict[str, Any]:
        return self.messages[-1] if self.messages else {}

    @property
    def last_call(self) -> Call | None:
        return self.calls[-1] if self.calls else None

    def has_tool(self, name: str) -> bool:
        return name in self.tools

    @property
    def fusion(self) -> bool:
        """Whether ``edit`` takes ``then_run`` (Action Fusion is on)."""
        properties = ((self.tools.get("edit") or {}).get("parameters") or {}).get("properties") or {}
        return "then_run" in properties

    def prompts(self) -> list[str]:
        """The human prompts in the context, oldest first (hidden and summary messages left out)."""
        return [
            text
            for message in self.messages
            if message.get("role") == "user"
            and not (text := text_of(message)).startswith((SUMMARY_PREFIX, "[todo", "Continue working"))
            and "Online context compaction" not in text
        ]

    def summaries(self) -> str:
        return "\n".join(text_of(m) for m in self.messages if text_of(m).startswith(SUMMARY_PREFIX))

    def runs_of(self, command: str) -> list[Call]:
        return [call for call in self.calls if call.command == command]

    def edits_of(self, path: str) -> list[Call]:
        return [
            call for call in self.calls if call.name in ("edit", "write") and call.args.get("path") == path
        ]

    def latest_read(self, path: str) -> Call | None:
        reads = [call for call in self.calls if call.name == "read" and call.args.get("path") == path]
        return reads[-1] if reads else None

    def latest_after(self, calls: list[Call], position: int) -> Call | None:
        later = [call for call in calls if call.position > position]
        return later[-1] if later else None

    def edit_state(self, path: str, old: str) -> bool | None:
        """Whether the model can tell that its edit replacing ``old`` in ``path`` went in: an edit of
        the file whose result did not fail (a packed result does not say it failed), or a full read
        after the last edit without ``old``. ``None`` when the last edit failed and nothing read the
        file since (the model reads it again), ``False`` when it never edited the file."""
        edits = [call for call in self.calls if call.name == "edit" and call.args.get("path") == path]
        read = self.latest_read(path)
        if edits and read is not None and read.position > edits[-1].position:
            shown = read.shown()
            if shown is not None and shown.kind == "full":
                return old not in shown.text
        for call in edits:
            shown = call.shown()
            if shown is not None and (not call.failed or shown.kind != "full" or "[then_run:" in shown.text):
                return True
        return None if edits else False

    def own_text(self) -> str:
        """What the model wrote itself (its text, not its calls), in the context or in a summary."""
        mine = [text_of(m) for m in self.messages if m.get("role") == "assistant"]
        return "\n".join([*mine, self.summaries()])

    def recalls_of(self, obs_id: str) -> list[Call]:
        return [call for call in self.calls if call.name == "obs_recall" and call.args.get("id") == obs_id]

    # -- todo ----------------------------------------------------------------------------------

    def todo_list(self) -> dict[str, Any] | None:
        """The newest ``{"revision", "tasks"}`` list visible anywhere in the context."""
        found: dict[str, Any] | None = None
        decoder = json.JSONDecoder()
        for message in self.messages:
            text = text_of(message)
            for match in TODO_LIST.finditer(text):
                try:
                    value, _ = decoder.raw_decode(text, match.start())
                except ValueError:
                    continue
                if found is None or value["revision"] >= found["revision"]:
                    found = value
        return found

    def todo_revision(self) -> int | None:
        """The newest revision any todo result or list names."""
        numbers = [int(n) for n in TODO_REVISION.findall(self.all_text)]
        listed = self.todo_list()
        if listed is not None:
            numbers.append(listed["revision"])
        return max(numbers) if numbers else None

    def todo_batch(self) -> bool:
        """Whether ``todo add`` takes a ``tasks`` array (one call for the whole plan)."""
        properties = ((self.tools.get("todo") or {}).get("parameters") or {}).get("properties") or {}
        return "tasks" in properties


def recall_step(obs_id: str, query: str | None = None, offset: int = 0) -> dict[str, Any]:
    args: dict[str, Any] = {"id": obs_id, "offset": offset}
    if query is not None:
        args["query"] = query
    return {"tool": "obs_recall", "args": args}


# -- side requests -------------------------------------------------------------------------


def _summary(view: View, facts: Callable[[str], list[str]]) -> str:
    """A summary in pi's format, holding the facts the task's policy finds in the conversation."""
    text = "\n".join(text_of(m) for m in view.messages)
    found = facts(text)
    done = "\n".join(f"- [x] {fact}" for fact in found) or "- [x] (nothing yet)"
    return (
        "## Goal\nFinish the user's task.\n\n## Constraints & Preferences\n- (none)\n\n"
        f"## Progress\n### Done\n{done}\n\n### In Progress\n- [ ] continue with the next step\n\n"
        "### Blocked\n- (none)\n\n## Key Decisions\n- **Work step by step**: verify each change\n\n"
        "## Next Steps\n1. Continue with the next unfinished step\n\n## Critical Context\n- (none)"
    )


def _receipt(view: View) -> dict[str, Any]:
    """The reducer's answer: verbatim quotes of the log's failure lines, as a cheap model gives."""
    request = text_of(view.messages[-1])
    source = re.search(r"^source_sha256=([0-9a-f]{64})$", request, re.MULTILINE)
    is_error = "\nis_error=true\n" in request
    log = request.split("<untrusted_log>\n", 1)[-1].rsplit("\n</untrusted_log>", 1)[0]
    wanted = re.compile(r"fail|error|fatal|warning|assert", re.IGNORECASE)
    quotes = []
    for line in log.split("\n"):
        if wanted.search(line) and line.strip() and line not in quotes and len(line) <= 600:
            quotes.append(line)
        if len(quotes) == 12:
            break
    evidence = [
        {"kind": "failure" if is_error and "warning" not in quote else "summary", "quote": quote}
        for quote in quotes
    ] or [{"kind": "summary", "quote": log.strip().split("\n")[-1][:600]}]
    receipt = {
        "schema": "sol-pi-evidence-receipt/1",
        "source_sha256": source.group(1) if source else "",
        "status": "failure" if is_error else "success",
        "uncertain": False,
        "evidence": evidence,
    }
    return {"text": json.dumps(receipt)}


def side_answer(request: dict[str, Any], facts: Callable[[str], list[str]]) -> dict[str, Any] | None:
    """The answer to a summary or reducer request, or ``None`` for an agent request."""
    view = View(request)
    if view.system.startswith(REDUCER_PROMPT):
        return _receipt(view)
    asks = text_of(view.last) if view.last.get("role") == "user" else ""
    if view.system.startswith(SUMMARIZER_PROMPT) or any(ask in asks for ask in SUMMARY_ASKS):
        return {"text": _summary(view, facts)}
    return None
