"""failing-build: ``make`` fails with ~30 KB of errors, and nothing the model tries fixes it.

The model runs the build, reads the header and the build script, tries two edits (each checked
with ``make``), a clean rebuild and a grep, then reports that it could not fix the build. Every
command output is an error result.

Personas: ``recall`` and ``rerun`` behave alike (nothing here is recalled: a file whose text is no
longer visible is read again); ``early-facts`` quotes, in its final answer, the first error and the
missing header as its first ``make`` showed them, found in the context (the output, a placeholder's
excerpt, a receipt's quotes, a recall) or by ``make 2>&1 | tail -3``. Finished: the answer names
the generator that is missing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import View

from tasks.base import Task, write_files

MAKE = "make"
HEADER_OLD = "/* handles */\n"
HEADER_NEW = "/* handles */\ntypedef struct cfg_handle cfg_handle_t;\n"
SCRIPT_OLD = "CFLAGS=-O2\n"
SCRIPT_NEW = "CFLAGS='-O2 -Iinclude -Igen'\n"
BUILD = """#!/bin/sh
# Pretend compiler: every module needs gen/cfg_handle.h, which only the (missing) generator writes.
CFLAGS=-O2
rev=$(wc -l < include/config.h)
i=0
while [ $i -lt 130 ]; do
  echo "cc $CFLAGS -c src/module_$i.c (config rev $rev)"
  echo "src/module_$i.c:12:5: error: unknown type name 'cfg_handle_t'; did you mean 'cfg_handle'?"
  echo "src/module_$i.c:12:5: note: cfg_handle_t is declared in gen/cfg_handle.h (generated)"
  i=$((i + 1))
done
echo "gen/cfg_handle.h: No such file or directory (run tools/gen-config, not installed)"
exit 1
"""


def setup(repo: Path) -> None:
    write_files(
        repo,
        {
            "Makefile": "all:\n\t@sh build.sh\n\nclean:\n\t@rm -rf out\n",
            "build.sh": BUILD,
            "include/config.h": "#pragma once\n"
            + HEADER_OLD
            + "".join(f"#define CFG_{n} {n}\n" for n in range(40)),
            **{
                f"src/module_{n}.c": f'#include "cfg_handle.h"\n\ncfg_handle_t *module_{n};\n'
                for n in range(180)
            },
        },
    )


def _edit(view: View, path: str, old: str, new: str) -> dict[str, Any]:
    read = view.latest_read(path)
    if read is None or read.shown() is None or old not in read.shown().text:
        return {"text": f"Reading {path}.", "tool": "read", "args": {"path": path}}
    args: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": new}]}
    if view.fusion:
        args["then_run"] = {"command": MAKE, "timeout": 120}
    return {"text": f"Trying a fix in {path}.", "tool": "edit", "args": args}


FIRST_ERROR = re.compile(r"src/module_0\.c:12:5: error: [^\n]+")
ROOT_CAUSE = re.compile(r"gen/cfg_handle\.h: No such file or directory \([^)\n]+\)")
TAIL = "make 2>&1 | tail -3"


def _quotes(view: View) -> tuple[list[str], dict[str, Any] | None]:
    """The first error and the root cause, as visible anywhere in the outputs, or the step that
    shows what is missing again."""
    seen = "\n".join(view.sees(call) for call in view.calls if call.name != "todo")
    first, cause = FIRST_ERROR.search(seen), ROOT_CAUSE.search(seen)
    if first is not None and cause is not None:
        return [first.group(0), cause.group(0)], None
    query = "error" if first is None else "No such file"
    return [], view.bring_back(
        next(iter(view.runs_of(MAKE)), None), query, {"text": "The end of the build output.", "bash": TAIL}
    )


def decide(view: View) -> dict[str, Any]:
    plan = [
        ("make", lambda: {"text": "Running the build.", "bash": MAKE}),
        ("edit include/config.h", lambda: _edit(view, "include/config.h", HEADER_OLD, HEADER_NEW)),
        ("make after header", lambda: {"text": "Rebuilding.", "bash": MAKE}),
        ("edit build.sh", lambda: _edit(view, "build.sh", SCRIPT_OLD, SCRIPT_NEW)),
        ("make after script", lambda: {"text": "Rebuilding.", "bash": MAKE}),
        ("clean build", lambda: {"text": "A clean rebuild.", "bash": "make clean && make"}),
        (
            "grep",
            lambda: {
                "text": "Where is cfg_handle_t defined?",
                "bash": "grep -rn cfg_handle_t include gen || true",
            },
        ),
    ]
    done = _progress(view)
    for name, step in plan:
        if name not in done:
            return step()
    if view.early:
        quotes, step = _quotes(view)
        if step is not None:
            return step
        return {
            "text": "I could not fix the build. The first error is `"
            + quotes[0]
            + "`, and the build ends with `"
            + quotes[1]
            + "`: every module needs that generated header, and its generator is not in the repository."
        }
    return {
        "text": "I could not fix the build: every module needs gen/cfg_handle.h, which tools/gen-config "
        "generates, and that tool is not in the repository. Install it or commit the header."
    }


def _progress(view: View) -> set[str]:
    done: set[str] = set()
    header = view.edits_of("include/config.h")
    script = view.edits_of("build.sh")
    makes = view.runs_of(MAKE)
    if makes:
        done.add("make")
    if header:
        done.add("edit include/config.h")
        if any(m.position >= header[-1].position for m in makes):
            done.add("make after header")
    if script:
        done.add("edit build.sh")
        if any(m.position >= script[-1].position for m in makes):
            done.add("make after script")
    if view.runs_of("make clean && make"):
        done.add("clean build")
    if view.runs_of("grep -rn cfg_handle_t include gen || true"):
        done.add("grep")
    return done


def facts(text: str) -> list[str]:
    found = []
    if HEADER_NEW.strip() in text:
        found.append("tried a typedef in include/config.h")
    if SCRIPT_NEW.strip() in text:
        found.append("tried include flags in build.sh")
    return found


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("I could not fix the build") or "tools/gen-config" not in answer:
        return f"the answer does not name the missing generator: {answer[:120]!r}"
    return None


TASK = Task(
    name="failing-build",
    description="a build that is never fixed: ~30 KB of errors after every attempt",
    prompts=("`make` fails. Find out why and try to fix the build.",),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
