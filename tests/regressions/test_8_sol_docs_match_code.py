"""Issue 8 (Action Fusion and ObservationPack): docs/extensions/sol.md says what the code does.

The settings table (every ``sol`` key and its default), the validation messages, the fused-result
markers and skip texts, the ``then_run`` schema, the placeholder's layout and the banner lines are
checked against the code, so a change on either side shows up here.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from tau.bundled.fusion import markers
from tau.bundled.obspack.observation import observation_of
from tau.bundled.obspack.placeholder import placeholder_for
from tau.bundled.sol_common.settings import SOL_KEYS, SolConfigError, SolSettings, parse_sol_settings
from tau.bundled.sol_common.tui import banner_lines

DOCS = Path(__file__).resolve().parents[2] / "docs" / "extensions"
SOL = (DOCS / "sol.md").read_text(encoding="utf-8")
BOTH = SOL + (DOCS / "sol-reducer-occ.md").read_text(encoding="utf-8")


def settings_table() -> dict[str, str]:
    """``key -> default`` from the table rows of sol.md (a row may name two keys)."""
    table = {}
    for line in SOL.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            for key in re.findall(r"`(\w+)`", cells[0]):
                table[key] = cells[2]
    return table


def test_every_sol_key_is_in_the_table_with_its_default():
    table = settings_table()
    assert set(table) == set(SOL_KEYS)
    defaults = SolSettings()
    attribute = {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): key for key in SOL_KEYS}
    for field in fields(SolSettings):
        value = getattr(defaults, field.name)
        key = attribute[field.name]
        # a reducer route left unset is the cheapest model of the session's provider (issue 27)
        shown = (
            "the cheapest model of the session's provider"
            if value is None
            else f"`{json.dumps(value).removesuffix('.0')}`"
        )
        assert table[key] == shown, (
            f"sol.md gives {table[key]} as the default of {key}; the code has {value!r}"
        )


@pytest.mark.parametrize(
    ("block", "documented"),
    [
        ({"actionFusion": "yes"}, '<path>: sol.actionFusion must be a boolean (true or false), got "yes"'),
        ({"reducerModel": " "}, '<path>: sol.reducerModel must be a non-empty string, got " "'),
        (
            {"cacheWriteReadRatio": -1},
            "<path>: sol.cacheWriteReadRatio must be a finite non-negative number, got -1",
        ),
        (
            {"observationPackHeadBytes": 0},
            "<path>: sol.observationPackHeadBytes must be a positive integer, got 0",
        ),
        ({"trajectoryInspector": True}, '<path>: sol has no key "trajectoryInspector"'),
    ],
)
def test_the_validation_messages_are_the_documented_ones(block, documented):
    with pytest.raises(SolConfigError) as caught:
        parse_sol_settings([("/p/settings.json", block)])
    message = str(caught.value).replace("/p/settings.json", "<path>", 1)
    doc_lines = {re.sub(r"^/\S+settings\.json:", "<path>:", line) for line in SOL.splitlines()}
    assert message.startswith(documented)
    assert message in doc_lines


def test_the_fused_result_texts_are_the_documented_ones():
    assert markers.mutation_failed_text("E").removeprefix("E\n\n") in SOL
    assert markers.skipped_text("target content changed after the fused mutation") in SOL
    assert markers.EMPTY_FAILURE_OUTPUT in SOL
    for marker in (markers.SUCCEEDED, markers.FAILED, markers.SKIPPED):
        assert f"`{marker}" in SOL


def test_the_documented_then_run_schema_is_the_edit_schema():
    block = SOL[SOL.index('"then_run": {') + len('"then_run": ') :]
    documented, _ = json.JSONDecoder().raw_decode(block)
    assert documented == markers.then_run_schema("edit")


def test_the_placeholder_layout_is_the_documented_one():
    text = "".join(f"{n:039d}\n" for n in range(1000))
    message = {"role": "toolResult", "toolCallId": "call_1", "toolName": "bash", "isError": False}
    observation = observation_of({**message, "content": [{"type": "text", "text": text}]})
    assert observation is not None and observation.bytes == 40_000
    produced = placeholder_for(observation).splitlines()
    example = SOL[SOL.index("[large tool result replaced") :]
    example = example[: example.index("```")].replace("obs_3f0c9a1e2b7d4c5a6e8f9012", observation.id)
    example = example.replace("original_lines: 1000", f"original_lines: {observation.lines}")
    documented = [line for line in example.splitlines() if not line.startswith("<")]
    assert [line for line in produced if line in documented] == documented


@pytest.mark.parametrize(
    ("mechanism", "saving"),
    [
        ("Action Fusion", "1 model round-trip avoided"),
        (
            "Observation Pack",
            "9,705 context tokens avoided · bash result obs_… packed (after its first 2 provider requests); "
            'obs_recall {"id":"obs_…"} returns it',
        ),
    ],
)
def test_the_banner_lines_are_the_documented_ones(mechanism, saving):
    if mechanism == "Observation Pack":  # the notice the code writes for one packed result
        from tau.bundled.obspack.pack import packed_notice

        record = {
            "removedTokens": 9705,
            "reason": "after its first 2 provider requests",
            "tool": "bash",
            "id": "obs_…",
        }
        assert packed_notice([record]) == saving
    first, second = banner_lines(mechanism, saving)
    assert f"`{first}` / `{second}`" in " ".join(SOL.split())
