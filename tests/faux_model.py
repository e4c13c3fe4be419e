"""The scripted model of one test: the faux provider with a script of its own, never the process's.

:class:`FauxModel` is the one way the tests build a scripted model (``docs/models.md``, "Whose
script"): its :attr:`~FauxModel.registry` answers ``faux`` models from the test's script alone, so
tests (and sessions) running in one process never take each other's steps, and nothing has to be
reset afterwards. :meth:`~FauxModel.stream` is a stream function (``stream_fn=`` of a session or an
``Agent``, the ``stream_fn`` of the loop) that records each request before faux answers it.

:class:`Summarizer` is the faux factory of the tests that compact: it answers the host's summary
requests (pi's and the cache-friendly kind) with a summary and every other request with the next turn
of its queue, or with what a subclass's :meth:`~Summarizer.turn` decides.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tau.agent.compaction.prompts import CACHED_REQUEST_PREAMBLE
from tau.llm.messages import message_text
from tau.llm.providers import faux
from tau.llm.registry import ModelRegistry
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.types import Model

__all__ = ["SUMMARY", "FauxModel", "Summarizer", "is_summary_request", "message_copies"]

SUMMARY = "## Goal\nBuild it.\n"


def message_copies(context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's messages as JSON copies taken when it is sent (later edits do not show)."""
    return json.loads(json.dumps(context["messages"]))


class FauxModel:
    """A faux script owned by one test.

    Args:
        steps: The script (faux steps, a script file, or a :class:`~tau.llm.providers.faux.FauxProvider`).
        record: What :meth:`stream` keeps of each request in :attr:`requests` (default: the messages,
            copied); ``None`` keeps nothing.
        model_overrides: Fields of ``faux/faux-1`` to change (``context_window``, ``reasoning``, ...).

    Attributes:
        provider: The faux provider (``pending``, ``call_count``, ``requests``, ``push``).
        registry: A :class:`~tau.llm.registry.ModelRegistry` whose faux models answer from ``provider``.
        model: ``faux/faux-1`` of that registry, with the overrides.
        requests: What ``record`` returned for each request made through :meth:`stream`.
        count: How many requests were made through :meth:`stream`.
        on_request: Functions called with :attr:`count`, as each request is made.
    """

    def __init__(
        self,
        steps: Iterable[Mapping[str, Any]] | faux.FauxProvider | str = (),
        *,
        record: Callable[[Mapping[str, Any]], Any] | None = message_copies,
        model_overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = faux.provider_for(
            steps if isinstance(steps, faux.FauxProvider | str) else list(steps)
        )
        self.registry = ModelRegistry(faux=self.provider)
        model = self.registry.find("faux", "faux-1")
        assert model is not None
        self.model: Model = dataclasses.replace(model, **model_overrides) if model_overrides else model
        self.requests: list[Any] = []
        self.count = 0
        self.on_request: list[Callable[[int], None]] = []
        self._record = record

    def stream(
        self, model: Model, context: Mapping[str, Any], options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """A stream function: record the request, then let faux answer it with the next step."""
        self.count += 1
        if self._record is not None:
            self.requests.append(self._record(context))
        for hook in self.on_request:
            hook(self.count)
        return self.provider.stream(model, context, options)  # type: ignore[arg-type]

    __call__ = stream


def is_summary_request(request: Mapping[str, Any]) -> bool:
    """Whether a faux factory's request asks for a summary: pi's (the summarization system prompt, a
    compaction's or a branch's) or the cache-friendly kind (the agent's request with tau's instruction last)."""
    if "context summarization assistant" in (request.get("systemPrompt") or ""):
        return True
    last = request["messages"][-1] if request["messages"] else {}
    return last.get("role") == "user" and CACHED_REQUEST_PREAMBLE in message_text(last)


class Summarizer:
    """A faux factory (``FauxModel([{"factory": summarizer}])``): summaries for summary requests, turns for the rest.

    Args:
        turns: The answers to the agent's requests, in order (the list itself: a test may check it ran out).
        summary: The text of every summary (:meth:`summarize` may say otherwise).

    Attributes:
        requests: Every request the factory answered, summary requests included, in order.
    """

    def __init__(self, turns: list[dict[str, Any]] | None = None, summary: str = SUMMARY) -> None:
        self.turns = turns if turns is not None else []
        self.summary = summary
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self.requests.append(request)
        step = self.summarize(request) if is_summary_request(request) else self.turn(request)
        return [step, {"factory": self}]

    def summarize(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to a summary request."""
        return {"text": self.summary}

    def turn(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one of the agent's requests: the next of :attr:`turns`."""
        return self.turns.pop(0)

    def summaries(self) -> list[dict[str, Any]]:
        """The summary requests, in order."""
        return [request for request in self.requests if is_summary_request(request)]

    def turn_requests(self) -> list[dict[str, Any]]:
        """The agent's requests (no summary requests), in order."""
        return [request for request in self.requests if not is_summary_request(request)]
