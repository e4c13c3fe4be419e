"""What a tool is: its definition, the result it returns, and the context it runs in.

Contract (pi-agent-core ``AgentTool``): ``execute`` either returns a :class:`ToolResult` or raises.
The agent turns a raised exception into ``ToolResult.from_error(str(exc))`` (``details: {}``) with
``isError: true`` on the call; a tool that wants to keep ``details``/``structuredContent`` on a
failure returns a result with ``is_error=True`` instead (bash does, for a non-zero exit code).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import Any, Literal, Protocol

from tau.common.dataclass import dataclass
from tau.llm.stream import AbortSignal
from tau.llm.types import ImageContent, TextContent, Tool, Usage

__all__ = [
    "CONSTRAINED_SAMPLING",
    "EXPOSURES",
    "ExecuteFunction",
    "ToolAborted",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolResult",
    "UpdateCallback",
    "tool_declaration",
]

# What every built-in declares (pi >= 0.86): prefer strict JSON-schema sampling where the API has it.
CONSTRAINED_SAMPLING: dict[str, Any] = {"type": "json_schema", "strict": "prefer"}

_UNSET: Any = object()

# pi's tool exposures (extensions.md "Tool Exposure"): how the model and other tools reach a tool.
EXPOSURES = ("direct", "model-only", "codemode", "deferred", "hidden")
# tau's earlier names, still accepted: "active" is "direct", "inactive" is "direct" registered inactive.
_EXPOSURE_ALIASES = {"active": "direct", "inactive": "direct"}


class ToolError(Exception):
    """A tool failure; its message is exactly the text the model reads in the error result."""


class ToolAborted(ToolError):
    """Raised by a tool when its signal aborted; the message is pi's ``Operation aborted``."""

    def __init__(self, message: str = "Operation aborted") -> None:
        super().__init__(message)


@dataclass
class ToolResult:
    """A tool's result, written to the wire with pi's keys by :meth:`to_json`.

    ``details`` is for the UI and logs (``None`` = pi's ``undefined``, left out of the JSON);
    ``structured_content`` is the machine-readable result for programmatic callers; ``content``
    is what the model sees.
    """

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: Any = None
    structured_content: Any = _UNSET
    is_error: bool = False
    usage: Usage | None = None
    terminate: bool = False

    @classmethod
    def text(cls, text: str, details: Any = None, **kwargs: Any) -> ToolResult:
        """A successful result with one text block."""
        return cls(content=[{"type": "text", "text": text}], details=details, **kwargs)

    @classmethod
    def error(cls, text: str, details: Any = None, **kwargs: Any) -> ToolResult:
        """A returned failure: the model sees ``text`` as an error; ``details`` are kept."""
        return cls(content=[{"type": "text", "text": text}], details=details, is_error=True, **kwargs)

    @classmethod
    def from_error(cls, message: str) -> ToolResult:
        """pi's ``createErrorToolResult``: what a raised error, a missing tool, invalid arguments,
        a block or an abort become (``details: {}``; the call's outcome carries ``isError``)."""
        return cls(content=[{"type": "text", "text": message}], details={})

    @property
    def has_structured_content(self) -> bool:
        return self.structured_content is not _UNSET

    def to_json(self) -> dict[str, Any]:
        """The result as pi writes it in events: ``content``, ``details``, ``structuredContent``, ..."""
        data: dict[str, Any] = {"content": list(self.content)}
        if self.details is not None:
            data["details"] = self.details
        if self.has_structured_content:
            data["structuredContent"] = self.structured_content
        if self.usage is not None:
            data["usage"] = self.usage
        if self.is_error:
            data["isError"] = True
        if self.terminate:
            data["terminate"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolResult:
        """A result from pi's JSON shape (an extension's ``tool_result`` handler returns one)."""
        result = cls(
            content=list(data.get("content") or []),
            details=data.get("details"),
            is_error=data.get("isError") is True,
            usage=data.get("usage"),
            terminate=data.get("terminate") is True,
        )
        if "structuredContent" in data:
            result.structured_content = data["structuredContent"]
        return result


UpdateCallback = Callable[[ToolResult], None]


@dataclass
class ToolContext:
    """What a tool may know about the session it runs in; the agent layer fills it per call.

    ``block_images`` is applied by the agent when it converts messages for the model; tools ignore it.
    """

    cwd: str
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    session_id: str | None = None
    session_file: str | None = None
    provider: str | None = None
    model: str | None = None
    model_input: tuple[str, ...] | None = None
    reasoning_level: str | None = None
    auto_resize_images: bool = True
    block_images: bool = False
    expose_session_environment: bool = True

    def session_environment(self) -> dict[str, str]:
        """The ``TAU_*`` variables bash exports: session id and file, provider, model, reasoning level."""
        if not self.expose_session_environment:
            return {}
        pairs = {
            "TAU_SESSION_ID": self.session_id,
            "TAU_SESSION_FILE": self.session_file,
            "TAU_PROVIDER": self.provider,
            "TAU_MODEL": self.model,
            "TAU_REASONING_LEVEL": self.reasoning_level,
        }
        return {name: value for name, value in pairs.items() if value}


class ExecuteFunction(Protocol):
    """``execute(tool_call_id, params, signal, on_update, ctx)``: returns a result or raises."""

    def __call__(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: UpdateCallback | None,
        ctx: ToolContext,
    ) -> Awaitable[ToolResult]: ...


@dataclass
class ToolDefinition:
    """A tool as registered with the agent (pi's ``ToolDefinition``).

    Attributes:
        name: The name the model calls.
        label: A human label for UIs.
        description: What the model reads about the tool.
        parameters: The JSON Schema of the arguments (key order is kept on the wire).
        execute: The async implementation.
        prompt_snippet: One line for the system prompt's ``<tools>`` list (``None``: not listed).
        prompt_guidelines: Lines for the system prompt's ``<rules>``.
        execution_mode: ``"sequential"`` makes a whole batch containing this tool run one by one.
        exposure: How the model and other tools reach the tool (pi): ``"direct"`` (declared while
            active, callable from other tools while active), ``"model-only"`` (declared while active,
            never callable), ``"codemode"`` (callable whenever registered, listed by codemode, declared
            only when activated explicitly), ``"deferred"`` (like ``codemode`` but not listed), or
            ``"hidden"`` (registered but unreachable). ``"active"`` and ``"inactive"`` are accepted
            as ``"direct"`` with ``default_active`` true or false.
        default_active: ``False`` registers a ``direct``/``model-only`` tool inactive; ``--tools``,
            ``defaultTools`` or ``set_active_tools`` activates it.
        namespace: The group of related tools (an MCP server): a name, or pi's
            ``{"name", "aliases"?, "description"?, "instructions"?}``.
        prepare_loadout: ``prepare_loadout(loadout)`` runs while the tool is active, whenever the
            active tools change; it returns ``{"descriptions": {name: text}, "hiddenDeclarations":
            [names]}`` (see :class:`tau.extension.Loadout`).
        reaches_tools: ``reaches_tools(args)``: ``"all"`` or the words of the arguments that may name
            the tools a call reaches (codemode, tool search).
        annotations: MCP-style hints (``readOnlyHint``, ``destructiveHint``, ...).
        prepare_arguments: Rewrites raw arguments before validation (legacy shapes).
        render_call, render_result: Interactive-mode renderers of an extension tool.
        renders_collapsed: The renderers fold long rows themselves (they get ``expanded``), so the
            interactive mode shows all their lines instead of cutting the row at its usual length.
        constrained_sampling: pi's ``constrainedSampling`` declaration.
        output_schema: The JSON Schema of ``structured_content``.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    execute: ExecuteFunction
    label: str = ""
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    execution_mode: Literal["parallel", "sequential"] = "parallel"
    exposure: str = "direct"
    default_active: bool = True
    namespace: str | dict[str, Any] | None = None
    prepare_arguments: Callable[[Any], Any] | None = None
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    renders_collapsed: bool = False
    constrained_sampling: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    prepare_loadout: Callable[[Any], Any] | None = None
    reaches_tools: Callable[[Any], Any] | None = None
    annotations: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.label:
            self.label = self.name
        if self.exposure in _EXPOSURE_ALIASES:
            if self.exposure == "inactive":
                self.default_active = False
            self.exposure = _EXPOSURE_ALIASES[self.exposure]
        if self.exposure not in EXPOSURES:
            raise ValueError(
                f'Tool "{self.name}": exposure must be one of {", ".join(EXPOSURES)}, got {self.exposure!r}'
            )

    @property
    def declarable(self) -> bool:
        """Whether activating the tool declares it to the model (``direct`` and ``model-only``)."""
        return self.exposure in ("direct", "model-only")

    @property
    def activated_on_registration(self) -> bool:
        """Whether registering the tool activates it."""
        return self.declarable and self.default_active

    def namespace_info(self) -> dict[str, Any] | None:
        """The namespace as pi's object ``{"name", ...}`` (a plain name becomes ``{"name": name}``)."""
        if isinstance(self.namespace, str):
            return {"name": self.namespace} if self.namespace else None
        if isinstance(self.namespace, dict) and isinstance(self.namespace.get("name"), str):
            return self.namespace
        return None


def tool_declaration(definition: ToolDefinition, *, copied: bool = True) -> Tool:
    """The declaration the model sees, as pi persists it in a system message's ``toolsAdded``.

    ``copied=False`` shares the definition's parameters (to compare declarations, not to keep one).
    """
    declaration: Tool = {
        "name": definition.name,
        "description": definition.description,
        "parameters": copy.deepcopy(definition.parameters) if copied else definition.parameters,
    }
    if definition.constrained_sampling is not None:
        declaration["constrainedSampling"] = definition.constrained_sampling
    return declaration
