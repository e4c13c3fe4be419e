"""Projection: session entries on a branch → agent messages → model messages (pi 1.6).

Placeholder with the agreed signatures; the implementation lands with issue 2.
"""

from __future__ import annotations

from typing import Any

Entry = dict[str, Any]


def build_context_entries(branch: list[Entry]) -> list[Entry]:
    """The entries of ``branch`` (root→leaf) that reach the model: latest compaction, its kept range, the rest."""
    raise NotImplementedError


def build_session_projection(branch: list[Entry]) -> dict[str, Any]:
    """``{"entries": [{"sourceEntry", "messages"}], "messages", "thinkingLevel", "model"}`` for ``branch``."""
    raise NotImplementedError


def build_session_context(branch: list[Entry]) -> dict[str, Any]:
    """``{"messages", "thinkingLevel", "model"}`` for ``branch``."""
    raise NotImplementedError


def convert_to_llm(messages: list[dict[str, Any]], *, block_images: bool = False) -> list[dict[str, Any]]:
    """pi's ``convertToLlm``: agent messages (custom, bashExecution, summaries) → model messages."""
    raise NotImplementedError
