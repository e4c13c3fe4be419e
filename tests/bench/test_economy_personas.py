"""The economy benchmark's scripted models (``bench/economy``): what each persona does with what it
can see, whether a task's check on the workspace tells a finished run from an unfinished one, and
how the table picks the worst persona."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "economy"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import policy  # noqa: E402
import run  # noqa: E402
import tasks  # noqa: E402

OBS = "obs_" + "ab12" * 6
TOOLS = [{"name": name, "parameters": {"properties": {}}} for name in ("read", "bash", "edit", "obs_recall")]


class Chat:
    """A request built turn by turn, as the faux provider hands it to a factory."""

    def __init__(self, prompt: str, tools: list[dict] | None = None) -> None:
        self.messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        self.tools = TOOLS if tools is None else tools
        self.calls = 0

    def call(self, name: str, args: dict, result: str | None, *, error: bool = False, text: str = "") -> Chat:
        self.calls += 1
        call_id = f"c{self.calls}"
        content = [{"type": "text", "text": text}] if text else []
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        self.messages.append({"role": "assistant", "content": content})
        if result is not None:
            self.messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": result}],
                    "isError": error,
                }
            )
        return self

    def bash(self, command: str, output: str, *, error: bool = False) -> Chat:
        return self.call("bash", {"command": command}, output, error=error)

    def user(self, text: str) -> Chat:
        self.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        return self

    def view(self, persona: str = "recall") -> policy.View:
        return policy.View({"systemPrompt": "", "messages": self.messages, "tools": self.tools}, persona)


def packed(first: str = "ok", obs: str = OBS) -> str:
    """A stale placeholder as ObservationPack sends it: no excerpt beyond its first and last line."""
    return f'[tool result packed: old; obs_recall {{"id":"{obs}"}} returns it]\nbash · 900 bytes · 30 lines\nfirst: {first}'


# -- the personas ---------------------------------------------------------------------------------


def test_a_hidden_result_is_recalled_by_recall_and_refetched_by_rerun():
    chat = Chat("go").bash("cat build.log", packed())
    refetch = {"bash": "cat build.log"}
    call = chat.view().calls[0]
    assert chat.view("recall").bring_back(call, "ERROR", refetch) == policy.recall_step(OBS, query="ERROR")
    assert chat.view("early-facts").bring_back(call, "ERROR", refetch)["tool"] == "obs_recall"
    assert chat.view("rerun").bring_back(call, "ERROR", refetch) == refetch
    # A placeholder already recalled once is not recalled again: the model reads or runs again.
    chat.call("obs_recall", {"id": OBS, "query": "ERROR"}, '{"matches":[]}')
    assert chat.view("recall").bring_back(call, "ERROR", refetch) == refetch


def test_an_unknown_persona_is_refused():
    with pytest.raises(ValueError, match="unknown persona"):
        Chat("go").view("lazy")


def test_a_search_recall_is_read_as_its_matching_lines():
    found = json.dumps({"matches": [{"context": 'TRUE_WORDS = ("true", "on", "1")'}], "eof": True})
    assert policy.readable(found) == 'TRUE_WORDS = ("true", "on", "1")'
    assert policy.readable("[obs_recall id=x]\npage text") == "[obs_recall id=x]\npage text"


def fix_the_tests_after_the_log_was_packed() -> Chat:
    return Chat("fix it").bash("python3 -m unittest", packed("EEE..F"), error=True)


def test_fix_the_tests_finds_the_hidden_failures_by_recall_or_by_running_the_suite_again():
    decide = tasks.load("fix-the-tests").decide
    assert decide(fix_the_tests_after_the_log_was_packed().view("recall")) == policy.recall_step(
        OBS, query="FAIL:"
    )
    step = decide(fix_the_tests_after_the_log_was_packed().view("rerun"))
    assert step["bash"] == "python3 -m unittest"


def test_fix_the_tests_early_facts_reads_every_module_the_first_run_names_before_fixing():
    log = "FAIL: test_scale_00 (tests.test_ops.TestScale.test_scale_00)\nFAIL: test_mean_00 (tests.test_stats.TestMean.test_mean_00)\n"
    chat = Chat("fix it").bash("python3 -m unittest", log, error=True)
    chat.call("read", {"path": "calc/ops.py"}, "def scale(value, factor):\n    return value + factor\n")
    decide = tasks.load("fix-the-tests").decide
    assert decide(chat.view("early-facts"))["args"] == {"path": "calc/stats.py"}
    # The recall persona fixes what it has read first.
    assert decide(chat.view("recall"))["tool"] == "edit"


def test_debug_library_early_facts_reads_at_the_line_its_index_gave():
    library = tasks.load("debug-library")
    index = 'inikit/values.py:3:TRUE_WORDS = ("true", "on", "1")\ninikit/values.py:56:def parse_bool(text):\n'
    chat = Chat("debug").bash("python3 -m unittest", "ERROR: test_yes\nFAILED (errors=1)", error=True)
    chat.bash(library.decide(chat.view("early-facts"))["bash"], index)
    step = library.decide(chat.view("early-facts"))
    assert step["args"] == {"path": "inikit/values.py", "offset": 56, "limit": 25}
    # The others explore with a grep of the two functions and read whole modules.
    assert library.decide(chat.view("recall"))["bash"].startswith("grep -rn 'parse_bool")


def test_debug_library_takes_the_failing_tests_from_a_note_or_from_the_log_again():
    import tasks.debug_library as module

    library = tasks.load("debug-library")

    def explored(note: str) -> Chat:
        chat = Chat("debug").bash("python3 -m unittest", packed("..E..F"), error=True)
        for kind, argument in module.EXPLORE[1:]:
            if kind == "read":
                chat.call("read", {"path": argument}, "x = 1", text=note)
            else:
                chat.call("bash", {"command": argument}, "1 file", text=note)
        return chat

    noted = explored("Failing: test_yes (parse_bool), test_override_wins (deep_merge). ")
    assert library.decide(noted.view("recall"))["tool"] == "read"  # knows what fails: reads the module again
    step = library.decide(explored("").view("recall"))
    assert step == policy.recall_step(OBS, query="test_")  # does not know: recalls the packed log


def test_six_prompts_blocks_the_loop_when_the_next_task_waits_for_the_user():
    six = tasks.load("six-prompts")
    tools = [*TOOLS, {"name": "todo_loop_block", "parameters": {"properties": {}}}]
    chat = Chat(six.prompts[0], tools).user("Continue working: your todo list still has unfinished tasks.")
    assert six.decide(chat.view()) == {
        "tool": "todo_loop_block",
        "args": {"reason": "The next task waits for your next message."},
    }
    chat.call("todo_loop_block", {"reason": "x"}, "blocked")
    assert six.decide(chat.view()) == {"text": "The next task waits for your next message."}


def test_plan_marathon_early_facts_recalls_a_finding_it_never_wrote_down():
    import tasks.plan_marathon as module

    marathon = tasks.load("plan-marathon")
    chat = Chat(marathon.prompts[0], [t for t in TOOLS if t["name"] != "todo"])
    for part in range(1, 7):
        steps = module._steps(part)
        for step in steps[:-1]:
            chat.bash(step, "ok")
        # Part 1's finding is packed now; every other one is still in view.
        shown = (
            packed("logs/build-05.log:761:[build 5] INFO")
            if part == 1
            else f"FINDING owner tag {module.FINDINGS[part - 1]}"
        )
        chat.call("bash", {"command": steps[-1]}, shown, text=f"Part {part} done.")
    assert marathon.decide(chat.view("early-facts")) == policy.recall_step(OBS, query="FINDING")
    assert marathon.decide(chat.view("recall"))["bash"] == module._steps(1)[-1]


# -- the checks on the workspace ------------------------------------------------------------------


@pytest.mark.parametrize("name", tasks.NAMES)
def test_an_untouched_workspace_or_a_wrong_answer_is_not_a_finished_task(tmp_path, name):
    task = tasks.load(name)
    task.setup(tmp_path)
    assert task.check(tmp_path, "Giving up: too many requests.") is not None


def test_fix_the_tests_is_finished_when_the_suite_passes(tmp_path):
    import tasks.fix_the_tests as module

    task = tasks.load("fix-the-tests")
    task.setup(tmp_path)
    answer = "The suite passes now. Fixed: calc/ops.py."
    assert "the tests fail" in task.check(tmp_path, answer)
    for _, path, old, new, _ in module.BUGS:
        file = tmp_path / path
        file.write_text(file.read_text().replace(old, new))
    assert task.check(tmp_path, answer) is None


def test_debug_library_is_not_finished_when_its_answer_names_a_wrong_line(tmp_path):
    import tasks.debug_library as module

    task = tasks.load("debug-library")
    task.setup(tmp_path)
    for _, _, path, old, new in module.BUGS:
        file = tmp_path / path
        file.write_text(file.read_text().replace(old, new))
    assert task.check(tmp_path, "Fixed parse_bool() and deep_merge(); the tests pass.") is None
    right = task.check(tmp_path, "Fixed parse_bool() at inikit/values.py:56; the tests pass.")
    wrong = task.check(tmp_path, "Fixed parse_bool() at inikit/values.py:57; the tests pass.")
    assert right is None and "wrong line" in wrong


def test_ci_jobs_needs_both_fixes_and_the_flaky_test(tmp_path):
    import tasks.ci_jobs as module

    task = tasks.load("ci-jobs")
    task.setup(tmp_path)
    answer = f"All three jobs pass: fixed src/prices.py:27 (pytest) and src/lib.rs:14 (cargo); jest's {module.FLAKY} …"
    assert "not fixed" in task.check(tmp_path, answer)
    for fix in module.FIXES:
        file = tmp_path / fix[1]
        file.write_text(file.read_text().replace(fix[3], fix[4]))
    assert task.check(tmp_path, answer) is None
    assert "flaky" in task.check(tmp_path, "All three jobs pass.")


# -- the table ------------------------------------------------------------------------------------


def result(
    task: str, persona: str, profile: str, cost: float, *, finished: bool = True, first: int = 1000
) -> dict:
    return {
        "task": task,
        "persona": persona,
        "profile": profile,
        "cost_units": cost,
        "reducer_cost_units": 0,
        "finished": finished,
        "first_prompt_tokens": first,
    }


def test_ratios_are_to_the_same_personas_none_run():
    results = run.with_ratios(
        [
            result("t", "recall", "none", 100),
            result("t", "recall", "default", 90),
            result("t", "rerun", "none", 200),
            result("t", "rerun", "todo", 250),
            result("t", "rerun", "default", 220),
        ],
        1 / 3,
    )
    assert [r["ratio_vs_none"] for r in results] == [1.0, 0.9, 1.0, 1.25, 1.1]
    assert [r["ratio_vs_todo"] for r in results] == [None, None, 0.8, 1.0, 0.88]


def test_the_worst_persona_is_a_failed_run_first_then_the_highest_ratio():
    results = run.with_ratios(
        [
            result("t", "recall", "none", 100),
            result("t", "recall", "default", 120),
            result("t", "rerun", "none", 100),
            result("t", "rerun", "default", 90, finished=False),
            result("t", "early-facts", "none", 100),
            result("t", "early-facts", "default", 110),
        ],
        1 / 3,
    )
    rows = {row["profile"]: row for row in run.worst(results)}
    assert rows["default"]["persona"] == "rerun" and rows["default"]["failed"] == ["rerun"]
    results[3]["finished"] = True
    rows = {row["profile"]: row for row in run.worst(results)}
    assert rows["default"]["persona"] == "recall" and rows["default"]["failed"] == []


def test_the_fixed_overhead_is_the_first_prompt_over_none():
    added = run.added_per_request(
        [
            result("a", "recall", "none", 1, first=1000),
            result("a", "recall", "default", 1, first=2210),
            result("b", "recall", "none", 1, first=1500),
            result("b", "recall", "default", 1, first=2711),
        ]
    )
    assert added == {"default": (1210, 1211)}
