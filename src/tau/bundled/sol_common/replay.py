"""How a context-economy mechanism is replayed over a session branch: the protocol and its registry.

Each mechanism package has a ``replay`` module (``tau.bundled.<name>.replay``) with one object
``REPLAY`` that speaks :class:`MechanismReplay`, built on the same code its live extension runs and
the names of its own ``wire`` module. ``tau savings`` (and the tests that hold a replay to a live
run) loop over :func:`mechanism_replays`; they never import a mechanism's internals.

A replay has three verbs:

- **undo**: take the mechanism's traces out of a branch it ran in, leaving what stock pi would have
  stored (:meth:`MechanismReplay.undo`);
- **apply**: rewrite a branch as the mechanism would have (Action Fusion merges round trips before
  any request is counted; :meth:`MechanismReplay.apply`);
- **decide**: make the mechanism's decision request by request, as the live extension does, through
  a :class:`ReplayRun` (ObservationPack's projection of each request, Online Context Compact's
  boundary compactions; :meth:`MechanismReplay.start`).

The host (the caller, in the modes layer) hands in what only it has through :class:`ReplayHost`:
the session projection, the model catalogue and the effective settings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

from tau.bundled.sol_common.settings import SolSettings, parse_sol_settings
from tau.common.dataclass import dataclass

__all__ = [
    "REPLAY_MODULES",
    "Entry",
    "MechanismReplay",
    "ReplayHost",
    "ReplayRun",
    "Request",
    "Undone",
    "mechanism_replays",
]

Entry = dict[str, Any]

# In the order ``tau savings`` reports them; each names a module with ``REPLAY``.
REPLAY_MODULES = (
    "tau.bundled.fusion.replay",
    "tau.bundled.obspack.replay",
    "tau.bundled.reducer.replay",
    "tau.bundled.occ.replay",
)


def _no_model(provider: str, model_id: str) -> Any:
    return None


@dataclass
class ReplayHost:
    """What a replay needs from the host.

    ``projection(branch)``: the session projection of a root→leaf branch, as the host builds it
    (``{"entries", "messages", "thinkingLevel", "model"}``). ``model(provider, id)``: the catalogue's
    model (its ``context_window`` and ``cost``), or None. ``settings``: the effective settings (the
    ``sol`` and ``compaction`` blocks are read as the live extensions read them). ``archive_root``:
    the session's ``sol/<sessionId>/`` directory, when it has one.
    """

    projection: Callable[[list[Entry]], dict[str, Any]]
    model: Callable[[str, str], Any] = _no_model
    settings: dict[str, Any] = field(default_factory=dict)
    archive_root: Path | None = None

    def sol_settings(self) -> SolSettings:
        """The ``sol`` block as the live extensions read it (a bad block raises SolConfigError)."""
        block = self.settings.get("sol") if isinstance(self.settings, dict) else None
        return parse_sol_settings([] if block is None else [("settings.json", block)])


@dataclass
class Undone:
    """A branch with a mechanism's traces taken out, what was taken (``counts``) and what could not be."""

    branch: list[Entry]
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    """A request as the replay counted it: ``work[index]`` is its assistant message, ``projected`` its
    context as the host projects it, ``messages`` as the mechanisms sent it, ``prompt`` and
    ``output`` its tokens."""

    work: list[Entry]
    index: int
    projected: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    prompt: int
    output: int


class ReplayRun(Protocol):
    """One mechanism's decisions across one replay, request after request.

    The replay calls, for every entry of the branch in order: :meth:`request` when the entry is a
    request (an assistant message; ``messages`` is its context as the earlier mechanisms send it),
    then :meth:`sent` with the request as counted, then :meth:`after` (an entry the mechanism adds
    after this one, or None).
    """

    def request(
        self, messages: list[dict[str, Any]], work: list[Entry], index: int
    ) -> list[dict[str, Any]]: ...

    def sent(self, request: Request) -> None: ...

    def after(self, work: list[Entry], index: int) -> Entry | None: ...

    def details(self) -> dict[str, Any]: ...


class MechanismReplay(Protocol):
    """A mechanism as a replay sees it (see the module's documentation)."""

    name: str  # its ``sol`` settings key (``wire.MECHANISM``)
    undo_rank: int  # undone in this order (the reducer's logs come back before fused results are split)
    not_measured: str | None  # why a replay cannot apply it, or None

    def evidence(self, branch: Sequence[Entry]) -> int: ...

    def undo(self, branch: list[Entry], host: ReplayHost) -> Undone: ...

    def apply(self, branch: list[Entry]) -> tuple[list[Entry], dict[str, Any]]: ...

    def start(self, branch: list[Entry], host: ReplayHost) -> ReplayRun | None: ...


def mechanism_replays(modules: Iterable[str] = REPLAY_MODULES) -> list[MechanismReplay]:
    """Every mechanism's ``REPLAY``, in report order."""
    return [importlib.import_module(module).REPLAY for module in modules]
