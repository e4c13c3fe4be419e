"""three-prompts: three human prompts in one session (``tau -p P1 P2 P3``).

1. run the tests (a 25 KB failing log) and compare with a 30 KB CI log;
2. fix the tokenizer bug (read a 20 KB module, edit, verify);
3. add a regression test and run the whole suite.
Each prompt's work is read from the calls made since that prompt.

Personas: ``rerun`` reads a file again instead of recalling it; ``early-facts`` also reads the
tokenizer and the test module while answering the first prompt, and makes the edits of prompts 2
and 3 from those early reads (found again when hidden). Finished: the tokenizer is fixed, the
regression test exists, and the suite passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policy import View, text_of

from tasks.base import Task, run_tests, write_files

TEST = "python3 -m unittest"
BUG_OLD = "    return [part for part in text.split(',') if part]\n"
BUG_NEW = "    return [part.strip() for part in text.split(',') if part.strip()]\n"
LAST_TEST = "        self.assertEqual(tokenize('z'), ['z'])\n"
NEW_TEST = LAST_TEST + "\n    def test_empty_input(self):\n        self.assertEqual(tokenize(''), [])\n"
PROMPTS = (
    "Run the test suite and compare its failures with the CI log in logs/ci.log. What fails?",
    "Fix the bug in parser/tokenizer.py that breaks those tests, and verify the fix.",
    "Add a regression test for empty input to tests/test_tokenizer.py, then run the whole suite.",
)


def setup(repo: Path) -> None:
    helpers = "".join(
        f"def token_rule_{n:03d}(token):\n"
        f'    """Rule {n}: tokens of class {n % 9} are normalised before parsing."""\n'
        f"    return token if len(token) != {n % 11} else token.upper()\n\n\n"
        for n in range(130)
    )
    tests = [
        "import unittest\n\nfrom parser.tokenizer import tokenize\n\n\nclass TestTokenize(unittest.TestCase):\n"
    ]
    for n in range(75):
        words = [f"w{n}", f"x{n}", f"y{n}"]
        tests.append(
            f"    def test_spaces_{n:02d}(self):\n"
            f"        self.assertEqual(tokenize({' , '.join(words)!r}), {words!r})\n\n"
        )
    tests.append(f"    def test_single(self):\n{LAST_TEST}")
    ci = "".join(
        f"[ci] {'FAIL' if n % 17 == 3 else 'ok  '} tests.test_tokenizer.TestTokenize.test_spaces_{n % 75:02d} "
        f"run {n} on worker-{n % 4}\n"
        for n in range(400)
    )
    write_files(
        repo,
        {
            "parser/__init__.py": "",
            "parser/tokenizer.py": '"""Comma-separated tokens."""\n\n\ndef tokenize(text):\n'
            '    """The non-empty, stripped tokens of ``text``."""\n' + BUG_OLD + "\n\n" + helpers,
            "tests/__init__.py": "",
            "tests/test_tokenizer.py": "".join(tests),
            "logs/ci.log": ci,
        },
    )


def _since_prompt(view: View) -> tuple[int, list[Any]]:
    """Which prompt is being answered (0-2), and the calls made since it."""
    human = [i for i, m in enumerate(view.messages) if m.get("role") == "user" and text_of(m) in PROMPTS]
    start = human[-1] if human else 0
    current = PROMPTS.index(text_of(view.messages[start])) if human else 0
    return current, [call for call in view.calls if call.position > start]


def _visible(view: View, path: str, line: str) -> dict[str, Any] | None:
    """None when ``line`` of ``path`` is visible, else the step that brings it back."""
    for call in view.calls:
        shown = call.shown()
        if (
            shown is not None
            and shown.kind == "full"
            and call.name in ("read", "obs_recall")
            and line in shown.text
        ):
            return None
    return view.bring_back(
        view.latest_read(path),
        line.strip(),
        {"text": f"Reading {path}.", "tool": "read", "args": {"path": path}},
    )


def _edit_and_check(view: View, calls: list[Any], path: str, old: str, new: str, done: str) -> dict[str, Any]:
    edits = [c for c in calls if c.name == "edit"]
    if not edits:
        step = _visible(view, path, old)
        if step is not None:
            return step
        args: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": new}]}
        if view.fusion:
            args["then_run"] = {"command": TEST, "timeout": 120}
        return {"text": f"Editing {path}.", "tool": "edit", "args": args}
    runs = [c for c in calls if c.command == TEST and c.position >= edits[-1].position]
    if not runs:
        return {"text": "Running the suite.", "bash": TEST}
    return {"text": done if not runs[-1].failed else "The suite still fails."}


def decide(view: View) -> dict[str, Any]:
    current, calls = _since_prompt(view)
    if current == 0:
        if not [c for c in calls if c.command == TEST]:
            return {"text": "Running the tests.", "bash": TEST}
        if not [c for c in calls if c.name == "read"]:
            return {"text": "Reading the CI log.", "tool": "read", "args": {"path": "logs/ci.log"}}
        read = {c.args.get("path") for c in calls if c.name == "read"}
        for path in ("parser/tokenizer.py", "tests/test_tokenizer.py") if view.early else ():
            if path not in read:
                return {"text": f"Reading {path} too.", "tool": "read", "args": {"path": path}}
        return {"text": "TestTokenize fails on inputs with spaces around commas, as on CI (test_spaces_*)."}
    if current == 1:
        return _edit_and_check(
            view,
            calls,
            "parser/tokenizer.py",
            BUG_OLD,
            BUG_NEW,
            "Fixed: tokenize() now strips each token; the suite passes.",
        )
    return _edit_and_check(
        view,
        calls,
        "tests/test_tokenizer.py",
        LAST_TEST,
        NEW_TEST,
        "Added test_empty_input; the whole suite passes.",
    )


def facts(text: str) -> list[str]:
    found = []
    if BUG_NEW.strip() in text:
        found.append("tokenize() fixed")
    if "test_empty_input" in text:
        found.append("test_empty_input added")
    return found


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("Added test_empty_input"):
        return f"the last answer is not the new test: {answer[:80]!r}"
    if BUG_NEW not in (repo / "parser/tokenizer.py").read_text(encoding="utf-8"):
        return "parser/tokenizer.py is not fixed"
    if "def test_empty_input" not in (repo / "tests/test_tokenizer.py").read_text(encoding="utf-8"):
        return "tests/test_tokenizer.py has no test_empty_input"
    return run_tests(repo)


TASK = Task(
    name="three-prompts",
    description="three prompts in one session: a failing 25 KB test log and a 30 KB CI log, a fix, a new test",
    prompts=PROMPTS,
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
