"""Themes as pi 1.6 has them (issue 32's audit: ``--theme``, ``--use-theme``, ``--no-themes``, the
``theme`` and ``themes`` settings): theme files in pi's format, their colours, where they load from.

The colour goldens are what real pi 1.6's own parser (``@earendil-works/pi-tui``'s ``parseColor`` and
``colorToHex``) gave for the same values (2026-12-07); with ``PI_BIN`` set, the live test loads pi's
built-in theme files in tau and compares every colour with pi's conversion of it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tau.modes.themes import SYSTEM, ThemeError, builtin_theme, load_theme_file, load_themes
from tau.modes.themes import resolve_theme_setting as resolve
from tau.modes.themes.colors import ColorError, to_terminal
from tau.modes.themes.tokens import FALLBACKS, TOKENS

PI_COLORS = {
    "okhsl(234 3% 89%)": "#dee0e1",
    "okhsl(295 50% 67%)": "#a798d7",
    "okhsl(20 99% 63%)": "#fe5462",
    "okhsl(233 41% 24%)": "#213b49",
    "oklch(62% 0.1 200)": "#1c989e",
    "oklch(70% 0.4 30)": "#ff6551",  # outside sRGB: mapped along its chroma as pi maps it
    "oklch(0.5 0.05 120)": "#5f6847",
    "#0af": "#00aaff",
    "#00aaff": "#00aaff",
}


@pytest.mark.parametrize(("value", "hex_"), sorted(PI_COLORS.items()))
def test_colours_convert_as_pi_converts_them(value, hex_):
    assert to_terminal(value) == hex_


def test_the_other_colour_forms():
    assert to_terminal(39) == "color(39)"
    assert to_terminal("") == "default"
    for bad in (256, -1, True, "red", "#12", "okhsl(1 2)", 1.5):
        with pytest.raises(ColorError):
            to_terminal(bad)


def theme_document(name: str = "mine", **colors: object) -> dict:
    base = {token: "#101010" for token in TOKENS if token not in FALLBACKS}
    return {"name": name, "vars": {"ink": "#eeeeee"}, "colors": {**base, "text": "ink", **colors}}


def write(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return path


def test_a_theme_file_with_variables_and_fallbacks(tmp_path):
    theme = load_theme_file(write(tmp_path / "mine.json", theme_document(userMessageBg=21)))
    assert theme.name == "mine" and theme.path == str(tmp_path / "mine.json")
    assert theme.fg("text") == "#eeeeee"  # through the variable
    assert theme.bg("userMessageBg") == "on color(21)"
    assert theme.colors["scrollbarThumb"] == "#eeeeee"  # left out: its fallback's colour (text)
    assert theme.appearance == "dark"  # dark backgrounds, no "appearance" given


def test_a_theme_file_that_is_not_a_theme_says_what_is_wrong_in_pis_words(tmp_path):
    document = theme_document()
    del document["colors"]["accent"], document["colors"]["bashMode"]
    document["colors"]["sparkle"] = "#fff"
    with pytest.raises(ThemeError) as caught:
        load_theme_file(write(tmp_path / "a.json", document))
    message = str(caught.value)
    assert message.startswith(f'Invalid theme "{tmp_path / "a.json"}":\n\nMissing required color tokens:\n')
    assert "  - accent\n  - bashMode\n" in message
    assert '/colors: unknown color token "sparkle"' in message

    with pytest.raises(ThemeError, match='theme names cannot contain "/"'):
        load_theme_file(write(tmp_path / "b.json", theme_document("light/dark")))
    with pytest.raises(ThemeError, match="Failed to parse theme"):
        load_theme_file(write(tmp_path / "c.json", "{not json"))
    with pytest.raises(ThemeError, match="Variable reference not found: nothing"):
        load_theme_file(write(tmp_path / "d.json", theme_document(accent="nothing")))
    circular = theme_document(accent="a")
    circular["vars"] = {"a": "b", "b": "a"}
    with pytest.raises(ThemeError, match="Circular variable reference detected"):
        load_theme_file(write(tmp_path / "e.json", circular))


def test_the_builtin_themes():
    from rich.color import Color

    import tau.modes.themes

    for name in ("dark", "light"):
        theme = builtin_theme(name)
        assert theme is not None and theme.appearance == name
        assert set(theme.colors) == set(TOKENS)
        document = json.loads((Path(tau.modes.themes.__file__).parent / f"{name}.json").read_text())
        for token in TOKENS:
            given = document["colors"].get(token)
            if given is None:  # left out: the colour of the token it falls back to
                assert theme.colors[token] == theme.colors[FALLBACKS[token]], (name, token)
                continue
            while isinstance(given, str) and given in document["vars"]:
                given = document["vars"][given]
            assert theme.colors[token] == to_terminal(given), (name, token)
            Color.parse(theme.colors[token])  # a colour the terminal can draw (raises otherwise)
    system = builtin_theme(SYSTEM)
    assert system is not None and system.bg("userMessageBg") == "on grey15"  # the terminal's palette
    assert builtin_theme("nope") is None


def themes(tmp_path: Path, **options: object):
    defaults = {
        "cwd": str(tmp_path / "proj"),
        "agent_dir": str(tmp_path / "agent"),
        "trusted": False,
        "user_settings": {},
        "project_settings": {},
    }
    return load_themes(**{**defaults, **options})


def test_where_themes_load_from_and_which_wins(tmp_path):
    write(tmp_path / "agent" / "themes" / "user.json", theme_document("shared", accent="#111111"))
    write(tmp_path / "proj" / ".tau" / "themes" / "proj.json", theme_document("shared", accent="#222222"))
    write(tmp_path / "proj" / ".tau" / "themes" / "only-project.json", theme_document("project-only"))
    write(tmp_path / "extra" / "x.json", theme_document("extra"))
    write(tmp_path / "agent" / "listed" / "y.json", theme_document("listed"))

    untrusted = themes(tmp_path, paths=["../extra/x.json"], user_settings={"themes": ["listed"]})
    assert sorted(untrusted.themes) == ["extra", "listed", "shared"]  # the project's need trust
    assert untrusted.themes["shared"].fg("accent") == "#111111"
    assert untrusted.names()[:3] == [SYSTEM, "dark", "extra"]

    trusted = themes(tmp_path, trusted=True)
    assert trusted.themes["shared"].fg("accent") == "#222222"  # the project's first, as pi
    assert any('Theme name "shared" collision' in line for line in trusted.warnings)

    only_cli = themes(tmp_path, trusted=True, no_themes=True, paths=["../extra"])
    assert sorted(only_cli.themes) == ["extra"]  # --no-themes keeps --theme paths


def test_the_theme_setting_and_problems_are_reported(tmp_path):
    write(tmp_path / "agent" / "themes" / "broken.json", "{")
    chosen = themes(tmp_path, setting="light", paths=["missing.json"])
    assert chosen.active.name == "light"
    assert any(
        line.startswith(f"Theme {tmp_path / 'agent' / 'themes' / 'broken.json'}: Failed to parse")
        for line in chosen.warnings
    )
    assert f"Theme {tmp_path / 'proj' / 'missing.json'}: theme path does not exist" in chosen.warnings
    unknown = themes(tmp_path, setting="neon")
    assert unknown.active.name == SYSTEM and "Theme not found: neon; using system" in unknown.warnings
    assert themes(tmp_path).active.name == SYSTEM  # the default


def test_light_dark_pairs_follow_the_terminal_background():
    assert resolve("light/dark", {"COLORFGBG": "15;0"}) == "dark"
    assert resolve("light/dark", {"COLORFGBG": "0;15"}) == "light"
    assert resolve("light/dark", {}) == "dark"  # unknown: dark, as pi
    assert resolve("a/b/c", {}) == SYSTEM and resolve(None, {}) == SYSTEM and resolve("dark", {}) == "dark"


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_pis_own_theme_files_load_with_pis_colours():
    """pi's built-in dark.json and light.json (read from the installed package, not copied here) load
    in tau unchanged, each colour what pi's own parser makes of it."""
    bin_dir = Path(os.environ["PI_BIN"]).parent  # <prefix>/node_modules/.bin
    prefix = bin_dir.parent.parent
    theme_dir = (
        bin_dir.parent / "@earendil-works" / "pi-coding-agent" / "dist" / "modes" / "interactive" / "theme"
    )
    code = (
        'import * as t from "@earendil-works/pi-tui";'
        "const values = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(values.map((v) => t.colorToHex(t.parseColor(v)))));"
    )
    for name in ("dark", "light"):
        theme = load_theme_file(theme_dir / f"{name}.json")
        document = json.loads((theme_dir / f"{name}.json").read_text())
        variables = document.get("vars", {})
        raw = {k: variables.get(v, v) if isinstance(v, str) else v for k, v in document["colors"].items()}
        raw = {k: v for k, v in raw.items() if v != ""}
        done = subprocess.run(
            [str(bin_dir / "node"), "--input-type=module", "-e", code, json.dumps(list(raw.values()))],
            cwd=prefix,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert {k: theme.colors[k] for k in raw} == dict(zip(raw, json.loads(done.stdout), strict=True))


def test_extensions_see_the_themes_through_ctx_ui(tmp_path, monkeypatch):
    """pi's ``ctx.ui.getAllThemes()``, ``getTheme(name)``, ``setTheme(name)`` and ``theme.fg(token, text)``."""
    from tau.modes.interactive.model import ChatController
    from tau.modes.interactive.overlay import OverlayHost
    from tau.modes.interactive.ui import InteractiveUI

    monkeypatch.delenv("COLORTERM", raising=False)
    write(tmp_path / "agent" / "themes" / "mine.json", theme_document("mine", accent=196))
    found = themes(tmp_path)
    switched: list[str] = []

    def on_theme(name: str) -> dict:
        switched.append(name)
        found.use(name)
        return {"success": True}

    ui = InteractiveUI(ChatController(), OverlayHost(lambda: None), themes=found, on_theme=on_theme)
    listed = ui.get_all_themes()
    assert [item["name"] for item in listed] == [SYSTEM, "dark", "light", "mine"]
    assert listed[3]["path"] == str(tmp_path / "agent" / "themes" / "mine.json")
    assert ui.get_theme("mine").fg("accent") == "color(196)" and ui.get_theme("nope") is None
    assert ui.set_theme(ui.get_theme("mine")) == {"success": True} and switched == ["mine"]
    assert ui.theme.fg("accent", "hot") == "\x1b[38;5;196mhot\x1b[0m"
