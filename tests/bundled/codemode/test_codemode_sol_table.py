"""Seed 003's codemode table, row by row, in ``codemode.mode`` ``on`` and ``only``.

| mechanism | on | only |
|---|---|---|
| Action Fusion | fused edit/write declared and callable from scripts | callable from scripts only |
| ObservationPack | large ``codemode`` results packed; ``obs_recall`` declared and callable | packed; ``obs_recall`` listed in codemode and callable |
| Reducer | direct bash reduced; script calls skipped | no effect, no model call |
| Online Context Compact | ``update_plan`` declared, not callable from scripts | the same |
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

import pytest
from codemode_harness import Harness, code_call, text_of

MODES = ["on", "only"]
BUILTINS = {"read", "bash", "edit", "write"}


def run(harness: Harness, *prompts: str) -> None:
    async def scenario() -> None:
        await harness.start()
        for prompt in prompts:
            await harness.session.prompt(prompt)

    asyncio.run(asyncio.wait_for(scenario(), 180))


def codemode_result(harness: Harness, index: int = 0) -> str:
    return text_of(harness.tool_results("codemode")[index])


# -- Action Fusion ----------------------------------------------------------------------------------

FUSED_SCRIPT = """\
const ok = await tools.edit({ path: "calc.py", edits: [{ oldText: "a - b", newText: "a + b" }], then_run: { command: "echo checked" } });
let failed;
try {
  await tools.write({ path: "new.txt", content: "made\\n", then_run: { command: "echo broken; exit 3" } });
} catch (error) {
  failed = error.message;
}
text(ok);
text(failed);
"""


@pytest.mark.parametrize("mode", MODES)
def test_fused_edit_and_write_are_callable_from_scripts(tmp_path, mode):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    harness = Harness([code_call(FUSED_SCRIPT), {"text": "done"}], tmp_path, {"codemode": {"mode": mode}})
    run(harness, "fix it")
    declared = harness.requests[0]["tools"]
    codemode = declared["codemode"]["description"]
    if mode == "on":
        # declared to the model, with then_run, and told how a script calls them
        assert "then_run" in declared["edit"]["parameters"]["properties"]
        assert "Codemode: `tools.edit(args)` resolves to a string." in declared["edit"]["description"]
        assert "### `edit`" not in codemode
    else:
        # hidden from the model, listed in codemode with then_run in their script declarations
        assert not BUILTINS & set(declared)
        section = codemode.split("### `edit`", 1)[1].split("### `", 1)[0]
        assert "then_run?:" in section
    output = codemode_result(harness)
    first, second = output.split("==> text 2/2 <==")
    assert "[then_run:succeeded]" in first and "checked" in first
    # a failed command rejects with the combined text; the mutation is kept
    assert "[then_run:failed]" in second and "broken" in second
    assert (tmp_path / "calc.py").read_text().endswith("a + b\n")
    assert (tmp_path / "new.txt").read_text() == "made\n"
    assert [call["status"] for call in harness.tool_results("codemode")[0]["details"]["calls"]] == [
        "ok",
        "error",
    ]


# -- ObservationPack --------------------------------------------------------------------------------

BIG_SCRIPT = 'for (let n = 0; n < 600; n++) text("row " + String(n).padStart(4, "0") + " " + "y".repeat(30));'


def recall_step(request: dict[str, Any]) -> dict[str, Any]:
    texts = [text_of(m) for m in request["messages"] if m["role"] == "toolResult"]
    obs_id = re.search(r"^id: (obs_[a-f0-9]{24})$", texts[0], re.MULTILINE).group(1)
    code = (
        f'const page = await tools.obs_recall({{ id: "{obs_id}", offset: 0 }});\nreturn page.slice(0, 4000);'
    )
    return code_call(code)


@pytest.mark.parametrize("mode", MODES)
def test_large_codemode_results_are_packed_and_recalled_from_a_script(tmp_path, mode):
    steps = [
        code_call(BIG_SCRIPT),
        {"text": "one"},
        {"text": "two"},
        {"text": "three"},
        {"factory": recall_step},
        {"text": "recalled"},
    ]
    harness = Harness(steps, tmp_path, {"codemode": {"mode": mode}})
    run(harness, "print rows", "next", "again", "recall it")
    declared = harness.requests[0]["tools"]
    if mode == "on":
        assert "obs_recall" in declared
        assert "### `obs_recall`" not in declared["codemode"]["description"]
    else:
        assert "obs_recall" not in declared
        assert "### `obs_recall`" in declared["codemode"]["description"]
    # the result went in full to two requests, then as a placeholder naming the codemode tool
    carried = [
        [text_of(m) for m in request["messages"] if m["role"] == "toolResult"][:1]
        for request in harness.requests[1:]
    ]
    assert "row 0599" in carried[0][0] and "row 0599" in carried[1][0]
    assert "tool: codemode" in carried[2][0] and "row 0300" not in carried[2][0]
    recalled = codemode_result(harness, 1)
    assert "row 0000 " + "y" * 30 in recalled
    (nested,) = harness.nested_ends()
    assert nested["toolName"] == "obs_recall" and nested["isError"] is False


# -- Evidence-Preserving Reducer --------------------------------------------------------------------

FAILING_TEST = """\
def test_big_log():
    for n in range(700):
        print(f"line {n:04d} " + "x" * 35)
    assert 41 == 42
"""
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider test_big.py"
REDUCER_PREFIX = "You are a lossless test/build output reducer."


@pytest.mark.parametrize("mode", MODES)
def test_the_reducer_skips_script_calls_and_never_reduces_codemode(tmp_path, mode):
    (tmp_path / "test_big.py").write_text(FAILING_TEST)
    script = (
        f"const r = await tools.bash({{ command: {json.dumps(PYTEST)} }});\n"
        'text("exit " + r.exit_code);\nreturn r.output;'
    )
    reducer_calls: list[dict[str, Any]] = []

    def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
        if request["systemPrompt"].startswith(REDUCER_PREFIX):
            reducer_calls.append(request)
            return [{"text": "not a receipt"}, {"factory": respond}]
        last = request["messages"][-1]
        prompt = text_of(last) if last["role"] == "user" else ""
        if prompt == "script":
            return [code_call(script), {"factory": respond}]
        if prompt == "direct":
            return [{"bash": PYTEST}, {"factory": respond}]
        return [{"text": "ok"}, {"factory": respond}]

    settings = {"codemode": {"mode": mode}, "sol": {"evidencePreservingReducer": True}}
    harness = Harness([{"factory": respond}], tmp_path, settings)
    run(harness, "script")
    # the script got pi's own bash result: a non-zero exit resolves, with the whole log
    output = codemode_result(harness)
    assert "exit 1" in output and "line 0699 " in output and "assert 41 == 42" in output
    assert "source_sha256=" not in output
    assert reducer_calls == []  # neither the nested bash nor the codemode result reached the reducer
    if mode == "on":
        run_direct = Harness([{"factory": respond}], tmp_path / "direct", settings)
        (tmp_path / "direct").mkdir()
        (tmp_path / "direct" / "test_big.py").write_text(FAILING_TEST)
        run(run_direct, "direct")
        # a direct bash result is still a candidate: its log became a receipt (an extractor's, or
        # the reducer model's)
        (direct,) = run_direct.tool_results("bash")
        assert "source_sha256=" in text_of(direct) and "line 0350 " not in text_of(direct)


# -- Online Context Compact -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("plan_tool", ["update_plan", "todo"])
def test_the_plan_tool_stays_model_only(tmp_path, mode, plan_tool):
    """OCC's plan tool (``update_plan``, or ``todo`` when the todo extension is loaded, as by default)
    is declared to the model in both modes and is not callable from scripts."""
    script = (
        f'text(ALL_TOOLS.map((tool) => tool.name).includes("{plan_tool}"));\n'
        f"try {{ tools.{plan_tool} }} catch (error) {{ text(error.message) }}"
    )
    settings: dict[str, Any] = {"codemode": {"mode": mode}, "sol": {"onlineContextCompact": True}}
    if plan_tool == "update_plan":
        settings["disabledExtensions"] = ["todo", "todo-loop"]
    harness = Harness([code_call(script), {"text": "done"}], tmp_path, settings)
    run(harness, "plan")
    declared = harness.requests[0]["tools"]
    assert plan_tool in declared  # the model calls it directly in both modes
    assert f"### `{plan_tool}`" not in declared["codemode"]["description"]
    output = codemode_result(harness)
    assert "==> text 1/2 <==\nfalse" in output
    assert f"tools.{plan_tool} does not exist." in output
