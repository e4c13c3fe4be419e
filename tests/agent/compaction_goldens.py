"""Helpers of the compaction tests: pi's golden session files, and a faux summarizer with the canned texts."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from tau.llm.providers.faux import FauxProvider
from tau.llm.stream import StreamOptions
from tau.llm.types import Model
from tau.session.manager import SessionManager

Entry = dict[str, Any]


@cache
def open_session(path: Path) -> SessionManager:
    """A golden session file, opened read-only by tau's store (cached: the tests never write)."""
    return SessionManager.open(path, read_only=True)


def read_entries(path: Path) -> list[Entry]:
    """The entries of a session file in file order, header excluded."""
    return open_session(path).get_entries()


def branch_of(path: Path, leaf_id: str | None = None) -> list[Entry]:
    """Root→leaf entries of the branch ending at ``leaf_id`` (default: the leaf after opening)."""
    return open_session(path).get_branch(leaf_id)


@cache
def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


CANNED_SUMMARIES = {
    "compaction": "## Goal\nWrite an essay about testing.\n\n## Progress\n### Done\n- [x] Read notes.txt\n"
    "- [x] Wrote the essay\n\n## Next Steps\n1. Answer follow-up questions",
    "turn prefix": "## Original Request\nSee above.\n\n## Progress So Far\n- none",
    "updated": "## Goal\nWrite an essay about testing, then save a report.\n\n## Progress\n### Done\n- [x] Essay\n"
    "- [x] Read numbers.txt\n- [x] Wrote report.txt",
    "branch": '## Goal\nAnswer the second question.\n\n## Progress\n- Answered it with "Answer two."',
}
MODEL = Model(id="faux-1", provider="faux", api="faux", context_window=4000)


def canned_answer(request):
    """The fixtures README's rule for choosing the canned summary from the request's user text."""
    text = request["messages"][0]["content"][0]["text"]
    if "summary of this conversation branch" in text:
        return {"text": CANNED_SUMMARIES["branch"]}
    if "Create a concise checkpoint" in text:
        return {"text": CANNED_SUMMARIES["turn prefix"]}
    if "<previous-summary>" in text:
        return {"text": CANNED_SUMMARIES["updated"]}
    return {"text": CANNED_SUMMARIES["compaction"]}


class RecordingFaux:
    """A ``complete`` callable backed by faux: records each request, answers with the canned texts."""

    def __init__(self):
        self.provider = FauxProvider()
        self.requests = []

    async def __call__(self, context):
        self.requests.append(copy.deepcopy(context))
        self.provider.push({"factory": canned_answer})
        # As pi's completeSummarization: no cache writes for a one-off summary.
        options = StreamOptions(cache_retention="none", session_id="summary")
        return await self.provider.stream(MODEL, context, options).result()


def without_timestamps(context):
    return [{k: v for k, v in message.items() if k != "timestamp"} for message in context["messages"]]
