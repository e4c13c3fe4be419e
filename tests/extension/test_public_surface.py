"""tau.extension is everything an extension may import: nothing becomes public by accident."""

from __future__ import annotations

import types

import tau.extension

EVENTS = {
    "AfterProviderResponseEvent", "AgentBeforeSettleEvent", "AgentEndEvent", "AgentSettledEvent", "AgentStartEvent",
    "BeforeAgentStartEvent", "BeforeProviderHeadersEvent", "BeforeProviderRequestEvent", "CacheWarmingDecisionEvent",
    "ContextEvent", "ContextWithSystemEvent", "Event", "InputEvent", "MessageEndEvent", "MessageStartEvent",
    "MessageUpdateEvent", "ModelSelectEvent", "ProjectTrustEvent", "ProviderStreamEvent", "ResourcesDiscoverEvent",
    "SessionBeforeCompactEvent", "SessionBeforeForkEvent", "SessionBeforeSwitchEvent", "SessionBeforeTreeEvent",
    "SessionCompactEvent", "SessionCompactFailedEvent", "SessionInfoChangedEvent", "SessionShutdownEvent",
    "SessionStartEvent", "SessionTreeEvent", "ThinkingLevelSelectEvent", "ToolCallEvent", "ToolExecutionEndEvent",
    "ToolExecutionStartEvent", "ToolExecutionUpdateEvent", "ToolResultEvent", "TurnEndEvent", "TurnStartEvent",
    "UIPromptEndEvent", "UIPromptStartEvent", "UserBashEvent",
}  # fmt: skip
API = {
    "ExtensionAPI", "ExtensionContext", "ExtensionToolContext", "ExtensionCommandContext", "ReadonlySessionManager",
    "ExtensionUI", "NoUI", "PrintUI", "ExtensionRunner", "load_extensions", "load_factory", "BUNDLED_EXTENSIONS",
    "ExecResult", "exec_command", "AbortSignal", "StreamOptions", "Settings", "agent_dir", "project_config_dir",
}  # fmt: skip
TOOLS = {
    "ToolDefinition", "ToolResult", "ToolContext", "ToolError", "ToolAborted", "BashOperations",
    "LocalBashOperations", "bash_tool", "edit_tool", "write_tool", "read_tool", "builtin_tool",
    "DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "format_size", "truncate_head", "truncate_tail",
    "expand_path", "resolve_to_cwd", "unchanged_prefix",
}  # fmt: skip
COMPACTION = {
    "CutPoint", "find_cut_point", "estimate_tokens", "estimate_messages_tokens", "prepare_compaction",
    "CompactionPreparation", "CompactionSettings",
}  # fmt: skip


def test_all_is_exactly_the_agreed_surface():
    assert set(tau.extension.__all__) == EVENTS | API | TOOLS | COMPACTION
    assert len(tau.extension.__all__) == len(set(tau.extension.__all__))


def test_no_other_public_name_is_reachable():
    public = {
        name
        for name, value in vars(tau.extension).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(tau.extension.__all__)


def test_every_exported_name_resolves():
    for name in tau.extension.__all__:
        assert getattr(tau.extension, name) is not None, name
