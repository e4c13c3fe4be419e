"""lockfile: a 130 KB ``package-lock.json`` read once, page by page, to pin one dependency.

The model reads ``package.json``, then the lockfile in the pages ``read`` gives (about 50 KB each,
"Use offset=N to continue"), finds which version of ``left-pad`` is locked and which packages depend
on it, pins that version in ``package.json`` and answers.

Personas: ``recall`` and ``rerun`` note what they find while reading (the locked version and each
dependent, in their own text), so nothing hidden is needed later; ``early-facts`` notes nothing: it
first greps where ``left-pad``'s entry is, reads the lockfile, then re-reads the entry at the line
that grep gave and answers from what it saw while reading, found again when hidden (a search of the
packed pages, else the pages read again, noting this time). Finished: ``package.json`` pins the locked version and the
answer names it and every dependent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from policy import Call, View, recall_step

from tasks.base import Task, write_files

LOCK = "package-lock.json"
VERSION = "1.3.0"
DEPENDENTS = ("pkg-0042", "pkg-0137", "pkg-0311")
WHERE = f"grep -n '\"node_modules/left-pad\"' {LOCK}"
RANGE = '"left-pad": "^1.1.0"'
PINNED = f'"left-pad": "{VERSION}"'
NEXT = re.compile(r"Use offset=(\d+) to continue")
LOCKED = re.compile(r'"node_modules/left-pad": \{\s*"version": "([0-9.]+)"')
DEPENDENT = re.compile(
    r'"node_modules/(pkg-\d{4})": \{\s*"version": "[0-9.]+",\s*"dependencies": \{"left-pad"'
)
NOTE = re.compile(r"(pkg-\d{4}) depends on left-pad|left-pad ([0-9.]+) is locked")


def _lockfile() -> str:
    packages = {"": {"name": "shop-web", "version": "3.2.0", "dependencies": {"left-pad": "^1.1.0"}}}
    lines = [
        "{",
        '  "name": "shop-web",',
        '  "version": "3.2.0",',
        '  "lockfileVersion": 3,',
        '  "requires": true,',
        '  "packages": {',
        f'    "": {json.dumps(packages[""])},',
    ]
    for n in range(1, 421):
        name = f"pkg-{n:04d}"
        version = f"{n % 7}.{n % 11}.{n % 5}"
        lines += [f'    "node_modules/{name}": {{', f'      "version": "{version}",']
        if name in DEPENDENTS:
            lines.append(f'      "dependencies": {{{RANGE}}},')
        lines += [
            f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-{version}.tgz",',
            f'      "integrity": "sha512-{(name * 8)[:64]}",',
            '      "license": "MIT"',
            "    },",
        ]
        if n == 230:
            lines += [
                '    "node_modules/left-pad": {',
                f'      "version": "{VERSION}",',
                f'      "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-{VERSION}.tgz",',
                '      "license": "WTFPL"',
                "    },",
            ]
    lines[-1] = "    }"
    return "\n".join([*lines, "  }", "}"]) + "\n"


def setup(repo: Path) -> None:
    package = (
        '{\n  "name": "shop-web",\n  "version": "3.2.0",\n  "dependencies": {\n    ' + RANGE + "\n  }\n}\n"
    )
    write_files(repo, {"package.json": package, LOCK: _lockfile()})


# -- what the model sees ---------------------------------------------------------------------


def _pages(view: View) -> list[Call]:
    return [
        c
        for c in view.calls
        if c.name == "read" and c.args.get("path") == LOCK and c.args.get("limit") is None
    ]


def _next_offset(view: View) -> int | None:
    """Where the next page starts, from the newest page read (``None`` once the file is read)."""
    pages = _pages(view)
    if not pages:
        return 1
    found = NEXT.search(view.sees(pages[-1]))
    return int(found.group(1)) if found else None


def _found(text: str) -> tuple[str | None, set[str]]:
    version = LOCKED.search(text)
    return (version.group(1) if version else None), set(DEPENDENT.findall(text))


def _notes(view: View) -> tuple[str | None, set[str]]:
    """What the model wrote down: the locked version and the dependents."""
    version, dependents = None, set()
    for dependent, locked in NOTE.findall(view.own_text()):
        version = locked or version
        if dependent:
            dependents.add(dependent)
    return version, dependents


def _note(view: View) -> str:
    """Notes of what the newest page shows and the model has not written down (not early-facts)."""
    pages = _pages(view)
    first_pages = [page for page in pages if "offset" not in page.args]
    if (view.early and len(first_pages) < 2) or not pages:  # early-facts notes only once it reads again
        return ""
    version, dependents = _found(view.sees(pages[-1]))
    noted_version, noted = _notes(view)
    parts = [f"{name} depends on left-pad." for name in sorted(dependents - noted)]
    if version and not noted_version:
        parts.append(f"left-pad {version} is locked.")
    return " ".join(parts) + (" " if parts else "")


def decide(view: View) -> dict[str, Any]:
    if not any(c.name == "read" and c.args.get("path") == "package.json" for c in view.calls):
        return {"text": "Reading package.json.", "tool": "read", "args": {"path": "package.json"}}
    if view.early and not view.runs_of(WHERE):
        return {"text": "Where is left-pad's entry?", "bash": WHERE}
    offset = _next_offset(view)
    if offset is not None:
        args: dict[str, Any] = {"path": LOCK} if offset == 1 else {"path": LOCK, "offset": offset}
        return {"text": _note(view) + "Reading the lockfile.", "tool": "read", "args": args}
    seen = "\n".join(view.sees(page) for page in _pages(view))
    version, dependents = _found(seen)
    noted_version, noted = _notes(view)
    version, dependents = version or noted_version, dependents | noted
    if view.early:
        line = re.search(r"^(\d+):", view.sees(view.runs_of(WHERE)[-1]), re.MULTILINE)
        entry = [
            c for c in view.calls if c.name == "read" and c.args.get("path") == LOCK and c.args.get("limit")
        ]
        if line is not None and not entry:
            return {
                "text": "Checking left-pad's entry.",
                "tool": "read",
                "args": {"path": LOCK, "offset": int(line.group(1)), "limit": 4},
            }
        version = version or _found("\n".join(view.sees(c) for c in entry))[0]
    if version is None or len(dependents) < len(DEPENDENTS):
        hidden = [
            page
            for page in _pages(view)
            if (shown := page.shown()) is not None
            and shown.kind == "placeholder"
            and not view.recalls_of(shown.obs_id)
        ]
        if view.recalls and hidden:
            return recall_step(hidden[0].shown().obs_id, query="left-pad")
        return {"text": "Reading the lockfile again.", "tool": "read", "args": {"path": LOCK}}
    edits = [c for c in view.calls if c.name == "edit" and c.args.get("path") == "package.json"]
    if not edits:
        pinned = f'"left-pad": "{version}"'
        return {
            "text": _note(view) + "Pinning it.",
            "tool": "edit",
            "args": {"path": "package.json", "edits": [{"oldText": RANGE, "newText": pinned}]},
        }
    return {
        "text": f"left-pad {version} is locked; {', '.join(sorted(dependents))} depend on it. "
        f"package.json now pins {version}."
    }


def facts(text: str) -> list[str]:
    return sorted(set(f"{d} depends on left-pad" for d, _ in NOTE.findall(text) if d))


def check(repo: Path, answer: str) -> str | None:
    if PINNED not in (repo / "package.json").read_text(encoding="utf-8"):
        return "package.json does not pin the locked version"
    missing = [name for name in (f"left-pad {VERSION} is locked", *DEPENDENTS) if name not in answer]
    return f"the answer misses {', '.join(missing)}: {answer[:100]!r}" if missing else None


TASK = Task(
    name="lockfile",
    description="a 130 KB package-lock.json read once (three pages) to pin one dependency",
    prompts=(
        "Which version of left-pad does package-lock.json lock, and which packages depend on it? Pin "
        "that exact version in package.json.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
