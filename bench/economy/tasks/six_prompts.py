"""six-prompts: six human prompts on one small repository (``tau -p P1 … P6``), planned with ``todo``.

The first prompt lists six small changes to ``notes`` (a note-taking command line) and asks for the
first; each later prompt asks for the next one. With ``todo`` the model plans the six as a checklist
in the first prompt (one batch ``add``) and completes one task per prompt. Between prompts todo-loop
may continue the run because the later tasks are open: the model then calls ``todo_loop_block``
(the next task waits for the user's next message) and ends. Every output is small (1–4 KB reads,
greps, test runs).

Personas: ``recall`` and ``rerun`` read or grep what each prompt needs when it starts; a line no
longer visible when it edits is recalled (``recall``) or read again (``rerun``). ``early-facts``
surveys the repository while answering the first prompt (every module, the test file, the
changelog, one grep for the misspelling and the constant) and makes every later change from that
survey, bringing back what is hidden (a recall, else the same read or grep). Finished: all six
changes are in the workspace and the tests pass.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import Call, View, readable, text_of

from tasks.base import Task, run_tests, write_files

TEST = "python3 -m unittest"
VERSION = "2.4.1"
VERSION_RUN = "python3 -m notes.cli --version"
GREP_TYPO = "grep -rn recieve --exclude-dir=.git . || echo 'no matches'"
GREP_CONSTANT = "grep -rn MAX_LEN notes tests"
SURVEY_GREP = "grep -rn 'recieve\\|MAX_LEN' --exclude-dir=.git ."
SURVEY_READS = (
    "notes/__init__.py",
    "notes/cli.py",
    "notes/store.py",
    "notes/model.py",
    "notes/util.py",
    "tests/test_util.py",
    "CHANGELOG.md",
)
TITLES = (
    "Add a --version flag",
    "Fix the misspelling recieve",
    "Rename MAX_LEN to MAX_TITLE_LEN",
    "Add a test for slugify",
    "Skip blank lines in store.load",
    "Update CHANGELOG.md",
)
PROMPTS = (
    "We will make six changes to this project, one per message: 1. add a `--version` flag to the "
    "command line that prints the package version; 2. fix the misspelling 'recieve' everywhere; "
    "3. rename the constant MAX_LEN to MAX_TITLE_LEN; 4. add a test for slugify; 5. make store.load "
    "skip blank lines; 6. add these changes to CHANGELOG.md under a heading for the current version. "
    "Plan them now, then do the first one.",
    "Now the second change: fix the misspelling.",
    "Third: rename the constant.",
    "Fourth: the slugify test.",
    "Fifth: blank lines in store.load.",
    "Last: the changelog entry.",
)
DONE = (
    "Added --version.",
    "Fixed the misspelling.",
    "Renamed MAX_LEN to MAX_TITLE_LEN; the tests pass.",
    "Added test_slugify; the tests pass.",
    "store.load skips blank lines now; the tests pass.",
    "CHANGELOG.md lists the five changes.",
)
WAITING = "The next task waits for your next message."
CONTINUE = "Continue working"

PARSER_LINE = '    parser = argparse.ArgumentParser(prog="notes")\n'
CLI_EDITS = (
    ("from notes.model import Note\n", "from notes import __version__\nfrom notes.model import Note\n"),
    (
        PARSER_LINE,
        PARSER_LINE
        + '    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")\n',
    ),
)
TYPO_LINES = {
    "docs/usage.md": "You recieve the notes sorted by date, newest first.\n",
    "notes/store.py": '"""notes.store: one JSON object per line; callers recieve Note objects."""\n',
}
CONSTANT_LINES = {
    "notes/model.py": (
        "MAX_LEN = 80\n",
        "        if len(self.title) > MAX_LEN:\n",
        '            raise ValueError(f"title longer than {MAX_LEN} characters")\n',
    ),
    "notes/util.py": (
        "from notes.model import MAX_LEN\n",
        '    """``title`` as a lower-case slug of at most MAX_LEN characters."""\n',
        '    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:MAX_LEN]\n',
    ),
}
TEST_EDITS = (
    ("from notes.util import shorten\n", "from notes.util import shorten, slugify\n"),
    (
        '        self.assertEqual(shorten("abcdefgh", 5), "abcd~")\n',
        '        self.assertEqual(shorten("abcdefgh", 5), "abcd~")\n\n'
        "    def test_slugify(self):\n"
        '        self.assertEqual(slugify("Hello, World!"), "hello-world")\n',
    ),
)
LOAD_LINE = "        return [Note(**json.loads(line)) for line in stream]\n"
LOAD_FIXED = "        return [Note(**json.loads(line)) for line in stream if line.strip()]\n"
CHANGELOG_HEAD = "# Changelog\n\n"
ENTRIES = (
    "- `notes --version` prints the version.",
    "- Fixed a misspelling of 'receive'.",
    "- MAX_LEN is now MAX_TITLE_LEN.",
    "- A test for slugify.",
    "- store.load skips blank lines.",
)
VERSION_LINE = re.compile(r'__version__ = "([0-9.]+)"')


def _helpers(module: str, count: int) -> str:
    return "".join(
        f"def {module}_format_{n:02d}(note, width={n + 20}):\n"
        f'    """Format ``note`` for the {module} view {n}, at most ``width`` characters."""\n'
        f"    text = f'{{note.title}}: {{note.body}}'\n"
        f"    return text if len(text) <= width else text[: width - 1] + '~'\n\n\n"
        for n in range(count)
    )


def setup(repo: Path) -> None:
    cli = (
        '"""notes: the command line."""\n\nimport argparse\nimport sys\n\n'
        "from notes.model import Note\nfrom notes.store import load, save\n\n\n"
        "def build_parser():\n" + PARSER_LINE + '    sub = parser.add_subparsers(dest="command")\n'
        '    add = sub.add_parser("add")\n    add.add_argument("title")\n'
        '    sub.add_parser("list")\n    return parser\n\n\n'
        + _helpers("cli", 12)
        + "def main(argv=None):\n    args = build_parser().parse_args(argv)\n"
        '    notes = load("notes.jsonl") if args.command else []\n'
        '    if args.command == "add":\n        save("notes.jsonl", [*notes, Note(args.title)])\n'
        '    for note in notes if args.command == "list" else []:\n        print(note.title)\n'
        "    return 0\n\n\n"
        'if __name__ == "__main__":\n    sys.exit(main())\n'
    )
    store = (
        TYPO_LINES["notes/store.py"] + "\nimport json\n\nfrom notes.model import Note\n\n\n"
        'def load(path):\n    """The notes in ``path``."""\n    with open(path, encoding="utf-8") as stream:\n'
        + LOAD_LINE
        + "\n\ndef save(path, notes):\n"
        '    with open(path, "w", encoding="utf-8") as stream:\n'
        "        for note in notes:\n"
        '            stream.write(json.dumps({"title": note.title, "body": note.body}) + "\\n")\n\n\n'
        + _helpers("store", 8)
    )
    model = (
        '"""notes.model."""\n\nfrom dataclasses import dataclass\n\n'
        + CONSTANT_LINES["notes/model.py"][0]
        + "\n\n@dataclass\nclass Note:\n    title: str\n    body: str = ''\n\n"
        "    def __post_init__(self):\n"
        + CONSTANT_LINES["notes/model.py"][1]
        + CONSTANT_LINES["notes/model.py"][2]
        + "\n\n"
        + _helpers("model", 6)
    )
    util = (
        '"""notes.util."""\n\nimport re\n\n'
        + CONSTANT_LINES["notes/util.py"][0]
        + "\n\ndef slugify(title):\n"
        + CONSTANT_LINES["notes/util.py"][1]
        + CONSTANT_LINES["notes/util.py"][2]
        + "\n\ndef shorten(text, width):\n"
        "    return text if len(text) <= width else text[: width - 1] + '~'\n\n\n" + _helpers("util", 6)
    )
    tests = {
        "tests/__init__.py": "",
        "tests/test_util.py": "import unittest\n\n"
        + TEST_EDITS[0][0]
        + "\n\nclass TestShorten(unittest.TestCase):\n"
        '    def test_short(self):\n        self.assertEqual(shorten("abc", 5), "abc")\n\n'
        "    def test_long(self):\n" + TEST_EDITS[1][0],
        "tests/test_model.py": "import unittest\n\nfrom notes.model import Note\n\n\n"
        "class TestNote(unittest.TestCase):\n"
        "    def test_long_title(self):\n        with self.assertRaises(ValueError):\n"
        "            Note('x' * 200)\n",
    }
    usage = "# Using notes\n\n" + "".join(
        f"- `notes {cmd}`: {what}\n"
        for cmd, what in (("add TITLE", "adds a note"), ("list", "lists the notes"))
    )
    write_files(
        repo,
        {
            "notes/__init__.py": f'"""notes: a small note keeper."""\n\n__version__ = "{VERSION}"\n',
            "notes/cli.py": cli,
            "notes/store.py": store,
            "notes/model.py": model,
            "notes/util.py": util,
            **tests,
            "docs/usage.md": usage + "\n" + TYPO_LINES["docs/usage.md"],
            "CHANGELOG.md": CHANGELOG_HEAD
            + "## 2.4.0\n\n- `notes list` sorts by date.\n\n## 2.3.0\n\n- First release.\n",
        },
    )


# -- what the model sees ------------------------------------------------------------------------


def _since_prompt(view: View) -> tuple[int, list[Call]]:
    """Which prompt is being answered (0-5), and the calls made since it."""
    human = [i for i, m in enumerate(view.messages) if m.get("role") == "user" and text_of(m) in PROMPTS]
    if not human:
        return len(PROMPTS) - 1, view.calls
    start = human[-1]
    return PROMPTS.index(text_of(view.messages[start])), [c for c in view.calls if c.position > start]


def _visible(view: View, path: str, line: str) -> bool:
    """Whether ``line`` of ``path`` can be read now: a full read, a ``grep -n`` line, a recall."""
    for call in view.calls:
        shown = call.shown()
        if shown is None or shown.kind != "full":
            continue
        if call.name == "read" and call.args.get("path") == path and line in shown.text:
            return True
        if call.name == "bash" and f"{path}:" in shown.text and f":{line.rstrip(chr(10))}" in shown.text:
            return True
        if call.name == "obs_recall" and line.strip() in readable(shown.text):
            return True
    return False


def _again(call: Call) -> dict[str, Any]:
    """The same read or command once more."""
    if call.name == "read":
        return {"text": "Reading it again.", "tool": "read", "args": dict(call.args)}
    return {"text": "Running it again.", "bash": call.command}


def _source(view: View, calls: list[Call], path: str, grep: str | None) -> Call | None:
    """Where this persona took ``path``'s lines from: for early-facts the survey (its grep for the
    misspelling and the constant, else its read), for the others this prompt's grep or read."""
    if view.early:
        pool = (
            view.runs_of(SURVEY_GREP)
            if grep
            else [c for c in view.calls if c.name == "read" and c.args.get("path") == path]
        )
    else:
        pool = (
            [c for c in calls if c.command == grep]
            if grep
            else [c for c in calls if c.name == "read" and c.args.get("path") == path]
        )
    return pool[-1] if pool else None


def _edit_then(
    view: View,
    calls: list[Call],
    path: str,
    pairs: tuple[tuple[str, str], ...],
    command: str | None,
    grep: str | None = None,
) -> dict[str, Any] | None:
    """Edit ``path`` once in this prompt from visible lines, then run ``command``; ``None`` when done."""
    edits = [c for c in calls if c.name == "edit" and c.args.get("path") == path]
    if not edits:
        source = _source(view, calls, path, grep)
        if source is None:
            if grep and not view.early:
                return {"text": "Looking for it.", "bash": grep}
            return {"text": f"Reading {path}.", "tool": "read", "args": {"path": path}}
        for old, _ in pairs:
            if not _visible(view, path, old):
                return view.bring_back(source, old.strip(), _again(source))
        args: dict[str, Any] = {"path": path, "edits": [{"oldText": o, "newText": n} for o, n in pairs]}
        if command and view.fusion:
            args["then_run"] = {"command": command}
        return {"text": f"Editing {path}.", "tool": "edit", "args": args}
    if command and not any(c.command == command and c.position >= edits[-1].position for c in calls):
        return {"text": "Checking.", "bash": command}
    return None


def _version(view: View, calls: list[Call]) -> tuple[str | None, dict[str, Any] | None]:
    """The version as visible in a read of ``notes/__init__.py``, or the step that shows it."""
    for call in view.calls:
        shown = call.shown()
        if shown is not None and shown.kind == "full" and call.name in ("read", "obs_recall"):
            found = VERSION_LINE.search(readable(shown.text))
            if found and (call.name == "obs_recall" or call.args.get("path") == "notes/__init__.py"):
                return found.group(1), None
    source = _source(view, calls, "notes/__init__.py", None)
    read = {"text": "Which version is this?", "tool": "read", "args": {"path": "notes/__init__.py"}}
    return None, read if source is None else view.bring_back(source, "__version__", _again(source))


def _work(view: View, prompt: int, calls: list[Call]) -> dict[str, Any] | None:
    """The next step of the prompt's change, ``None`` once it is done."""
    if prompt == 0:
        if view.early:
            for path in SURVEY_READS:
                if not any(c.name == "read" and c.args.get("path") == path for c in view.calls):
                    return {"text": "Surveying the project.", "tool": "read", "args": {"path": path}}
            if not view.runs_of(SURVEY_GREP):
                return {"text": "Surveying the project.", "bash": SURVEY_GREP}
        return _edit_then(view, calls, "notes/cli.py", CLI_EDITS, VERSION_RUN)
    if prompt == 1:
        for path, line in TYPO_LINES.items():
            fixed = line.replace("recieve", "receive")
            check = GREP_TYPO if path == "notes/store.py" else None
            step = _edit_then(view, calls, path, ((line, fixed),), check, grep=GREP_TYPO)
            if step is not None:
                return step
        return None
    if prompt == 2:
        for path, lines in CONSTANT_LINES.items():
            pairs = tuple((line, line.replace("MAX_LEN", "MAX_TITLE_LEN")) for line in lines)
            check = TEST if path == "notes/util.py" else None
            step = _edit_then(view, calls, path, pairs, check, grep=GREP_CONSTANT)
            if step is not None:
                return step
        return None
    if prompt == 3:
        return _edit_then(view, calls, "tests/test_util.py", TEST_EDITS, TEST)
    if prompt == 4:
        return _edit_then(view, calls, "notes/store.py", ((LOAD_LINE, LOAD_FIXED),), TEST)
    version, step = _version(view, calls)
    if step is not None:
        return step
    entry = f"{CHANGELOG_HEAD}## {version}\n\n" + "\n".join(ENTRIES) + "\n\n"
    return _edit_then(view, calls, "CHANGELOG.md", ((CHANGELOG_HEAD, entry),), None)


# -- the checklist -----------------------------------------------------------------------------


def _plan(view: View) -> dict[str, Any] | None:
    """The batch ``add`` of the six tasks (or a ``list`` when the list is not visible)."""
    listed = view.todo_list()
    revision = view.todo_revision() or 0
    if listed is None and revision > 0:
        return {"tool": "todo", "args": {"action": "list"}}
    titles = [task["title"] for task in listed["tasks"]] if listed else []
    missing = [title for title in TITLES if title not in titles]
    if not missing:
        return None
    return {
        "text": "Planning the six changes.",
        "tool": "todo",
        "args": {"action": "add", "baseRevision": revision, "tasks": [{"title": title} for title in missing]},
    }


def _complete(view: View, prompt: int) -> dict[str, Any] | None:
    listed = view.todo_list()
    if listed is None or listed["revision"] != view.todo_revision():
        return {"tool": "todo", "args": {"action": "list"}}
    task = next(t for t in listed["tasks"] if t["title"] == TITLES[prompt])
    if task["status"] == "completed":
        return None
    return {
        "tool": "todo",
        "args": {
            "action": "update",
            "baseRevision": listed["revision"],
            "updates": [{"id": task["id"], "status": "completed"}],
        },
    }


def decide(view: View) -> dict[str, Any]:
    prompt, calls = _since_prompt(view)
    last = text_of(view.last) if view.last.get("role") == "user" else ""
    if last.startswith(CONTINUE):
        if view.has_tool("todo_loop_block"):
            return {"tool": "todo_loop_block", "args": {"reason": WAITING}}
        return {"text": WAITING}
    if view.last.get("role") == "toolResult" and view.calls and view.calls[-1].name == "todo_loop_block":
        return {"text": WAITING}
    todo = view.has_tool("todo") and view.todo_batch()
    if todo and prompt == 0 and (step := _plan(view)) is not None:
        return step
    step = _work(view, prompt, calls)
    if step is not None:
        return step
    if todo and (step := _complete(view, prompt)) is not None:
        return step
    return {"text": DONE[prompt]}


def facts(text: str) -> list[str]:
    return [done for done in DONE if done in text]


def check(repo: Path, answer: str) -> str | None:
    if answer != DONE[-1]:
        return f"the last answer is not the changelog: {answer[:80]!r}"
    read = {
        path: (repo / path).read_text(encoding="utf-8")
        for path in ("notes/cli.py", "CHANGELOG.md", "notes/store.py")
    }
    if "--version" not in read["notes/cli.py"]:
        return "notes/cli.py has no --version"
    typo = [
        str(p.relative_to(repo))
        for p in repo.rglob("*")
        if p.is_file() and ".git" not in p.parts and b"recieve" in p.read_bytes()
    ]
    if typo:
        return f"'recieve' is still in {', '.join(sorted(typo))}"
    stale = [
        str(p.relative_to(repo))
        for p in repo.rglob("*.py")
        if re.search(r"\bMAX_LEN\b", p.read_text(encoding="utf-8"))
    ]
    if stale:
        return f"MAX_LEN is still used in {', '.join(sorted(stale))}"
    if "def test_slugify" not in (repo / "tests/test_util.py").read_text(encoding="utf-8"):
        return "tests/test_util.py has no test_slugify"
    if LOAD_FIXED not in read["notes/store.py"]:
        return "store.load does not skip blank lines"
    if f"## {VERSION}\n\n" + ENTRIES[0] not in read["CHANGELOG.md"]:
        return f"CHANGELOG.md has no {VERSION} entry"
    return run_tests(repo)


TASK = Task(
    name="six-prompts",
    description="six prompts on one repository, planned with a todo checklist; 1-4 KB reads and greps",
    prompts=PROMPTS,
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
