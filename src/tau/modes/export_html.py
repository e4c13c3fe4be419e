"""A session as one self-contained HTML page (``tau --export``, ``/export``, RPC ``export_html``).

The page carries the session's data as pi 1.6's export does (``<script id="session-data"
type="application/json">`` holding base64 of ``JSON.stringify({header, entries, leafId, systemPrompt?,
tools?})``), so a tool that reads pi's pages reads tau's. Unlike pi's page, which draws itself with
bundled JavaScript, tau's is written out in full: every message, thinking block, tool call and result,
compaction and branch summary is in the HTML, readable without scripts. The branch the session is on
is the main column; every other branch follows the entry it leaves from, in a collapsed ``<details>``
(the whole tree, each entry once). No network: styles are inline, images are ``data:`` URLs, and
there is no script besides the inert data block.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from pathlib import Path
from typing import Any

from tau.llm.messages import content_text, entry_message

__all__ = ["default_output_path", "export_file", "export_session", "render_page", "session_data"]

_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def session_data(
    manager: Any, system_prompt: str | None = None, tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """What the page embeds, keyed as pi's (``systemPrompt`` and ``tools`` only when known)."""
    data: dict[str, Any] = {
        "header": manager.get_header(),
        "entries": manager.get_entries(),
        "leafId": manager.get_leaf_id(),
    }
    if system_prompt is not None:
        data["systemPrompt"] = system_prompt
    if tools is not None:
        data["tools"] = tools
    return data


def default_output_path(session_file: str | os.PathLike[str]) -> str:
    """``tau-session-<file name without .jsonl>.html`` in the working directory (pi: ``pi-session-…``)."""
    return f"tau-session-{Path(session_file).name.removesuffix('.jsonl')}.html"


def export_file(input_path: str, output_path: str | None = None) -> str:
    """``tau --export FILE [OUT]``: the page of a session file; returns where it was written.

    Raises ``ValueError`` (the file is missing or not a session) or ``OSError`` (cannot write).
    """
    from tau.session import SessionError, SessionManager

    source = Path(input_path).expanduser().resolve()
    if not source.exists():
        raise ValueError(f"File not found: {source}")
    try:
        manager = SessionManager.open(source, read_only=True)
    except SessionError as exc:
        raise ValueError(str(exc)) from exc
    out = output_path or default_output_path(source)
    _write(out, render_page(session_data(manager)))
    return out


def export_session(session: Any, output_path: str | None = None) -> str:
    """The page of a running session (its system prompt and tools included); returns the path written.

    Raises ``ValueError`` for a session not saved to a file, or one with nothing in it yet.
    """
    manager = session.session_manager
    file = manager.get_session_file()
    if not file:
        raise ValueError("Cannot export in-memory session to HTML")
    if not os.path.exists(file):
        raise ValueError("Nothing to export yet - start a conversation first")
    tools = [
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        for tool in (session.agent.state.tools or [])
    ]
    data = session_data(manager, session.get_system_prompt(), tools)
    out = output_path or default_output_path(file)
    _write(out, render_page(data))
    return out


def _write(path: str, page: str) -> None:
    target = Path(path).expanduser()
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")


# -- the page --------------------------------------------------------------------------------


def _embedded(data: dict[str, Any]) -> str:
    from tau.common import jsjson

    # Buffer.from(string) in pi writes a lone surrogate as U+FFFD; so does tau.
    text = _LONE_SURROGATE.sub("\ufffd", jsjson.dumps_str(data))
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def render_page(data: dict[str, Any]) -> str:
    """The whole page for ``data`` (:func:`session_data`)."""
    header = data.get("header") or {}
    entries = [e for e in data.get("entries") or [] if isinstance(e, dict)]
    page = _Page(entries, data.get("leafId"))
    name = page.session_name()
    title = name or f"Session {header.get('id', '')}"
    facts = [
        ("Session", header.get("id")),
        ("Name", name),
        ("Directory", header.get("cwd")),
        ("Started", header.get("timestamp")),
        ("Forked from", header.get("parentSession")),
        ("Entries", str(len(entries))),
    ]
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts if v)
    system = ""
    if data.get("systemPrompt"):
        system = _details("System prompt", f"<pre>{_e(data['systemPrompt'])}</pre>", "system")
    tools = ""
    if data.get("tools"):
        items = "".join(
            f"<li><code>{_e(t.get('name'))}</code> {_e(t.get('description') or '')}</li>"
            for t in data["tools"]
        )
        tools = _details(f"Tools ({len(data['tools'])})", f"<ul>{items}</ul>", "tools")
    return _TEMPLATE.format(
        title=_e(title),
        css=_CSS,
        facts=rows,
        system=system,
        tools=tools,
        body=page.render(),
        data=_embedded(data),
    )


class _Page:
    """The entries as a tree, drawn along the session's branch with the other branches beside it."""

    def __init__(self, entries: list[dict[str, Any]], leaf: Any) -> None:
        self.entries = entries
        self.by_id = {e.get("id"): e for e in entries if e.get("id") is not None}
        self.children: dict[Any, list[dict[str, Any]]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        for entry in entries:
            parent = entry.get("parentId")
            if parent not in self.by_id or parent == entry.get("id"):
                parent = None
            self.children.setdefault(parent, []).append(entry)
            message = entry_message(entry)
            if isinstance(message, dict) and message.get("role") == "toolResult":
                self.results[str(message.get("toolCallId"))] = message
        self.on_branch = set()
        current, seen = leaf, set()
        while current in self.by_id and current not in seen:
            seen.add(current)
            self.on_branch.add(current)
            current = self.by_id[current].get("parentId")
        self.drawn: set[Any] = set()
        self.shown_results: set[str] = set()

    def session_name(self) -> str | None:
        names = [e.get("name") for e in self.entries if e.get("type") == "session_info" and e.get("name")]
        return str(names[-1]) if names else None

    def render(self) -> str:
        roots = self.children.get(None, [])
        parts = [self._line(self._main(roots))]
        # Entries no root reaches (a parent cycle): still shown, never lost.
        rest = [e for e in self.entries if e.get("id") not in self.drawn and id(e) not in self.drawn]
        if rest:
            parts.append(
                _details("Entries outside the tree", "".join(self._entry(e) for e in rest), "orphans")
            )
        return "".join(parts)

    def _main(self, choices: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The child to follow first: the one on the session's branch, else the last one."""
        ordered = sorted(choices, key=lambda e: e.get("id") in self.on_branch)
        return ordered[::-1]

    def _line(self, starts: list[dict[str, Any]]) -> str:
        """A sequence from the first of ``starts``; the others are branches shown before it."""
        if not starts:
            return ""
        first, others = starts[0], starts[1:]
        out = [self._branches(others)] if others else []
        entry: dict[str, Any] | None = first
        while entry is not None:
            out.append(self._entry(entry))
            kids = self._main(self.children.get(entry.get("id"), [])) if entry.get("id") is not None else []
            if len(kids) > 1:
                out.append(self._branches(kids[1:]))
            entry = kids[0] if kids else None
        return "".join(out)

    def _branches(self, starts: list[dict[str, Any]]) -> str:
        parts = []
        for start in starts:
            label = _first_words(start) or start.get("type", "entry")
            parts.append(_details(f"Other branch: {label}", self._line([start]), "branch"))
        return "".join(parts)

    def _entry(self, entry: dict[str, Any]) -> str:
        key = entry.get("id") if entry.get("id") is not None else id(entry)
        if key in self.drawn:
            return ""
        self.drawn.add(key)
        kind = entry.get("type")
        ident = _e(entry.get("id") or "")
        branch = " on-branch" if entry.get("id") in self.on_branch else ""
        render = _ENTRY_RENDERERS.get(kind, _other) if isinstance(kind, str) else _other
        body = render(entry, self)
        if not body:
            return ""
        return f'<section class="entry {_e(kind)}{branch}" id="entry-{ident}" data-entry-id="{ident}">{body}</section>'


def _message(entry: dict[str, Any], page: _Page) -> str:
    message = entry.get("message") or {}
    role = message.get("role")
    if role == "user":
        return _card("user", "You", _blocks(message.get("content"), page))
    if role == "assistant":
        meta = "/".join(str(message.get(k)) for k in ("provider", "model") if message.get(k))
        body = _blocks(message.get("content"), page)
        if message.get("stopReason") in ("error", "aborted"):
            reason = "Aborted" if message.get("stopReason") == "aborted" else "Error"
            body += f'<div class="error">{reason}: {_e(message.get("errorMessage") or "")}</div>'
        return _card("assistant", f"Assistant <span class=meta>{_e(meta)}</span>", body)
    if role == "toolResult":
        call_id = str(message.get("toolCallId"))
        if call_id in page.shown_results:
            return ""  # drawn under its call
        return _card("tool-result", f"Result of {_e(message.get('toolName'))}", _result_body(message))
    if role == "system":
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        sections = message.get("sections") or {}
        shown = text or "\n\n".join(str(v) for v in sections.values() if v)
        return _details("System prompt update", f"<pre>{_e(shown)}</pre>", "system") if shown else ""
    if role in ("custom", "bashExecution", "branchSummary", "compactionSummary"):
        return _card("note", _e(role), f"<pre>{_e(_plain(message))}</pre>")
    return _card(
        "note", _e(role or "message"), f"<pre>{_e(json.dumps(message, ensure_ascii=False)[:4000])}</pre>"
    )


def _blocks(content: Any, page: _Page) -> str:
    if isinstance(content, str):
        return _text(content)
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(_text(block.get("text") or ""))
        elif kind == "thinking":
            out.append(
                _details(
                    "Thinking", f"<div class=thinking>{_e(block.get('thinking') or '')}</div>", "thinking"
                )
            )
        elif kind == "image":
            out.append(_image(block))
        elif kind == "toolCall":
            out.append(_tool_call(block, page))
    return "".join(out)


def _tool_call(block: dict[str, Any], page: _Page) -> str:
    name = str(block.get("name") or "tool")
    args = block.get("arguments")
    if name == "bash" and isinstance(args, dict) and isinstance(args.get("command"), str):
        shown = f"$ {args['command']}"
    else:
        shown = f"{name} {json.dumps(args, ensure_ascii=False, indent=2)}"
    call_id = str(block.get("id"))
    result = page.results.get(call_id)
    parts = [
        f'<div class="tool-call" data-tool-call-id="{_e(call_id)}"><div class="call"><span class=tool>{_e(name)}</span><pre>{_e(shown)}</pre></div>'
    ]
    if result is not None:
        page.shown_results.add(call_id)  # its own entry is then not drawn again
        state = "error" if result.get("isError") else "ok"
        parts.append(f'<div class="tool-result {state}">{_result_body(result)}</div>')
    else:
        parts.append('<div class="tool-result missing">(no result)</div>')
    parts.append("</div>")
    return "".join(parts)


def _result_body(message: dict[str, Any]) -> str:
    return _blocks(message.get("content"), _Page([], None)) or "<pre>(no output)</pre>"


def _compaction(entry: dict[str, Any], page: _Page) -> str:
    tokens = entry.get("tokensBefore")
    title = "Compaction" + (f" ({tokens:,} tokens summarized)" if isinstance(tokens, int) else "")
    return _card("compaction", _e(title), _text(str(entry.get("summary") or "")))


def _branch_summary(entry: dict[str, Any], page: _Page) -> str:
    return _card("branch-summary", "Summary of the branch left", _text(str(entry.get("summary") or "")))


def _custom_message(entry: dict[str, Any], page: _Page) -> str:
    if entry.get("display") is False:
        return ""
    return _card("custom", _e(entry.get("customType") or "custom"), _blocks(entry.get("content"), page))


def _small(text: str) -> str:
    return f'<div class="small">{text}</div>'


def _other(entry: dict[str, Any], page: _Page) -> str:
    kind = entry.get("type")
    if kind == "model_change":
        return _small(f"Model: {_e(entry.get('provider'))}/{_e(entry.get('modelId'))}")
    if kind == "thinking_level_change":
        return _small(f"Thinking level: {_e(entry.get('thinkingLevel'))}")
    if kind == "session_info":
        return _small(f"Session name: {_e(entry.get('name'))}")
    if kind == "label":
        return _small(f"Label on {_e(entry.get('targetId'))}: {_e(entry.get('label'))}")
    return ""  # custom state and other bookkeeping entries: in the embedded data, not on the page


_ENTRY_RENDERERS = {
    "message": _message,
    "compaction": _compaction,
    "branch_summary": _branch_summary,
    "custom_message": _custom_message,
}


# -- small pieces ----------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _card(kind: str, title: str, body: str) -> str:
    return f'<div class="msg {kind}"><div class="who">{title}</div>{body}</div>'


def _details(summary: str, body: str, kind: str) -> str:
    return f'<details class="{kind}"><summary>{_e(summary)}</summary>{body}</details>'


_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _text(text: str) -> str:
    """Text with its code blocks set apart; everything else as it was written (line breaks kept)."""
    out, last = [], 0
    for match in _FENCE.finditer(text):
        if match.start() > last:
            out.append(f'<div class="text">{_e(text[last : match.start()])}</div>')
        out.append(f"<pre class=code>{_e(match.group(1))}</pre>")
        last = match.end()
    if last < len(text):
        out.append(f'<div class="text">{_e(text[last:])}</div>')
    return "".join(out)


def _image(block: dict[str, Any]) -> str:
    mime = str(block.get("mimeType") or "")
    data = str(block.get("data") or "")
    if mime not in _IMAGE_TYPES or not re.fullmatch(r"[A-Za-z0-9+/=\s]*", data):
        return f'<div class="small">[image {_e(mime)} not shown]</div>'
    return f'<img class="image" alt="image ({_e(mime)})" src="data:{mime};base64,{data}">'


def _first_words(entry: dict[str, Any]) -> str:
    message = entry_message(entry)
    text = _plain(message) if isinstance(message, dict) else str(entry.get("summary") or "")
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59] + "…"


def _plain(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return content_text(content) or str(message.get("summary") or message.get("command") or "")


_CSS = """
:root { color-scheme: light dark; --bg: #f6f6f4; --card: #fff; --fg: #1d1d1f; --dim: #6b6b70;
  --user: #e8f0fe; --tool: #f3f3f0; --ok: #2e7d32; --err: #c62828; --line: #dcdcd6; }
@media (prefers-color-scheme: dark) { :root { --bg: #17171a; --card: #202024; --fg: #e6e6e6;
  --dim: #9a9aa0; --user: #233047; --tool: #26262b; --line: #34343a; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 4rem; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; color: var(--dim); margin: 0 0 1rem; }
dt { font-weight: 600; } dd { margin: 0; word-break: break-all; }
.msg { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .9rem; margin: .6rem 0; }
.msg.user { background: var(--user); }
.who { font-weight: 600; font-size: .85rem; color: var(--dim); margin-bottom: .3rem; }
.meta { font-weight: 400; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; font: 13px/1.4 ui-monospace, Menlo, Consolas, monospace; }
pre.code { background: var(--tool); padding: .5rem; border-radius: 6px; }
.tool-call { border-left: 3px solid var(--line); margin: .5rem 0; padding-left: .6rem; }
.tool { font: 600 12px ui-monospace, Menlo, monospace; color: var(--dim); }
.tool-result { background: var(--tool); border-radius: 6px; padding: .2rem .5rem; }
.tool-result.ok { border-left: 3px solid var(--ok); } .tool-result.error { border-left: 3px solid var(--err); }
.error { color: var(--err); margin-top: .3rem; }
.small { color: var(--dim); font-size: .8rem; margin: .2rem 0; }
details { margin: .4rem 0; } summary { cursor: pointer; color: var(--dim); }
details.branch { border: 1px dashed var(--line); border-radius: 8px; padding: .3rem .7rem; }
.thinking { white-space: pre-wrap; font-style: italic; color: var(--dim); }
img.image { max-width: 100%; border-radius: 6px; border: 1px solid var(--line); }
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="generator" content="tau">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<main>
<h1>{title}</h1>
<dl>{facts}</dl>
{system}{tools}
<div id="messages">{body}</div>
</main>
<script id="session-data" type="application/json">{data}</script>
</body>
</html>
"""
