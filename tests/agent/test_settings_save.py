"""``Settings.save_global``: pi writes a user's setting changes to ``<agentDir>/settings.json``."""

from __future__ import annotations

import json

import pytest

from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.llm.registry import ModelRegistry
from tau.session.manager import SessionManager


def test_a_saved_key_keeps_the_other_keys_and_reaches_the_effective_settings(tmp_path):
    user = tmp_path / "settings.json"
    user.write_text(json.dumps({"theme": "dark", "retry": {"maxRetries": 7}}))
    settings = Settings.load(tmp_path, project_trusted=False, directory=tmp_path)
    user.write_text(json.dumps({"theme": "light", "retry": {"maxRetries": 7}}))  # written meanwhile
    assert settings.save_global("retry.enabled", False) is True
    assert json.loads(user.read_text()) == {"theme": "light", "retry": {"maxRetries": 7, "enabled": False}}
    assert settings.get("retry.enabled") is False and settings.get("retry.maxRetries") == 7
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temporary file left


def test_the_user_file_is_created_with_its_directory(tmp_path):
    directory = tmp_path / "agent"
    settings = Settings.load(tmp_path, project_trusted=False, directory=directory)
    settings.save_global("steeringMode", "all")
    assert json.loads((directory / "settings.json").read_text()) == {"steeringMode": "all"}


def test_a_trusted_project_file_is_never_written(tmp_path):
    project = tmp_path / ".tau" / "settings.json"
    project.parent.mkdir()
    project.write_text('{"followUpMode": "all"}')
    settings = Settings.load(tmp_path, project_trusted=True, directory=tmp_path / "agent")
    settings.save_global("followUpMode", "one-at-a-time")
    assert project.read_text() == '{"followUpMode": "all"}'
    assert settings.get("followUpMode") == "all"  # the project still wins, as in pi


def test_an_unreadable_user_file_is_left_alone_and_the_change_kept_in_memory(tmp_path):
    user = tmp_path / "settings.json"
    user.write_text("{not json")
    settings = Settings(global_path=user)
    assert settings.save_global("compaction.enabled", False) is False
    assert user.read_text() == "{not json" and settings.get("compaction.enabled") is False


def test_in_memory_settings_never_touch_the_disk(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings.in_memory({"theme": "dark"})
    assert settings.save_global("retry.enabled", False) is False
    assert settings.get("retry.enabled") is False and list(tmp_path.iterdir()) == []


# -- through the session (pi's setSteeringMode, setFollowUpMode, setAutoCompactionEnabled, ...) --


def test_queue_modes_and_toggles_are_saved_to_the_user_settings(tmp_path):
    user = tmp_path / "agent" / "settings.json"
    user.parent.mkdir()
    user.write_text(json.dumps({"theme": "dark", "compaction": {"reserveTokens": 1000}}))
    project = tmp_path / ".tau" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"steeringMode": "one-at-a-time"}))
    settings = Settings.load(tmp_path, project_trusted=False, directory=user.parent)
    registry = ModelRegistry()
    session = AgentSession(
        SessionManager.in_memory(tmp_path), settings, registry, registry.find("faux", "faux-1"), cwd=tmp_path
    )
    session.set_steering_mode("all")
    session.set_follow_up_mode("all")
    session.set_auto_compaction(False)
    session.set_auto_retry(False)
    assert session.agent.steering_mode == "all" and session.agent.follow_up_mode == "all"
    assert not session.auto_compaction_enabled and not session.auto_retry_enabled
    assert json.loads(user.read_text()) == {
        "theme": "dark",
        "compaction": {"reserveTokens": 1000, "enabled": False},
        "steeringMode": "all",
        "followUpMode": "all",
        "retry": {"enabled": False},
    }
    assert json.loads(project.read_text()) == {"steeringMode": "one-at-a-time"}
    with pytest.raises(ValueError, match="one-at-a-time"):
        session.set_steering_mode("sometimes")
