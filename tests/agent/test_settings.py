"""Settings files and project trust (pi-host §9.3, §9.4)."""

from __future__ import annotations

import json

import pytest

from tau.agent.settings import Settings, SettingsError, resolve_default_tools, tool_list_error
from tau.agent.trust import TrustError, needs_trust, resolve_trust, save_decision, saved_decision


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_project_overrides_user_and_nested_objects_merge(tmp_path, isolated_agent_dir):
    write(isolated_agent_dir / "settings.json", {"retry": {"maxRetries": 5}, "defaultModel": "a"})
    write(tmp_path / ".tau" / "settings.json", {"retry": {"baseDelayMs": 10}, "defaultModel": "b"})
    settings = Settings.load(tmp_path, project_trusted=True)
    assert settings.get("defaultModel") == "b"
    assert settings.get("retry") == {
        "enabled": True,
        "maxRetries": 5,
        "baseDelayMs": 10,
        "maxAgentDelayMs": 60000,
    }


def test_untrusted_project_settings_are_ignored(tmp_path, isolated_agent_dir):
    write(tmp_path / ".tau" / "settings.json", {"defaultModel": "b"})
    assert Settings.load(tmp_path, project_trusted=False).get("defaultModel") is None


def test_defaults_fill_what_files_leave_out(tmp_path):
    settings = Settings.load(tmp_path, project_trusted=True)
    assert settings.get("compaction.reserveTokens") == 16384
    assert settings.get("defaultThinkingLevel") == "medium"
    assert settings.default_tools() == ["read", "bash", "edit", "write"]


def test_tool_modifier_lists_modify_the_inherited_selection(tmp_path, isolated_agent_dir):
    write(isolated_agent_dir / "settings.json", {"defaultTools": ["read", "bash"]})
    write(tmp_path / ".tau" / "settings.json", {"defaultTools": ["+edit", "-bash"]})
    assert Settings.load(tmp_path, project_trusted=True).default_tools() == ["read", "edit"]
    assert resolve_default_tools(["-write"]) == ["read", "bash", "edit"]
    assert tool_list_error(["read", "+bash"]) == "tool names cannot be mixed with +name or -name entries"
    assert tool_list_error(["+b*"]) == "+name and -name entries take exact tool names, not patterns: +b*"


def test_broken_settings_file_names_the_file(tmp_path, isolated_agent_dir):
    write(isolated_agent_dir / "settings.json", "{nope")
    with pytest.raises(SettingsError, match=r"settings\.json: invalid JSON at line 1"):
        Settings.load(tmp_path, project_trusted=True)
    write(isolated_agent_dir / "settings.json", "[1]")
    with pytest.raises(SettingsError, match="expected a JSON object, got list"):
        Settings.load(tmp_path, project_trusted=True)


def test_overrides_win_and_as_dict_is_a_copy():
    settings = Settings.in_memory({"a": {"b": 1}})
    settings.apply_overrides({"a": {"c": 2}})
    copy = settings.as_dict()
    copy["a"]["b"] = 99
    assert settings.get("a") == {"b": 1, "c": 2}


def test_trust_order(tmp_path, isolated_agent_dir):
    project = tmp_path / "proj"
    project.mkdir()
    assert not needs_trust(project)
    assert resolve_trust(project) is True  # nothing to guard
    write(project / ".tau" / "settings.json", {})
    assert needs_trust(project)
    assert resolve_trust(project) is False  # "ask" outside the interactive mode
    assert resolve_trust(project, default_policy="always") is True
    save_decision(tmp_path, True)  # an ancestor's decision applies
    assert saved_decision(project) is True
    assert resolve_trust(project) is True
    assert resolve_trust(project, approve=False) is False
    write(isolated_agent_dir / "trust.json", {"x": "yes"})
    with pytest.raises(TrustError, match="must be true, false, or null"):
        saved_decision(project)
