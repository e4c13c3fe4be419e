"""Themes that change while tau runs (issue 32's audit, left out: pi's file watch and extensions' themes).

pi watches the active theme's file and redraws in the new colours, keeping the theme in use while an
edit does not parse; tau polls the file's identity, size and time and says why an edit cannot be used.
pi's ``resources_discover`` lets an extension add theme paths: after the others, kept with
``--no-themes``, and a ``theme`` setting naming one of them applies once they are known.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tau.modes.themes import SYSTEM, ThemeSet, load_themes
from tau.modes.themes.tokens import FALLBACKS, TOKENS


def theme_file(path: Path, name: str = "mine", background: str = "#111111", *, tick: int = 0) -> Path:
    """Write a theme; ``tick`` sets a distinct modification time, so an edit is told apart however
    coarse the filesystem's clock is (no test waits for time to pass)."""
    colors = {token: "#c0c0c0" for token in TOKENS if token not in FALLBACKS}
    colors["userMessageBg"] = background
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "colors": colors}))
    stamp = 1_700_000_000_000_000_000 + tick * 1_000_000_000
    os.utime(path, ns=(stamp, stamp))
    return path


def themes(tmp_path: Path, setting: str | None = "mine", **options) -> ThemeSet:
    return load_themes(
        cwd=str(tmp_path),
        agent_dir=str(tmp_path / "agent"),
        trusted=False,
        user_settings={},
        project_settings={},
        setting=setting,
        **options,
    )


def test_an_edited_theme_file_is_used_at_once(tmp_path):
    path = theme_file(tmp_path / "agent" / "themes" / "mine.json")
    found = themes(tmp_path)
    assert found.active.colors["userMessageBg"] == "#111111"
    assert found.reload_changed() is None  # nothing changed: nothing read

    theme_file(path, background="#222222", tick=1)
    change = found.reload_changed()
    assert change is not None and change.warning is None
    assert found.active is change.theme and found.active.colors["userMessageBg"] == "#222222"
    assert found.active.name == "mine" and found.get("mine") is found.active  # /settings offers the new one
    assert found.reload_changed() is None  # read once per edit


def test_a_broken_edit_keeps_the_colours_and_says_why_once(tmp_path):
    path = theme_file(tmp_path / "agent" / "themes" / "mine.json")
    found = themes(tmp_path)
    path.write_text('{"name": "mine", "colors": {')
    os.utime(path, ns=(1, 1))
    change = found.reload_changed()
    assert change is not None and change.theme is None
    assert change.warning is not None
    assert change.warning.startswith(f"Theme {path} changed but cannot be used (Failed to parse theme")
    assert change.warning.endswith('keeping the colours of "mine"')
    assert found.active.colors["userMessageBg"] == "#111111"
    assert found.reload_changed() is None  # the same broken file is not reported again

    theme_file(path, background="#333333", tick=2)  # half-way edits missing tokens are pi's errors
    path.write_text(json.dumps({"name": "mine", "colors": {"accent": "#ffffff"}}))
    os.utime(path, ns=(2, 2))
    change = found.reload_changed()
    assert change is not None and "missing 50 required color token(s): bashMode" in (change.warning or "")

    theme_file(path, background="#444444", tick=3)  # fixed: used at once
    change = found.reload_changed()
    assert change is not None and change.theme is not None
    assert found.active.colors["userMessageBg"] == "#444444"


def test_a_theme_file_missing_for_a_moment_keeps_the_theme(tmp_path):
    """An editor that saves by writing a new file and renaming it leaves no file for a moment."""
    path = theme_file(tmp_path / "agent" / "themes" / "mine.json")
    found = themes(tmp_path)
    path.unlink()
    assert found.reload_changed() is None and found.active.colors["userMessageBg"] == "#111111"
    replacement = theme_file(tmp_path / "mine.json.tmp", background="#555555", tick=5)
    replacement.rename(path)
    change = found.reload_changed()
    assert change is not None and found.active.colors["userMessageBg"] == "#555555"


def test_only_the_active_themes_own_file_is_watched(tmp_path):
    path = tmp_path / "agent" / "themes" / "mine.json"
    for builtin in (SYSTEM, "dark", "light"):
        theme_file(path)
        found = themes(tmp_path, builtin)
        theme_file(path, background="#666666", tick=4)
        assert found.active.name == builtin and found.reload_changed() is None
        assert found.get("mine").colors["userMessageBg"] == "#111111"
    found.use("mine")  # chosen in /settings after the edit: the next look at its file reads it
    change = found.reload_changed()
    assert change is not None and found.active.colors["userMessageBg"] == "#666666"


def test_extensions_add_theme_paths_after_the_others(tmp_path):
    """pi's ``resources_discover`` ``themePaths``: files or folders; the first of a name still wins."""
    theme_file(tmp_path / "agent" / "themes" / "mine.json")
    theme_file(tmp_path / "ext" / "themes" / "mine.json", background="#999999")
    theme_file(tmp_path / "ext" / "themes" / "ext.json", name="ext", background="#abcdef")
    found = themes(tmp_path, "ext")
    assert found.active.name == SYSTEM and found.unresolved == "Theme not found: ext; using system"

    warnings = found.add_paths(["ext/themes", "ext/missing.json"], cwd=str(tmp_path))
    assert found.names() == [SYSTEM, "dark", "ext", "light", "mine"]
    assert found.active.name == "ext" and found.active.colors["userMessageBg"] == "#abcdef"
    assert found.unresolved is None and "Theme not found: ext; using system" not in found.warnings
    assert found.get("mine").colors["userMessageBg"] == "#111111"  # the user's came first
    assert warnings == [
        f'Theme name "mine" collision: {tmp_path / "ext/themes/mine.json"} '
        f"(using {tmp_path / 'agent/themes/mine.json'})",
        f"Theme {tmp_path / 'ext/missing.json'}: theme path does not exist",
    ]
    assert found.add_paths(["ext/themes"], cwd=str(tmp_path)) == []  # a file already loaded is skipped


def test_extension_themes_load_with_no_themes_and_leave_a_found_setting_alone(tmp_path):
    theme_file(tmp_path / "agent" / "themes" / "mine.json")
    theme_file(tmp_path / "ext" / "other.json", name="other")
    found = themes(tmp_path, "dark", no_themes=True)
    found.add_paths([str(tmp_path / "ext" / "other.json")], cwd="/")
    assert found.names() == [SYSTEM, "dark", "light", "other"] and found.active.name == "dark"
