"""debug-library: two one-line bugs in a small library, found by many 1–8 KB reads and ``grep -n``.

``inikit`` parses INI-like settings; two tests fail (``parse_bool`` rejects ``yes``; ``deep_merge``
lets the base win over the override). The model runs the tests, explores with ``grep -n`` and reads
of whole modules (2–8 KB), then fixes both bugs at the end, checking with the tests (``then_run``
when ``edit`` offers it). Every output is small: nothing is over 8 KB.

It fixes a bug only when the failing test and the buggy line are visible: a read, a ``grep -n``
line, a placeholder's excerpt or a recall. Personas: ``recall`` notes which tests fail when it sees
them and recalls a packed read to find a buggy line; ``rerun`` notes the same and reads the file
again instead; ``early-facts`` notes nothing: it builds an index of every definition with its line
(``grep -n``) first, reads ranges at the lines that index gave, takes the failing tests from the
test output when it fixes, and names the buggy lines by the numbers its index showed. Finished: the
suite passes with both lines fixed (and any line the answer names is right).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import View, readable

from tasks.base import Task, run_tests, write_files

TEST = "python3 -m unittest"
INDEX = "grep -n '^def \\|^class \\|^[A-Z_]* = ' inikit/*.py | grep -v _rule_"
# (failing test, function, module, buggy line, fixed line)
BUGS = (
    (
        "test_yes",
        "parse_bool",
        "inikit/values.py",
        'TRUE_WORDS = ("true", "on", "1")\n',
        'TRUE_WORDS = ("true", "on", "yes", "1")\n',
    ),
    (
        "test_override_wins",
        "deep_merge",
        "inikit/merge.py",
        "    merged = {**override, **base}\n",
        "    merged = {**base, **override}\n",
    ),
)
# module -> (size in helpers, the function an early-facts range read starts at)
MODULES = {
    "values": (14, "parse_bool"),
    "parser": (30, "parse_line"),
    "lexer": (22, "tokenize"),
    "merge": (12, "deep_merge"),
    "schema": (26, "apply_schema"),
    "render": (18, "render"),
    "errors": (6, None),
}
# What every persona explores before fixing: (kind, argument); ``range`` reads are an early-facts
# model's reads at the line its index gave, the others read whole modules.
EXPLORE = (
    ("bash", TEST),
    ("bash", "grep -rn 'parse_bool\\|deep_merge' inikit tests"),
    ("read", "inikit/values.py"),
    ("read", "inikit/parser.py"),
    ("bash", "grep -n 'WORDS' inikit/values.py"),
    ("read", "inikit/lexer.py"),
    ("read", "inikit/merge.py"),
    ("read", "inikit/schema.py"),
    ("bash", "grep -rn 'override' inikit"),
    ("read", "inikit/render.py"),
    ("read", "tests/test_merge.py"),
    ("read", "tests/test_values.py"),
    ("bash", "wc -l inikit/*.py tests/*.py"),
    ("read", "inikit/errors.py"),
)
DEF_LINE = re.compile(r"^inikit/(\w+)\.py:(\d+):(?:def (\w+)|(TRUE_WORDS) = )", re.MULTILINE)


def _helpers(module: str, count: int) -> str:
    return "".join(
        f"def {module}_rule_{n:02d}(value, *, strict=False):\n"
        f'    """Normalise ``value`` for {module} rule {n}; ``strict`` rejects blanks."""\n'
        f"    if strict and not str(value).strip():\n"
        f"        raise ValueError('{module} rule {n}: blank value')\n"
        f"    return str(value).strip()[: {n + 16}]\n\n\n"
        for n in range(count)
    )


def _module(name: str) -> str:
    count, _ = MODULES[name]
    head = f'"""inikit.{name}."""\n\n'
    half = _helpers(name, count // 2)
    rest = _helpers(f"{name}_extra", count - count // 2)
    body = {
        "values": 'def parse_bool(text):\n    """``True`` or ``False`` for a boolean word (any case)."""\n'
        "    word = text.strip().lower()\n    if word in TRUE_WORDS:\n        return True\n"
        "    if word in FALSE_WORDS:\n        return False\n"
        '    raise ValueError(f"not a boolean: {text!r}")\n\n\n'
        'def parse_int(text):\n    """An integer, with ``_`` separators allowed."""\n'
        '    return int(text.replace("_", ""))\n\n\n',
        "parser": 'def parse_line(line):\n    """``(key, value)`` of a ``key = value`` line, ``None`` for a comment."""\n'
        "    line = line.strip()\n    if not line or line.startswith(('#', ';')):\n        return None\n"
        "    key, _, value = line.partition('=')\n    return key.strip(), value.strip()\n\n\n",
        "lexer": 'def tokenize(text):\n    """The non-blank lines of ``text``."""\n'
        "    return [line for line in text.splitlines() if line.strip()]\n\n\n",
        "merge": 'def deep_merge(base, override):\n    """``base`` updated by ``override``, recursively: the override wins."""\n'
        + BUGS[1][3]
        + "    for key, value in override.items():\n"
        "        if isinstance(value, dict) and isinstance(base.get(key), dict):\n"
        "            merged[key] = deep_merge(base[key], value)\n    return merged\n\n\n",
        "schema": 'def apply_schema(settings, schema):\n    """``settings`` with each value converted by ``schema``."""\n'
        "    return {key: schema.get(key, str)(value) for key, value in settings.items()}\n\n\n",
        "render": 'def render(settings):\n    """``settings`` as ``key = value`` lines."""\n'
        '    return "".join(f"{key} = {value}\\n" for key, value in sorted(settings.items()))\n\n\n',
        "errors": 'class InikitError(Exception):\n    """Any error of inikit."""\n\n\n',
    }[name]
    if name == "values":
        head += BUGS[0][3] + 'FALSE_WORDS = ("false", "off", "no", "0")\n\n\n'
    return head + half + body + rest


def _tests() -> dict[str, str]:
    values = (
        "import unittest\n\nfrom inikit.values import parse_bool, parse_int\n\n\n"
        "class TestBool(unittest.TestCase):\n"
        + "".join(
            f"    def test_{word}(self):\n        self.assertIs(parse_bool({word!r}), {result})\n\n"
            for word, result in (("true", True), ("on", True), ("yes", True), ("off", False), ("no", False))
        )
        + "\nclass TestInt(unittest.TestCase):\n"
        "    def test_separators(self):\n        self.assertEqual(parse_int('1_000'), 1000)\n"
    )
    merge = (
        "import unittest\n\nfrom inikit.merge import deep_merge\n\n\n"
        "class TestMerge(unittest.TestCase):\n"
        "    def test_nested(self):\n"
        "        self.assertEqual(deep_merge({'a': {'b': 1}}, {'a': {'c': 2}}), {'a': {'b': 1, 'c': 2}})\n\n"
        "    def test_override_wins(self):\n"
        "        self.assertEqual(deep_merge({'a': 1}, {'a': 2}), {'a': 2})\n\n"
        "    def test_empty(self):\n        self.assertEqual(deep_merge({}, {}), {})\n"
    )
    return {"tests/__init__.py": "", "tests/test_values.py": values, "tests/test_merge.py": merge}


def setup(repo: Path) -> None:
    files = {f"inikit/{name}.py": _module(name) for name in MODULES}
    files["inikit/__init__.py"] = '"""inikit: INI-like settings."""\n'
    write_files(repo, {**files, **_tests(), "README.md": "# inikit\n\nTests: `python3 -m unittest`\n"})


# -- what the model sees ---------------------------------------------------------------------


def _index(view: View) -> dict[str, int]:
    """``{name: line}`` of the definitions the index shows (a constant too), as visible now."""
    runs = view.runs_of(INDEX)
    text = "\n".join(view.sees(call) for call in runs)
    return {match.group(3) or match.group(4): int(match.group(2)) for match in DEF_LINE.finditer(text)}


def _range_read(view: View, module: str, function: str) -> dict[str, Any]:
    """An early-facts read: 25 lines from the line the index gave ``function``, or the index again."""
    line = _index(view).get(function)
    if line is None:
        runs = view.runs_of(INDEX)
        again = {"text": "Listing the definitions again.", "bash": INDEX}
        return view.bring_back(runs[0] if runs else None, f"def {function}", again)
    return {
        "text": "Reading on.",
        "tool": "read",
        "args": {"path": f"inikit/{module}.py", "offset": line, "limit": 25},
    }


def _explore_step(view: View, kind: str, argument: str) -> dict[str, Any] | None:
    """The exploration step ``(kind, argument)`` as this persona takes it, or ``None`` once done."""
    if view.early and kind == "read" and argument.startswith("inikit/"):
        module = Path(argument).stem
        function = MODULES[module][1]
        reads = [c for c in view.calls if c.name == "read" and c.args.get("path") == argument]
        if reads:
            return None
        return (
            _range_read(view, module, function)
            if function
            else {
                "text": "Reading on.",
                "tool": "read",
                "args": {"path": argument},
            }
        )
    if kind == "read":
        if any(c.name == "read" and c.args.get("path") == argument for c in view.calls):
            return None
        return {"text": "Reading on.", "tool": "read", "args": {"path": argument}}
    if view.runs_of(argument):
        return None
    return {"text": "Looking further.", "bash": argument}


def _failing(view: View) -> set[str] | None:
    """The failing tests the model knows of: from its own notes until a fix's ``then_run`` shows a
    newer result, else the newest test output it can read (with its recalls); ``None`` when that
    output is not readable."""
    noted = {bug[0] for bug in BUGS if f"{bug[0]} ({bug[1]})" in view.own_text()}
    runs = view.runs_of(TEST)
    if noted and not [run for run in runs if run.name == "edit"]:
        return noted
    if not runs:
        return None
    seen = view.sees(runs[-1])
    named = {bug[0] for bug in BUGS if bug[0] in seen}
    if named or re.search(r"^OK\b", seen, re.MULTILINE):
        return named
    return None


def _line_visible(view: View, path: str, line: str) -> bool:
    """Whether ``line`` is readable now: in a full read of ``path``, a recall, or a grep line of it."""
    for call in view.calls:
        shown = call.shown()
        if shown is None or shown.kind != "full":
            continue
        if call.name == "read" and call.args.get("path") == path and line in shown.text:
            return True
        if call.name == "obs_recall" and line.strip() in readable(shown.text):
            return True
        mentions = f"{path}:" in shown.text or path in (call.command or "")
        if call.name == "bash" and mentions and f":{line.rstrip()}" in shown.text:  # a grep -n line
            return True
    return False


def _fix(view: View, bug: tuple[str, ...]) -> dict[str, Any]:
    _, function, path, old, new = bug
    if not _line_visible(view, path, old):
        if view.early and bug is BUGS[0]:  # its index showed the line: bring that back
            runs = view.runs_of(INDEX)
            again = {"text": "Listing the definitions again.", "bash": INDEX}
            return view.bring_back(runs[0] if runs else None, old.split(" =")[0], again)
        reads = [c for c in view.calls if c.name == "read" and c.args.get("path") == path]
        again = {"text": f"Reading {path} again.", "tool": "read", "args": {"path": path}}
        if view.early and function == "deep_merge":
            again = _range_read(view, "merge", "deep_merge")
        return view.bring_back(reads[-1] if reads else None, old.strip(), again)
    args: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": new}]}
    if view.fusion:
        args["then_run"] = {"command": TEST, "timeout": 120}
    return {"text": f"Fixing {function}().", "tool": "edit", "args": args}


def _note(view: View) -> str:
    """A note of the failures just seen (personas other than early-facts write one)."""
    runs = view.runs_of(TEST)
    seen = view.sees(runs[-1]) if runs else ""
    named = [f"{bug[0]} ({bug[1]})" for bug in BUGS if bug[0] in seen]
    if view.early or not named or len(runs) != 1 or view.own_text().count(named[0]) > 0:
        return ""
    return f"Failing: {', '.join(named)}. "


def decide(view: View) -> dict[str, Any]:
    explore = [(kind, INDEX if view.early and n == 1 else arg) for n, (kind, arg) in enumerate(EXPLORE)]
    for kind, argument in explore:
        step = _explore_step(view, kind, argument)
        if step is not None:
            step["text"] = _note(view) + step["text"]
            return step
    failing = _failing(view)
    runs = view.runs_of(TEST)
    if failing is None:
        again = {"text": "Which tests fail? Running them again.", "bash": TEST}
        return view.bring_back(runs[-1] if runs else None, "test_", again)
    for bug in BUGS:
        state = view.edit_state(bug[2], bug[3])
        if state is None:
            return {
                "text": f"The edit of {bug[2]} failed; reading it again.",
                "tool": "read",
                "args": {"path": bug[2]},
            }
        if not state and bug[0] in failing:
            return _fix(view, bug)
    edits = [c for c in view.calls if c.name == "edit"]
    if not runs or (edits and runs[-1].position < edits[-1].position) or runs[-1].result is None:
        return {"text": "Running the tests.", "bash": TEST}
    if runs[-1].failed:
        if not edits:
            return {"text": "I cannot tell which tests fail; stopping."}
        return (
            {"text": "The tests still fail; running them again.", "bash": TEST}
            if len(runs) < 6
            else {"text": "The tests still fail; stopping here."}
        )
    return {"text": _answer(view)}


def _answer(view: View) -> str:
    if not view.early:
        return "Fixed parse_bool() in inikit/values.py (TRUE_WORDS lacked yes) and deep_merge() in inikit/merge.py (the override now wins); the tests pass."
    index = _index(view)
    where = [f"{bug[1]}() at {bug[2]}:{index[bug[1]]}" for bug in BUGS if bug[1] in index]
    return "Fixed " + " and ".join(where or ["parse_bool() and deep_merge()"]) + "; the tests pass."


def facts(text: str) -> list[str]:
    return [f"fixed {bug[1]}() in {bug[2]}" for bug in BUGS if bug[4].strip() in text]


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("Fixed "):
        return f"the answer is not the fix: {answer[:80]!r}"
    for _, function, path, _, new in BUGS:
        if new not in (repo / path).read_text(encoding="utf-8"):
            return f"{function}() in {path} is not fixed"
        named = re.search(rf"{function}\(\) at {re.escape(path)}:(\d+)", answer)
        if named is not None:
            lines = (repo / path).read_text(encoding="utf-8").splitlines()
            if not lines[int(named.group(1)) - 1].startswith(f"def {function}("):
                return f"the answer names the wrong line for {function}(): {named.group(0)}"
    return run_tests(repo)


TASK = Task(
    name="debug-library",
    description="two one-line bugs in a small library: many 1-8 KB reads and grep -n, fixes at the end",
    prompts=(
        "Two tests of inikit fail (run `python3 -m unittest`). Find the bugs by reading the code, fix "
        "them, and check that the whole suite passes.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
