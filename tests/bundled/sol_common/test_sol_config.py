"""The "sol" settings block: defaults, merging and SoL-Pi's validation messages (extensions.md §5.1)."""

from __future__ import annotations

import json
import math
import re

import pytest

from tau.bundled.sol_common import SolConfigError, SolSettings, load_sol_settings, parse_sol_settings


def test_defaults_are_taus_profile():
    assert parse_sol_settings([]) == SolSettings(
        action_fusion=True,
        observation_pack=True,
        evidence_preserving_reducer=False,
        online_context_compact=False,
        reducer_provider=None,
        reducer_model=None,
        cache_write_read_ratio=12.5,
        observation_pack_head_bytes=512,
        observation_pack_tail_bytes=512,
    )


def test_later_sources_override_key_by_key():
    settings = parse_sol_settings(
        [
            ("/home/u/.tau/agent/settings.json", {"actionFusion": False, "reducerModel": " luna "}),
            ("/p/.tau/settings.json", {"actionFusion": True, "cacheWriteReadRatio": 3.25}),
        ]
    )
    assert settings.action_fusion is True and settings.reducer_model == "luna"
    assert settings.cache_write_read_ratio == 3.25 and settings.observation_pack is True


@pytest.mark.parametrize("ratio", [0, 3.25, 12.5])
def test_ratios_accepted(ratio):
    assert parse_sol_settings([("s", {"cacheWriteReadRatio": ratio})]).cache_write_read_ratio == ratio


OFF = "; the context-economy mechanisms (sol) are off"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            {"cacheWriteReadRatio": None},
            "/x/settings.json: sol.cacheWriteReadRatio must be a finite non-negative number, got null",
        ),
        (
            {"cacheWriteReadRatio": "12.5"},
            'cacheWriteReadRatio must be a finite non-negative number, got "12.5"',
        ),
        ({"cacheWriteReadRatio": -1}, "cacheWriteReadRatio must be a finite non-negative number, got -1"),
        ({"cacheWriteReadRatio": math.inf}, "cacheWriteReadRatio must be a finite non-negative number"),
        ({"cacheWriteReadRatio": True}, "cacheWriteReadRatio must be a finite non-negative number, got true"),
        (
            {"actionFusion": "yes"},
            '/x/settings.json: sol.actionFusion must be a boolean (true or false), got "yes"',
        ),
        ({"observationPack": 1}, "sol.observationPack must be a boolean (true or false), got 1"),
        ({"evidencePreservingReducer": None}, "evidencePreservingReducer must be a boolean"),
        ({"onlineContextCompact": "false"}, "onlineContextCompact must be a boolean"),
        (
            {"reducerProvider": "  "},
            '/x/settings.json: sol.reducerProvider must be a non-empty string, got "  "',
        ),
        ({"reducerModel": 5}, "sol.reducerModel must be a non-empty string, got 5"),
        ({"observationPackHeadBytes": 0}, "sol.observationPackHeadBytes must be a positive integer, got 0"),
        ({"observationPackTailBytes": 1.5}, "observationPackTailBytes must be a positive integer"),
        ({"trajectoryInspector": True}, '/x/settings.json: sol has no key "trajectoryInspector" (known: '),
        ({"version": 1}, 'sol has no key "version"'),
        ([], "/x/settings.json: sol must be an object, got []"),
        (True, "sol must be an object, got true"),
    ],
)
def test_invalid_values_name_the_file_the_key_and_the_type(block, message):
    with pytest.raises(SolConfigError) as info:
        parse_sol_settings([("/x/settings.json", block)])
    text = str(info.value)
    assert message in text and text.endswith(OFF) and "\n" not in text
    assert "SoL-Pi" not in text  # issue 19: a user-facing name, not the internal project's


class Ctx:
    def __init__(self, cwd, trusted=False):
        self.cwd = str(cwd)
        self.trusted = trusted

    def is_project_trusted(self):
        return self.trusted


class Tau:
    def __init__(self, settings):
        self.settings = settings

    def get_settings(self):
        return self.settings


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_file_holding_a_bad_value_is_named(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    monkeypatch.setenv("TAU_AGENT_DIR", str(agent))
    project = tmp_path / "project"
    write(project / ".tau" / "settings.json", {"sol": {"actionFusion": "no"}})
    # an untrusted project is never read
    assert load_sol_settings(Tau({}), Ctx(project)).action_fusion is True
    with pytest.raises(
        SolConfigError,
        match=re.escape(f"{project / '.tau' / 'settings.json'}: sol.actionFusion must be a boolean"),
    ):
        load_sol_settings(Tau({"sol": {"actionFusion": "no"}}), Ctx(project, trusted=True))
    write(agent / "settings.json", {"sol": {"unknownThing": 1}})
    with pytest.raises(SolConfigError, match='sol has no key "unknownThing"'):
        load_sol_settings(Tau({}), Ctx(project))


def test_effective_values_come_from_the_session_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))
    settings = load_sol_settings(Tau({"sol": {"observationPack": False}}), Ctx(tmp_path))
    assert settings.observation_pack is False and settings.action_fusion is True
    with pytest.raises(SolConfigError, match=r"^settings\.json: sol\.observationPack must be a boolean"):
        load_sol_settings(Tau({"sol": {"observationPack": "off"}}), Ctx(tmp_path))
