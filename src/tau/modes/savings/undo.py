"""A tau session as stock pi would have run it: every context-economy mechanism undone.

What each mechanism left in the session file is taken back out, so the replay of the result is the
baseline ``tau savings`` compares tau's bill with:

- **Evidence-Preserving Reducer**: a receipt in a tool result is replaced by the log it stands for,
  read back from the reducer's archive (``source_artifact``); a receipt whose archive is gone stays
  (counted as ``unrestored``).
- **Action Fusion**: an ``edit``/``write`` that carried ``then_run`` becomes the plain call, and the
  command becomes one more request, a lone ``bash`` call, whose result is the command's output.
- **ObservationPack** edits only requests (placeholders never reach the file); the ``obs_recall``
  calls the model made to read packed results are removed with their results (a request made only
  of recalls disappears).
- **Online Context Compact**: its compactions and its hidden continuation messages are removed
  (the host's own compactions stay).
- The tool declarations of the system messages lose ``obs_recall`` and the ``then_run`` property.

The todo checklist's context block is never in the file, so there is nothing to undo for it.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau.bundled.fusion.wire import MARKERS, MUTATIONS
from tau.bundled.fusion.wire import is_fused_call as _fused
from tau.bundled.obspack.wire import RECALL_TOOL
from tau.bundled.occ import wire as occ_wire
from tau.bundled.reducer import wire as reducer_wire
from tau.bundled.reducer.wire import is_receipt as _receipt
from tau.common.regular_files import read_regular
from tau.llm.messages import ToolCall, entry_message, tool_calls

__all__ = [
    "OCC_COMPACTION_TYPES",
    "RECALL_TOOL",
    "REDUCER_JOURNAL",
    "UndoResult",
    "evidence",
    "undo_branch",
]

Entry = dict[str, Any]
REDUCER_JOURNAL = reducer_wire.JOURNAL_TYPE
RECEIPT_MARK = reducer_wire.RECEIPT_PREFIX
OCC_COMPACTION_TYPES = occ_wire.OCC_MESSAGE_TYPES
_ARTIFACT = re.compile(r"^source_artifact=(.+)$", re.MULTILINE)
_SOURCE_HASH = re.compile(r"^source_sha256=([0-9a-f]{64})$", re.MULTILINE)
_READBACK = re.compile(r"^readback=.*$", re.MULTILINE)


@dataclass
class UndoResult:
    """The undone branch and what was taken out."""

    branch: list[Entry]
    unfused: int = 0
    receipts: int = 0
    unrestored: int = 0
    recalls: int = 0
    occ_compactions: int = 0
    notes: list[str] = field(default_factory=list)


def _occ_message(entry: Entry) -> bool:
    return entry.get("type") == "custom_message" and entry.get("customType") in OCC_COMPACTION_TYPES


def evidence(branch: Iterable[Entry]) -> dict[str, int]:
    """What the context-economy mechanisms left in a branch (empty for a stock pi session)."""
    found = {
        "actionFusion": 0,
        "observationPack": 0,
        "evidencePreservingReducer": 0,
        "onlineContextCompact": 0,
    }
    for entry in branch:
        message = entry_message(entry)
        if message is not None and message.get("role") == "assistant":
            found["actionFusion"] += sum(1 for call in tool_calls(message) if _fused(call))
            found["observationPack"] += sum(
                1 for call in tool_calls(message) if call.get("name") == RECALL_TOOL
            )
        elif message is not None and message.get("role") == "toolResult" and _receipt(message):
            found["evidencePreservingReducer"] += 1
        elif _occ_message(entry):
            found["onlineContextCompact"] += 1
    return {name: count for name, count in found.items() if count}


# -- the reducer ---------------------------------------------------------------------------


def _archived(text: str, archive_root: Path | None) -> str | None:
    """The log a receipt stands for: its ``source_artifact``, else the archive by hash; checked by hash."""
    wanted = _SOURCE_HASH.search(text)
    candidates: list[Path] = []
    artifact = _ARTIFACT.search(text)
    if artifact:
        candidates.append(Path(artifact.group(1).strip()))
    if wanted and archive_root is not None:
        digest = wanted.group(1)
        candidates.append(
            archive_root.joinpath(*reducer_wire.archived_object(digest))
        )
    for path in candidates:
        try:
            data = read_regular(path)  # never a pipe or a link in the archive's place
        except OSError:
            continue
        if wanted is None or hashlib.sha256(data).hexdigest() == wanted.group(1):
            return data.decode("utf-8", "replace")
    return None


def _restore_block(text: str, archive_root: Path | None) -> str | None:
    start = text.find(RECEIPT_MARK)
    end = _READBACK.search(text, start) if start >= 0 else None
    if end is None:
        return None
    original = _archived(text[start:], archive_root)
    if original is None:
        return None
    return text[:start] + original + text[end.end() :]


def _restore_receipt(message: dict[str, Any], archive_root: Path | None) -> dict[str, Any] | None:
    content = []
    restored = False
    for block in message.get("content") or []:
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if isinstance(text, str) and RECEIPT_MARK in text:
            replaced = _restore_block(text, archive_root)
            if replaced is None:
                return None
            block, restored = {**block, "text": replaced}, True
        content.append(block)
    if not restored:
        return None
    details = {k: v for k, v in message["details"].items() if k != reducer_wire.DETAILS_KEY}
    return {**message, "content": content, "details": details}


# -- Action Fusion ---------------------------------------------------------------------------


def _split_fused(content: list[Any]) -> tuple[list[Any], str | None, bool]:
    """``(the mutation's own content, the command's output or None when it never ran, failed)``."""
    for index, block in enumerate(content):
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if not isinstance(text, str):
            continue
        for marker in MARKERS:
            at = text.find(marker)
            if at < 0:
                continue
            before = text[:at].rstrip("\n")
            head = [*content[:index], *([{**block, "text": before}] if before else [])]
            if marker == MARKERS[2]:
                return head, None, False
            return head, text[at + len(marker) :].lstrip("\n"), marker == MARKERS[1]
    return list(content), None, False


def _unfuse(entries: list[Entry], index: int, counter: list[int]) -> list[Entry]:
    """The fused assistant entry at ``index`` with its results, as pi would have run them."""
    entry = entries[index]
    message = entry["message"]
    fused = {str(call.get("id")): call for call in tool_calls(message) if _fused(call)}
    plain_content = [
        {**block, "arguments": {k: v for k, v in block["arguments"].items() if k != "then_run"}}
        if isinstance(block, dict) and str(block.get("id")) in fused and block.get("type") == "toolCall"
        else block
        for block in message["content"]
    ]
    out = [{**entry, "message": {**message, "content": plain_content}}]
    position = index + 1
    commands: list[tuple[ToolCall, str, bool, Entry]] = []
    while position < len(entries):
        result = entry_message(entries[position], "toolResult")
        if result is None:
            if entries[position].get("type") != "custom":
                break
            out.append(entries[position])
            position += 1
            continue
        call = fused.get(str(result.get("toolCallId")))
        if call is None:
            out.append(entries[position])
        else:
            mutation, output, failed = _split_fused(list(result.get("content") or []))
            mutation_failed = output is None and result.get("isError")
            out.append(
                {
                    **entries[position],
                    "message": {**result, "content": mutation, "isError": bool(mutation_failed)},
                }
            )
            if output is not None:
                commands.append((call, output, failed, entries[position]))
        position += 1
    for call, output, failed, after in commands:
        counter[0] += 1
        then_run = call["arguments"]["then_run"]
        arguments = {"command": then_run.get("command")}
        if isinstance(then_run.get("timeout"), (int, float)):
            arguments["timeout"] = then_run["timeout"]
        call_id = f"{call.get('id')}:then_run"
        request = {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": arguments}],
            "api": message.get("api"),
            "provider": message.get("provider"),
            "model": message.get("model"),
            "stopReason": "toolUse",
            "timestamp": message.get("timestamp"),
        }
        bash = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": output}],
            "isError": failed,
            "timestamp": (after.get("message") or {}).get("timestamp"),
        }
        base = str(after.get("id"))
        out.append(
            {
                "type": "message",
                "id": f"{base}~run",
                "parentId": base,
                "timestamp": after.get("timestamp"),
                "message": request,
            }
        )
        out.append(
            {
                "type": "message",
                "id": f"{base}~out",
                "parentId": f"{base}~run",
                "timestamp": after.get("timestamp"),
                "message": bash,
            }
        )
    return out


# -- ObservationPack's recalls ---------------------------------------------------------------


def _without_recalls(message: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant message without its ``obs_recall`` calls; None when nothing else is left."""
    content = [
        block
        for block in message.get("content") or []
        if not (
            isinstance(block, dict) and block.get("type") == "toolCall" and block.get("name") == RECALL_TOOL
        )
    ]
    if not any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content):
        return None
    return {**message, "content": content}


# -- the system messages ---------------------------------------------------------------------


def _stock_tools(message: dict[str, Any]) -> dict[str, Any]:
    tools = message.get("toolsAdded")
    if not isinstance(tools, list):
        return message
    stock = []
    for tool in tools:
        if not isinstance(tool, dict) or tool.get("name") == RECALL_TOOL:
            continue
        properties = (
            (tool.get("parameters") or {}).get("properties") if tool.get("name") in MUTATIONS else None
        )
        if isinstance(properties, dict) and "then_run" in properties:
            tool = copy.deepcopy(tool)
            del tool["parameters"]["properties"]["then_run"]
        stock.append(tool)
    sections = message.get("sections")
    if isinstance(sections, dict) and isinstance(sections.get("tools"), str):
        lines = [line for line in sections["tools"].split("\n") if not line.startswith(f"- {RECALL_TOOL}:")]
        sections = {**sections, "tools": "\n".join(lines)}
    return {**message, "toolsAdded": stock, **({"sections": sections} if sections is not None else {})}


# -- the whole branch ----------------------------------------------------------------------------


def undo_branch(
    branch: list[Entry], mechanisms: Iterable[str], *, archive_root: str | os.PathLike[str] | None = None
) -> UndoResult:
    """``branch`` with ``mechanisms`` (names as in ``evidence``) undone."""
    undo = set(mechanisms)
    root = Path(archive_root) if archive_root is not None else None
    result = UndoResult([])
    entries = _with_logs(branch, root, result) if "evidencePreservingReducer" in undo else list(branch)
    removed_calls: set[str] = set()
    counter = [0]
    index = 0
    out: list[Entry] = result.branch
    while index < len(entries):
        entry = entries[index]
        message = entry_message(entry)
        role = message.get("role") if message is not None else None
        if "onlineContextCompact" in undo and (_occ_message(entry) or _occ_compaction(entries, index)):
            result.occ_compactions += entry.get("type") == "compaction"
            index += 1
            continue
        if message is not None and role == "system" and ("observationPack" in undo or "actionFusion" in undo):
            out.append({**entry, "message": _stock_tools(message)})
        elif (
            message is not None
            and role == "assistant"
            and "observationPack" in undo
            and any(c.get("name") == RECALL_TOOL for c in tool_calls(message))
        ):
            removed_calls |= {str(c.get("id")) for c in tool_calls(message) if c.get("name") == RECALL_TOOL}
            result.recalls += sum(1 for c in tool_calls(message) if c.get("name") == RECALL_TOOL)
            kept = _without_recalls(message)
            if kept is not None:
                entries[index] = {**entry, "message": kept}
                continue
        elif (
            message is not None
            and role == "assistant"
            and "actionFusion" in undo
            and any(_fused(c) for c in tool_calls(message))
        ):
            end = index + 1
            while end < len(entries) and (
                entry_message(entries[end], "toolResult") is not None or entries[end].get("type") == "custom"
            ):
                end += 1
            out.extend(_unfuse(entries[:end], index, counter))
            index = end
            continue
        elif message is not None and role == "toolResult" and str(message.get("toolCallId")) in removed_calls:
            pass
        else:
            out.append(entry)
        index += 1
    result.unfused = counter[0]
    if result.unrestored:
        result.notes.append(f"{result.unrestored} receipt(s) kept: their archived log is gone")
    return result


def _with_logs(branch: list[Entry], root: Path | None, result: UndoResult) -> list[Entry]:
    """``branch`` with every receipt replaced by its archived log (before fused calls are split)."""
    entries = []
    for entry in branch:
        message = entry_message(entry, "toolResult")
        if message is not None and _receipt(message):
            restored = _restore_receipt(message, root)
            result.receipts += 1
            if restored is None:
                result.unrestored += 1
            else:
                entry = {**entry, "message": restored}
        entries.append(entry)
    return entries


def _occ_compaction(entries: list[Entry], index: int) -> bool:
    """A compaction that Online Context Compact asked for: its continuation message follows it."""
    if entries[index].get("type") != "compaction":
        return False
    for entry in entries[index + 1 :]:
        if _occ_message(entry):
            return True
        message = entry_message(entry)
        if message is not None and message.get("role") in ("assistant", "user"):
            return False
    return False
