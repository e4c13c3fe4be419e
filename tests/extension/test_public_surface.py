"""tau.extension is everything an extension may import: nothing becomes public by accident."""

from __future__ import annotations

import types

import tau.extension

EVENTS = {
    "AfterProviderResponseEvent", "AgentBeforeSettleEvent", "AgentEndEvent", "AgentSettledEvent", "AgentStartEvent",
    "BeforeAgentStartEvent", "BeforeProviderHeadersEvent", "BeforeProviderRequestEvent", "CacheWarmingDecisionEvent",
    "ContextEvent", "ContextWithSystemEvent", "Event", "InputEvent", "MessageEndEvent", "MessageStartEvent",
    "MessageUpdateEvent", "McpServersChangeEvent", "ModelSelectEvent", "ProjectTrustEvent", "ProviderStreamEvent", "ResourcesDiscoverEvent",
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
    "VERSION", "ChangeLog",
}  # fmt: skip
TOOLS = {
    "ToolDefinition", "ToolResult", "ToolContext", "ToolError", "ToolAborted", "BashOperations",
    "LocalBashOperations", "bash_tool", "edit_tool", "write_tool", "read_tool", "builtin_tool",
    "DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "format_size", "truncate_head", "truncate_tail",
    "expand_path", "resolve_to_cwd", "unchanged_prefix", "create_output_file", "Loadout",
    "resolve_config_value_or_raise",
}  # fmt: skip
MCP = {
    "McpConfigError", "validate_mcp_server_config", "get_mcp_tool_exposure", "is_mcp_server_override",
    "is_mcp_tool_name", "mcp_namespace", "tool_name_matcher",
}  # fmt: skip
MESSAGES = {
    "AgentMessage", "Message", "SystemMessage", "UserMessage", "AssistantMessage", "ToolResultMessage",
    "CustomMessage", "BashExecutionMessage", "BranchSummaryMessage", "CompactionSummaryMessage",
    "TextContent", "ThinkingContent", "ImageContent", "ToolCall",
    "content_text", "message_text", "message_key", "text_block", "image_block", "tool_calls", "has_tool_calls", "entry_message", "role_of",
    "is_system", "is_user", "is_assistant", "is_tool_result", "is_custom", "is_bash_execution",
}  # fmt: skip
COMPACTION = {
    "CutPoint", "find_cut_point", "estimate_tokens", "estimate_messages_tokens", "prepare_compaction",
    "CompactionPreparation", "CompactionSettings",
}  # fmt: skip


def test_all_is_exactly_the_agreed_surface():
    assert set(tau.extension.__all__) == EVENTS | API | TOOLS | COMPACTION | MCP | MESSAGES
    assert len(tau.extension.__all__) == len(set(tau.extension.__all__))


def test_no_other_public_name_is_reachable():
    for name in tau.extension.__all__:  # the names are imported on first use: load them all
        getattr(tau.extension, name)
    public = {
        name
        for name, value in vars(tau.extension).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(tau.extension.__all__)


def test_every_exported_name_resolves():
    for name in tau.extension.__all__:
        assert getattr(tau.extension, name) is not None, name


def test_every_mode_ui_has_notice_and_it_never_writes_stdout(capsys):
    """``ctx.ui.notice`` is public (issue 19): the protocol declares it, and each mode's UI shows it
    where the docs say: stderr without a terminal view, a dim block in the terminal."""
    from tau.extension.ui import ui_for_mode
    from tau.modes.interactive.model import ChatController, NoticeBlock
    from tau.modes.interactive.ui import InteractiveUI
    from tau.modes.rpc.ui import RpcUI

    assert "notice" in vars(tau.extension.ExtensionUI)
    sent: list[dict] = []
    for ui in (ui_for_mode("print"), ui_for_mode("json"), RpcUI(sent.append)):
        ui.notice("todo-loop: continuing,\n 2 tasks open")
    out, err = capsys.readouterr()
    assert out == "" and sent == []
    assert err == "todo-loop: continuing, 2 tasks open\n" * 3
    tau.extension.NoUI().notice("nothing")
    assert capsys.readouterr() == ("", "")
    controller = ChatController()
    InteractiveUI(controller, overlays=None).notice("todo-loop: stopped")
    assert controller.blocks[-1] == NoticeBlock("todo-loop: stopped", "dim")


def test_the_typed_imports_name_the_modules_the_names_load_from():
    """The names load on first use (``_EXPORTS``); the type checker reads the ``TYPE_CHECKING``
    imports: both must say the same module for every name, or typed code sees another object."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(tau.extension.__file__).read_text())
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for item in node.body:
                if isinstance(item, ast.ImportFrom):
                    typed.update({alias.asname or alias.name: str(item.module) for alias in item.names})
    assert typed == tau.extension._EXPORTS
    assert set(tau.extension.__all__) == {*typed, "VERSION"}
