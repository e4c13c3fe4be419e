"""ctest-suite: a C library's CTest suite, whose failing tests print ~10 KB of their own traces each.

The log is CTest's (``--output-on-failure``: each failing test's output follows its ``***Failed``
line), and what the failing tests print is the library's own trace format, which no extractor of
the Evidence-Preserving Reducer knows: the default profile sends it as it is (ObservationPack packs
it later), and only the reducer's model tier (``full``) turns it into a receipt before it is first
sent (issue 27: the task that exercises the cheap model). The repository's ``tools/ctest`` plays the
built suite: it prints what CTest prints for the library as it stands in the workspace (fixed
timings, so runs are deterministic), without a compiler.

The model runs the suite, reads the source file the first failure points to, fixes it (with
``then_run`` when Action Fusion offers it, else an edit and a new run), and repeats until the suite
passes: three bugs, ~36 KB of log at first, then ~25 KB and ~13 KB. Personas as in fix-the-tests:
``rerun`` reads or runs again instead of recalling; ``early-facts`` takes the bugs from the first
run, reads every file they point to first, then fixes them one after the other. Finished: the suite
passes in the workspace.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from policy import View, recall_step

from tasks.base import Task, write_files

TEST = "ctest --test-dir build --output-on-failure"
# (failing tests, source file, buggy line, fixed line, function)
BUGS = (
    (
        ("lexer_escaped_quote", "lexer_string_span"),
        "src/lexer.c",
        "        tok->len = end - start;\n",
        "        tok->len = end - start + 1;\n",
        "lex_string",
    ),
    (
        ("number_max_digits", "number_overflow_edge"),
        "src/number.c",
        "    if (digits > 19) return NUM_OVERFLOW;\n",
        "    if (digits > 18) return NUM_OVERFLOW;\n",
        "parse_uint",
    ),
    (
        ("utf8_ascii_width", "utf8_mixed_width"),
        "src/utf8.c",
        "    if (byte < 0x80) return 2;\n",
        "    if (byte < 0x80) return 1;\n",
        "utf8_width",
    ),
)
SUITES = ("lexer", "number", "utf8", "buffer")
PASSING = 14  # passing tests per suite, besides the failing ones
TRACE_LINES = 55  # what a failing test prints before its check line


def _filler(module: str, count: int) -> str:
    """Other functions of the file, with comments, so a read is a few KB like real code."""
    return "".join(
        f"/* {module}_step_{n:02d}: bound ``value`` by {n + 3} (kept for the 0.{n} API). */\n"
        f"static int {module}_step_{n:02d}(int value)\n{{\n"
        f"    if (value > {n + 3}) {{\n        return {n + 3};\n    }}\n    return value;\n}}\n\n"
        for n in range(count)
    )


def _sources() -> dict[str, str]:
    lexer = (
        '#include "lexer.h"\n\n'
        "/* A string token runs from its opening quote to its closing one, both included. */\n"
        "int lex_string(const char *src, int start, struct token *tok)\n{\n"
        "    int end = start + 1;\n"
        "    while (src[end] && src[end] != '\"') {\n"
        "        end += src[end] == '\\\\' ? 2 : 1;\n"
        "    }\n"
        "    if (src[end] == '\"') {\n" + BUGS[0][2] + "        return 0;\n    }\n"
        "    return -1;\n}\n\n" + _filler("lexer", 24)
    )
    number = (
        '#include "number.h"\n\n'
        "/* An unsigned 64-bit decimal: at most 19 digits, so 20 overflow. */\n"
        "int parse_uint(const char *src, int digits, unsigned long long *out)\n{\n"
        + BUGS[1][2]
        + "    *out = 0;\n    for (int i = 0; i < digits; i++) {\n"
        "        *out = *out * 10 + (unsigned long long)(src[i] - '0');\n    }\n"
        "    return NUM_OK;\n}\n\n" + _filler("number", 24)
    )
    utf8 = (
        '#include "utf8.h"\n\n'
        "/* The bytes of the UTF-8 sequence that ``byte`` starts. */\n"
        "int utf8_width(unsigned char byte)\n{\n"
        + BUGS[2][2]
        + "    if (byte >> 5 == 0x6) return 2;\n    if (byte >> 4 == 0xe) return 3;\n"
        "    if (byte >> 3 == 0x1e) return 4;\n    return -1;\n}\n\n" + _filler("utf8", 24)
    )
    buffer = '#include "buffer.h"\n\n' + _filler("buffer", 24)
    return {"src/lexer.c": lexer, "src/number.c": number, "src/utf8.c": utf8, "src/buffer.c": buffer}


# One test of the suite, as the built test binary would run it (played by a shell script: the task
# needs no compiler): it checks the source line the test covers and, when that line is still wrong,
# prints the library's own trace format and the check that failed.
CASE = r"""#!/bin/sh
# tools/case.sh NAME: runs one test of the tinylex suite (CTest calls it from build/CTestTestfile.cmake)
name=$1
case "$name" in
__CASES__
  *) exit 0 ;;
esac
line=$(grep -nxF "$bad" "$file" | cut -d: -f1)
[ -z "$line" ] && exit 0
echo "== $name: $fn under trace (seed 0x5eed$(printf %04x ${#name}))"
i=0
while [ $i -lt __TRACE_LINES__ ]; do
  case $((i % 3)) in 0) state=SCAN ;; 1) state=TAKE ;; *) state=EMIT ;; esac
  printf '  [%s #%03d] %s pos=%4d state=%s acc=0x%08x arena=%d/65536\n' \
    "$name" $i "$fn" $((i * 3 + 1)) $state $(((i * 2654435761) % 4294967296)) $((4096 + i * 24))
  i=$((i + 1))
done
echo "$file:$line: check failed in $fn: $name (expected/actual differ)"
exit 1
"""


def _case_script() -> str:
    cases = "\n".join(
        f"  {'|'.join(names)}) file={path}; fn={function}; bad='{old.rstrip(chr(10))}' ;;"
        for names, path, old, _, function in BUGS
    )
    return CASE.replace("__CASES__", cases).replace("__TRACE_LINES__", str(TRACE_LINES))


def _testfile(repo: Path) -> str:
    """``build/CTestTestfile.cmake`` as CMake writes it for the suite's ``add_test`` calls."""
    tests = []
    for suite in SUITES:
        tests += [f"{suite}_case_{n:02d}" for n in range(PASSING)]
        tests += [name for names, path, *_ in BUGS if path == f"src/{suite}.c" for name in names]
    lines = [
        f"# CMake generated Testfile for \n# Source directory: {repo}\n# Build directory: {repo}/build\n#\n"
        "# This file includes the relevant testing commands required for\n"
        "# testing this directory and lists subdirectories to be tested as well.\n"
    ]
    for name in tests:
        lines.append(f'add_test({name} "sh" "{repo}/tools/case.sh" "{name}")\n')
        lines.append(f'set_tests_properties({name} PROPERTIES  WORKING_DIRECTORY "{repo}")\n')
    return "".join(lines)


def setup(repo: Path) -> None:
    write_files(
        repo,
        {
            **_sources(),
            "tools/case.sh": _case_script(),
            "build/CTestTestfile.cmake": _testfile(repo.resolve()),
            "README.md": "# tinylex\n\nBuilt by CI with CMake into `build/`; run the suite: `ctest --test-dir build`\n",
        },
    )


def _applied(call) -> bool:
    shown = call.shown()
    return shown is not None and (not call.failed or "[then_run:failed]" in shown.text)


def _stale(view: View, run) -> bool:
    return any(call.name in ("edit", "write") and call.position > run.position for call in view.calls)


def _named(bug: tuple[Any, ...], visible: str) -> bool:
    """Whether ``visible`` names a failure of ``bug``: a failing test's line or its check line."""
    for line in visible.splitlines():
        if "Failed" in line and any(f"{name} " in line for name in bug[0]):
            return True
        if line.startswith(f"{bug[1]}:") and "check failed" in line:
            return True
    return False


def _failing(view: View, run) -> tuple[Any, ...] | None:
    """The bug the newest output points to (in full, an excerpt, a receipt's quotes, a recall)."""
    shown = run.command_output()
    visible = shown.excerpts() if shown is not None else ""
    if shown is not None and shown.kind == "placeholder":
        visible += "\n" + view.recalled_text(run)
    return next((bug for bug in BUGS if _named(bug, visible)), None)


def _visible_line(view: View, path: str, line: str) -> bool:
    for call in view.calls:
        shown = call.shown()
        if shown is None or shown.kind != "full":
            continue
        if call.name == "read" and call.args.get("path") == path and line in shown.text:
            return True
        if call.name == "obs_recall" and line.strip() in shown.text:
            return True
    return False


def _fix(view: View, bug: tuple[Any, ...]) -> dict[str, Any]:
    _, path, old, new, function = bug
    if not _visible_line(view, path, old):
        return view.bring_back(
            view.latest_read(path),
            old.strip(),
            {"text": f"The failure points at {function}() in {path}; reading it.", "tool": "read", "args": {"path": path}},
        )
    args: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": new}]}
    if view.fusion:
        args["then_run"] = {"command": TEST, "timeout": 120}
    return {"text": f"{function}() is wrong; fixing it.", "tool": "edit", "args": args}


def _early(view: View) -> dict[str, Any] | None:
    """The early-facts plan: the bugs the first run names, their files read first, then the fixes."""
    runs = view.runs_of(TEST)
    if not runs or runs[0].result is None:
        return None
    seen = view.sees(runs[0])
    bugs = [bug for bug in BUGS if _named(bug, seen)]
    if not bugs:
        shown = runs[0].shown()
        if shown is not None and shown.kind == "placeholder" and view.recalls and not view.recalls_of(shown.obs_id):
            return recall_step(shown.obs_id, query="check failed")
        return None
    for bug in bugs:
        if view.latest_read(bug[1]) is None and view.edit_state(bug[1], bug[2]) is False:
            return {"text": f"Reading {bug[1]} first.", "tool": "read", "args": {"path": bug[1]}}
    for bug in bugs:
        edited = view.edit_state(bug[1], bug[2])
        if edited is None:
            return {"text": f"The edit of {bug[1]} failed; reading it again.", "tool": "read", "args": {"path": bug[1]}}
        if not edited:
            return _fix(view, bug)
    return None


def decide(view: View) -> dict[str, Any]:
    if view.early and (step := _early(view)) is not None:
        return step
    runs = view.runs_of(TEST)
    run = runs[-1] if runs else None
    if run is None or run.result is None or _stale(view, run):
        return {"text": "Running the test suite.", "bash": TEST}
    if not run.failed:
        fixed = sorted({call.args["path"] for call in view.calls if call.name == "edit" and _applied(call)})
        return {"text": f"The suite passes now. Fixed: {', '.join(fixed) or 'nothing'}."}
    bug = _failing(view, run)
    if bug is not None:
        return _fix(view, bug)
    return view.bring_back(
        run, "check failed", {"text": "I cannot see which test fails; running the suite again.", "bash": TEST}
    )


def facts(text: str) -> list[str]:
    return [f"fixed {bug[4]}() in {bug[1]}" for bug in BUGS if bug[3].strip() in text]


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("The suite passes now."):
        return f"the answer is not that the suite passes: {answer[:80]!r}"
    done = subprocess.run(
        ["ctest", "--test-dir", "build"], cwd=repo, capture_output=True, text=True, timeout=120
    )
    return None if done.returncode == 0 else f"the suite fails ({(done.stdout.strip().splitlines() or ['?'])[-1]})"


TASK = Task(
    name="ctest-suite",
    description="three bugs in a C library; CTest's log with ~10 KB traces per failing test, a format no extractor knows",
    prompts=(
        "The test suite fails (run it with `ctest --test-dir build --output-on-failure`). Find out why, fix it, and "
        "verify that the whole suite passes.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
