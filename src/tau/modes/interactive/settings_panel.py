"""``/settings``: pi 1.6's settings list, for the settings tau has.

Every row is a setting with its current value; Enter (or Space on an empty search) moves it to its
next value, saved at once to the user's settings file, as pi's list does; "Default thinking level
per model" opens a model list, then the model's levels. Typing searches the rows; Esc closes (or
leaves the model list). pi's rows for what tau does not have (the fullscreen mode, transport,
``/share``, Mermaid, telemetry, the editor's padding, ...) are not shown (docs/interactive.md).

The component follows the overlay contract of :mod:`tau.modes.interactive.dialogs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.modes.interactive.dialogs import Component
from tau.modes.interactive.keybindings import select_key
from tau.modes.interactive.keys import parse_key
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["SettingItem", "SettingsPanel", "setting_items"]

_BOLD, _DIM, _INVERSE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[7m", "\x1b[0m"
THINKING_DESCRIPTIONS = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning (~1k tokens)",
    "low": "Light reasoning (~2k tokens)",
    "medium": "Moderate reasoning (~8k tokens)",
    "high": "Deep reasoning (~16k tokens)",
    "xhigh": "Extra-high reasoning (~32k tokens)",
    "max": "Maximum reasoning",
}
CLEAR = "(clear override)"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


@dataclass
class SettingItem:
    """One row: ``values`` cycle on Enter; ``change(value)`` applies and saves one."""

    id: str
    label: str
    description: str
    current: str
    values: list[str] = field(default_factory=list)
    change: Callable[[str], None] = lambda value: None


class SettingsPanel(Component):
    """The list of :class:`SettingItem`; ``done`` gets the labels of the settings changed (in order).

    Args:
        items: The rows.
        models: For "Default thinking level per model": ``[(key, label, levels, override)]`` of the
            models with credentials (``key`` is ``provider/id``).
        set_model_level: ``(key, level or None)`` saves (or clears) a model's override.
        visible: How many rows are shown at once.
    """

    def __init__(
        self,
        items: list[SettingItem],
        models: Callable[[], list[tuple[str, str, list[str], str | None]]] | None = None,
        set_model_level: Callable[[str, str | None], None] | None = None,
        *,
        visible: int = 12,
    ) -> None:
        self.items = items
        self._models = models
        self._set_model_level = set_model_level
        self.query = ""
        self.index = 0
        self.visible = visible
        self.changed: list[str] = []
        self.step = "list"  # "list" | "models" | "levels"
        self.model_query = ""
        self.model_index = 0
        self.level_index = 0
        self.model_rows: list[tuple[str, str, list[str], str | None]] = []

    # -- the main list ---------------------------------------------------------------------------

    def shown(self) -> list[SettingItem]:
        words = self.query.lower().split()
        return [
            item
            for item in self.items
            if all(word in f"{item.label} {item.id} {item.description}".lower() for word in words)
        ]

    def render(self, width: int) -> list[str]:
        if self.step == "models":
            return self._render_models(width)
        if self.step == "levels":
            return self._render_levels(width)
        shown = self.shown()
        self.index = min(self.index, max(0, len(shown) - 1))
        lines = [f"{_BOLD}Settings{_RESET}", _clip(f"search: {self.query}█", width)]
        label_width = max((len(item.label) for item in self.items), default=10) + 2
        start = max(0, min(self.index - self.visible // 2, len(shown) - self.visible))
        for position in range(start, min(start + self.visible, len(shown))):
            item = shown[position]
            text = _clip(f"{item.label.ljust(label_width)}{item.current}", width - 2)
            lines.append(f"{_INVERSE}› {text}{_RESET}" if position == self.index else f"  {text}")
        if not shown:
            lines.append(f"{_DIM}  No matching settings{_RESET}")
        else:
            lines.append(f"{_DIM}{_clip(shown[self.index].description, width)}{_RESET}")
        lines.append(f"{_DIM}{_clip('enter/space change · type to search · ↑↓ · esc close', width)}{_RESET}")
        return lines

    def handle_input(self, data: str) -> None:
        if self.step == "models":
            self._models_input(data)
        elif self.step == "levels":
            self._levels_input(data)
        else:
            self._list_input(data)
        self.request_render()

    def _list_input(self, data: str) -> None:
        key = select_key(parse_key(data))
        shown = self.shown()
        if key in ("escape", "ctrl+c"):
            self.done(self.changed)
        elif key == "enter" or (data == " " and not self.query):
            if shown:
                self._activate(shown[self.index])
        elif key in ("up", "down") and shown:
            self.index = (self.index + (1 if key == "down" else -1)) % len(shown)
        elif key in ("pageup", "pagedown") and shown:
            step = self.visible if key == "pagedown" else -self.visible
            self.index = max(0, min(len(shown) - 1, self.index + step))
        elif key == "backspace":
            self.query = self.query[:-1]
            self.index = 0
        elif not data.startswith("\x1b") and data.isprintable():
            self.query += sanitize_text(data).replace("\n", " ")
            self.index = 0

    def _activate(self, item: SettingItem) -> None:
        if item.id == "model-thinking":
            self.model_rows = self._models() if self._models is not None else []
            self.step, self.model_query, self.model_index = "models", "", 0
            return
        if not item.values:
            return
        position = item.values.index(item.current) if item.current in item.values else -1
        value = item.values[(position + 1) % len(item.values)]
        item.change(value)
        item.current = value
        self.changed.append(f"{item.label}: {value}")

    def handle_paste(self, text: str) -> None:
        cleaned = sanitize_text(text).replace("\n", " ")
        if self.step == "models":
            self.model_query += cleaned
        elif self.step == "list":
            self.query += cleaned
        self.request_render()

    # -- "Default thinking level per model" ------------------------------------------------------

    def _matching_models(self) -> list[tuple[str, str, list[str], str | None]]:
        words = self.model_query.lower().split()
        return [row for row in self.model_rows if all(word in f"{row[0]} {row[1]}".lower() for word in words)]

    def _render_models(self, width: int) -> list[str]:
        rows = self._matching_models()
        lines = [f"{_BOLD}Per-Model Thinking Level{_RESET}", _clip(f"search: {self.model_query}█", width)]
        if not self.model_rows:
            lines.append(f"{_DIM}  No models available: configure an API key first (docs/models.md){_RESET}")
        self.model_index = min(self.model_index, max(0, len(rows) - 1))
        start = max(0, min(self.model_index - self.visible // 2, len(rows) - self.visible))
        for position in range(start, min(start + self.visible, len(rows))):
            key, _, _, override = rows[position]
            text = _clip(f"{key}{f'  ({override})' if override else ''}", width - 2)
            lines.append(f"{_INVERSE}› {text}{_RESET}" if position == self.model_index else f"  {text}")
        lines.append(f"{_DIM}{_clip('Select a model to configure · enter · esc back', width)}{_RESET}")
        return lines

    def _models_input(self, data: str) -> None:
        key = select_key(parse_key(data))
        rows = self._matching_models()
        if key in ("escape", "ctrl+c"):
            self.step = "list"
        elif key == "enter" and rows:
            self.chosen = rows[self.model_index]
            levels = self._levels()
            override = self.chosen[3]
            self.level_index = levels.index(override) if override in levels else 0
            self.step = "levels"
        elif key in ("up", "down") and rows:
            self.model_index = (self.model_index + (1 if key == "down" else -1)) % len(rows)
        elif key == "backspace":
            self.model_query = self.model_query[:-1]
            self.model_index = 0
        elif not data.startswith("\x1b") and data.isprintable():
            self.model_query += sanitize_text(data).replace("\n", " ")
            self.model_index = 0

    def _levels(self) -> list[str]:
        _, _, levels, override = self.chosen
        return [*levels, CLEAR] if override is not None else list(levels)

    def _render_levels(self, width: int) -> list[str]:
        key, _, _, override = self.chosen
        lines = [f"{_BOLD}{_clip(f'Thinking Level for {key}', width)}{_RESET}"]
        for position, level in enumerate(self._levels()):
            mark = "✓ " if level == override else "  "
            about = THINKING_DESCRIPTIONS.get(level, "Revert to the global default")
            text = _clip(f"{mark}{level.ljust(10)}{about}", width - 2)
            lines.append(f"{_INVERSE}› {text}{_RESET}" if position == self.level_index else f"  {text}")
        lines.append(
            f"{_DIM}{_clip('Select default thinking level for this model · enter · esc back', width)}{_RESET}"
        )
        return lines

    def _levels_input(self, data: str) -> None:
        key = select_key(parse_key(data))
        levels = self._levels()
        if key in ("escape", "ctrl+c"):
            self.step = "models"
        elif key in ("up", "down"):
            self.level_index = (self.level_index + (1 if key == "down" else -1)) % len(levels)
        elif key == "enter":
            level = levels[self.level_index]
            model_key = self.chosen[0]
            value = None if level == CLEAR else level
            if self._set_model_level is not None:
                self._set_model_level(model_key, value)
            self.model_rows = [
                (row[0], row[1], row[2], value) if row[0] == model_key else row for row in self.model_rows
            ]
            self.changed.append(f"Thinking level of {model_key}: {value or 'default'}")
            for item in self.items:
                if item.id == "model-thinking":
                    item.current = _overrides_summary(
                        {row[0]: row[3] for row in self.model_rows if row[3] is not None}
                    )
            self.step = "models"


def _overrides_summary(overrides: dict[str, str]) -> str:
    count = len(overrides)
    return "none" if not count else f"{count} override{'s' if count > 1 else ''}"


def _bool(value: Any) -> str:
    return "true" if value else "false"


def setting_items(mode: Any) -> SettingsPanel:
    """The panel for ``mode`` (the interactive mode): pi's rows for the settings tau has, then tau's own."""
    from tau.agent.settings_schema import SCHEMA
    from tau.llm.registry import THINKING_LEVELS, supported_thinking_levels

    session = mode.session
    settings = session.settings

    def save(key: str | list[str]) -> Callable[[str], None]:
        def change(value: str) -> None:
            settings.save_global(key, {"true": True, "false": False}.get(value, value))

        return change

    def quiet(value: str) -> None:
        settings.save_global("quietStartup", {"true": True, "false": False}.get(value, value))

    trust_labels = {"ask": "Ask", "always": "Always trust", "never": "Never trust"}

    def trust(label: str) -> None:
        settings.save_global("defaultProjectTrust", {v: k for k, v in trust_labels.items()}[label])

    def thinking_display(value: str) -> None:
        settings.save_global("hideThinkingBlock", value == "true")
        mode.controller.changed()

    overrides = settings.get("modelThinkingLevels") or {}
    items = [
        SettingItem(
            "autocompact",
            "Auto-compact",
            "Automatically compact context when it gets too large",
            _bool(settings.get("compaction.enabled", True)),
            ["true", "false"],
            lambda value: session.set_auto_compaction(value == "true"),
        ),
        SettingItem(
            "auto-resize-images",
            "Auto-resize images",
            "Resize large images to 2000x2000 max for better model compatibility",
            _bool(settings.get("images.autoResize", True)),
            ["true", "false"],
            save("images.autoResize"),
        ),
        SettingItem(
            "block-images",
            "Block images",
            "Prevent images from being sent to LLM providers",
            _bool(settings.get("images.blockImages", False)),
            ["true", "false"],
            save("images.blockImages"),
        ),
        SettingItem(
            "skill-commands",
            "Skill commands",
            "Register skills as /skill:name commands",
            _bool(settings.get("enableSkillCommands", True)),
            ["true", "false"],
            save("enableSkillCommands"),
        ),
        SettingItem(
            "steering-mode",
            "Steering mode",
            "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for "
            "response. 'all': deliver all at once.",
            str(settings.get("steeringMode", "one-at-a-time")),
            ["one-at-a-time", "all"],
            session.set_steering_mode,
        ),
        SettingItem(
            "follow-up-mode",
            "Follow-up mode",
            "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait "
            "for response. 'all': deliver all at once.",
            str(settings.get("followUpMode", "one-at-a-time")),
            ["one-at-a-time", "all"],
            session.set_follow_up_mode,
        ),
    ]
    if "httpIdleTimeoutMs" in SCHEMA:  # the provider streams' idle limit (issue 26)
        choices = {"30 sec": 30_000, "1 min": 60_000, "2 min": 120_000, "5 min": 300_000, "disabled": 0}
        now = settings.get("httpIdleTimeoutMs", 300_000)
        shown = next(
            (label for label, ms in choices.items() if ms == now or (now == "disabled" and not ms)), ""
        )
        items.append(
            SettingItem(
                "http-idle-timeout",
                "HTTP idle timeout",
                "Maximum idle gap while waiting for HTTP headers or body chunks. Disable for local models "
                "that pause longer than five minutes.",
                shown or f"{now} ms",
                list(choices),
                lambda label: settings.save_global("httpIdleTimeoutMs", choices[label]),
            )
        )
    themes = getattr(mode, "themes", None)
    if themes is not None:
        items.append(
            SettingItem(
                "theme",
                "Theme",
                "Color theme for the interface",
                themes.active.name,
                themes.names(),
                mode.set_theme,
            )
        )
    items += [
        SettingItem(
            "hide-thinking",
            "Hide thinking",
            "Hide thinking blocks in assistant responses",
            _bool(settings.get("hideThinkingBlock", False)),
            ["true", "false"],
            thinking_display,
        ),
        SettingItem(
            "quiet-startup",
            "Quiet startup",
            "Disable verbose printing at startup (header: keep only the startup header)",
            str(settings.get("quietStartup", False)).lower(),
            ["true", "header", "false"],
            quiet,
        ),
        SettingItem(
            "default-project-trust",
            "Default project trust",
            "Fallback behavior when no saved trust decision decides project trust",
            trust_labels.get(str(settings.get("defaultProjectTrust", "ask")), "Ask"),
            list(trust_labels.values()),
            trust,
        ),
        SettingItem(
            "model-thinking",
            "Default thinking level per model",
            "Override the default thinking level for specific models. /thinking changes it in-session.",
            _overrides_summary(overrides if isinstance(overrides, dict) else {}),
        ),
        # tau's own
        SettingItem(
            "default-thinking",
            "Default thinking level",
            "The thinking level of a new session (clamped to what the model supports)",
            str(settings.get("defaultThinkingLevel", "medium")),
            list(THINKING_LEVELS),
            save("defaultThinkingLevel"),
        ),
        SettingItem(
            "cache-friendly-compaction",
            "Cache-friendly compaction",
            "Ask for summaries as the cached prefix plus one instruction (docs/compaction.md)",
            _bool(settings.get("compaction.cacheFriendly", True)),
            ["true", "false"],
            save("compaction.cacheFriendly"),
        ),
        SettingItem(
            "auto-retry",
            "Auto-retry",
            "Retry a request that failed on an overloaded or unreachable provider",
            _bool(settings.get("retry.enabled", True)),
            ["true", "false"],
            lambda value: session.set_auto_retry(value == "true"),
        ),
    ]

    def models() -> list[tuple[str, str, list[str], str | None]]:
        current = settings.get("modelThinkingLevels") or {}
        rows = []
        for model in session.model_registry.get_available():
            key = f"{model.provider}/{model.id}"
            levels = supported_thinking_levels(model)
            rows.append((key, model.name or model.id, list(levels), current.get(key)))
        active = session.model
        if active is not None:
            rows.sort(key=lambda row: row[0] != f"{active.provider}/{active.id}")
        return rows

    def set_model_level(key: str, level: str | None) -> None:
        current = dict(settings.global_settings.get("modelThinkingLevels") or {})
        if level is None:
            current.pop(key, None)
        else:
            current[key] = level
        settings.save_global(["modelThinkingLevels"], current)
        active = session.model
        if active is not None and key == f"{active.provider}/{active.id}":
            # pi: an override for the current model applies now; a cleared one goes back to the default
            session.set_thinking_level(level or str(settings.get("defaultThinkingLevel", "medium")))
            mode.refresh_footer()

    return SettingsPanel(items, models, set_model_level)
