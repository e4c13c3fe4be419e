"""read-and-refactor: rename a function across two large modules (48 KB and 36 KB).

The model greps for the old name, reads each module whole, edits it in two passes (the second pass
needs the module's text again: from the read when it is still visible, else a recall or a new
read), re-reads a region to check its work, then greps again and runs the tests.

Personas: ``rerun`` reads a module again instead of recalling it; ``early-facts`` never reads the
modules whole: it edits from the lines of its first grep (``-n``: every use with its line), re-reads
the definition at the line that grep gave, and brings that grep back (a recall, else the grep again)
when its lines are hidden. Finished: no use of the old name is left, and the tests pass.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import View

from tasks.base import Task, run_tests, write_files

OLD, NEW = "legacy_total", "order_total"
GREP = f"grep -rn {OLD} shop tests || echo 'no matches'"
TEST = "python3 -m unittest"
CHECK = "python3 -m py_compile shop/orders.py shop/reports.py"

ORDERS_SITES = [f"subtotal_{n} = {OLD}(batch_{n}.items)" for n in range(6)]
REPORTS_SITES = [f"row_total_{n} = {OLD}(report_{n}.lines)" for n in range(5)]
DEFINITION = f"def {OLD}(items):"
DOCSTRING = f"Totals come from ``{OLD}`` in shop.orders."


def _block(module: str, n: int, site: str | None) -> str:
    body = (
        f"def {module}_step_{n:03d}(batch_{n}, report_{n}=None):\n"
        f'    """Step {n} of the {module} pipeline: validate, price and record one batch."""\n'
        f"    checked_{n} = [item for item in batch_{n}.items if item.quantity > 0]\n"
        f"    if not checked_{n}:\n"
        f"        return None\n"
    )
    if site is not None:
        body += f"    {site}\n    return subtotal_or_row(locals())\n\n\n"
    else:
        body += f"    return len(checked_{n}) * {n + 1}\n\n\n"
    return body


def _module(module: str, header: str, sites: list[str], blocks: int) -> str:
    every = blocks // (len(sites) + 1)
    parts = [header]
    for n in range(blocks):
        site_index = n // every - 1 if n % every == 0 and n > 0 else None
        parts.append(
            _block(
                module, n, sites[site_index] if site_index is not None and site_index < len(sites) else None
            )
        )
    return "".join(parts)


def setup(repo: Path) -> None:
    orders_header = (
        '"""Orders: pricing and totals."""\n\n\n'
        f"{DEFINITION}\n"
        f'    """The total price of ``items``."""\n'
        "    return sum(item.price * item.quantity for item in items)\n\n\n"
        "def subtotal_or_row(names):\n    return next(v for k, v in names.items() if k.startswith(('subtotal', 'row')))\n\n\n"
    )
    reports_header = (
        f'"""Reports.\n\n{DOCSTRING}\n"""\n\nfrom shop.orders import {OLD}, subtotal_or_row\n\n\n'
    )
    tests = (
        "import unittest\nfrom types import SimpleNamespace as NS\n\n"
        f"from shop.orders import {NEW}\n\n\n"
        "class TestTotals(unittest.TestCase):\n"
        "    def test_total(self):\n"
        f"        self.assertEqual({NEW}([NS(price=2, quantity=3)]), 6)\n"
    )
    write_files(
        repo,
        {
            "shop/__init__.py": "",
            "shop/orders.py": _module("orders", orders_header, ORDERS_SITES, 170),
            "shop/reports.py": _module("reports", reports_header, REPORTS_SITES, 125),
            "tests/__init__.py": "",
            "tests/test_shop.py": tests,
        },
    )


def _first_grep(view: View) -> Any:
    greps = view.runs_of(GREP)
    return greps[0] if greps else None


def _grep_text(view: View) -> str:
    """What the model can read of its greps (outputs, excerpts, recalls)."""
    return "\n".join(view.sees(call) for call in view.runs_of(GREP))


def _seen(view: View, path: str, line: str) -> bool:
    """Whether ``line`` of ``path`` is visible: in a full read of it, or in a recall (and, for a model
    that works from its first grep, in a grep's lines)."""
    if view.early and line in _grep_text(view):
        return True
    for call in view.calls:
        shown = call.shown()
        if shown is None or shown.kind != "full":
            continue
        if call.name == "read" and call.args.get("path") == path and line in shown.text:
            return True
        if call.name == "obs_recall" and line in shown.text:
            return True
    return False


def _done(view: View, path: str, old: str) -> bool | None:
    """Whether an edit of ``path`` replaced ``old``; ``None`` when the context cannot tell (an old
    edit's arguments are packed): then the newest grep after the last edit says it."""
    edits = view.edits_of(path)
    if any(
        any(e.get("oldText") == old for e in call.args.get("edits") or [])
        and call.shown() is not None
        and (not call.failed or "[then_run:" in call.shown().text)
        for call in edits
    ):
        return True
    if not any("packed" in call.args for call in edits):
        return False
    greps = view.runs_of(GREP)
    last_edit = max(call.position for call in edits)
    if not greps or greps[-1].position < last_edit or greps[-1].shown() is None:
        return None
    shown = greps[-1].shown()
    return OLD not in old or old not in shown.excerpts() if shown.kind == "full" else None


def _edit(view: View, path: str, pairs: list[tuple[str, str]], what: str) -> dict[str, Any]:
    missing = [old for old, _ in pairs if not _seen(view, path, old)]
    if missing and view.early:
        return view.bring_back(_first_grep(view), OLD, {"text": "Listing the uses again.", "bash": GREP})
    if missing:
        # One search finds every use with its line (the matches come with context).
        read = view.latest_read(path)
        return view.bring_back(
            read, f"{OLD}(", {"text": f"Reading {path} to {what}.", "tool": "read", "args": {"path": path}}
        )
    args: dict[str, Any] = {"path": path, "edits": [{"oldText": o, "newText": n} for o, n in pairs]}
    if view.fusion:
        args["then_run"] = {"command": CHECK}
    return {"text": f"Renaming in {path}: {what}.", "tool": "edit", "args": args}


def _renamed(site: str) -> str:
    return site.replace(OLD, NEW)


def _passes(view: View) -> list[tuple[str, str, list[tuple[str, str]], str]]:
    orders, reports = "shop/orders.py", "shop/reports.py"
    return [
        (
            orders,
            "definition",
            [(DEFINITION, DEFINITION.replace(OLD, NEW))] + [(s, _renamed(s)) for s in ORDERS_SITES[:3]],
            "the definition and the first call sites",
        ),
        (orders, "rest", [(s, _renamed(s)) for s in ORDERS_SITES[3:]], "the remaining call sites"),
        (
            reports,
            "all",
            [
                (f"from shop.orders import {OLD},", f"from shop.orders import {NEW},"),
                (DOCSTRING, DOCSTRING.replace(OLD, NEW)),
            ]
            + [(s, _renamed(s)) for s in REPORTS_SITES],
            "the import, the docstring and the call sites",
        ),
    ]


def decide(view: View) -> dict[str, Any]:
    if not view.runs_of(GREP):
        return {"text": f"Finding every use of {OLD}.", "bash": GREP}
    for path, _, pairs, what in _passes(view):
        done = _done(view, path, pairs[0][0])
        if done is None:
            return {"text": "Checking which uses are left.", "bash": GREP}
        if not done:
            if path == "shop/reports.py" and not _reread(view) and view.early:
                return _reread_at_definition(view)
            if path == "shop/reports.py" and not _reread(view):
                return {
                    "text": "Checking the renamed definition.",
                    "tool": "read",
                    "args": {"path": "shop/orders.py", "offset": 1, "limit": 12},
                }
            return _edit(view, path, pairs, what)
    greps = view.runs_of(GREP)
    last_edit = max(c.position for c in view.calls if c.name == "edit")
    if greps[-1].position < last_edit:
        return {"text": "Checking that no use is left.", "bash": GREP}
    tests = view.runs_of(TEST)
    if not tests or tests[-1].position < last_edit or tests[-1].result is None:
        return {"text": "Running the tests.", "bash": TEST}
    if tests[-1].failed:
        return {"text": "The tests still fail after the rename; stopping here."}
    return {"text": f"Renamed {OLD} to {NEW} in shop/orders.py and shop/reports.py; the tests pass."}


def _reread_at_definition(view: View) -> dict[str, Any]:
    """The definition re-read at the line the first grep gave for it."""
    found = re.search(rf"shop/orders\.py:(\d+):{re.escape(DEFINITION)}", _grep_text(view))
    if found is None:
        return view.bring_back(_first_grep(view), OLD, {"text": "Listing the uses again.", "bash": GREP})
    return {
        "text": "Checking the renamed definition.",
        "tool": "read",
        "args": {"path": "shop/orders.py", "offset": int(found.group(1)), "limit": 12},
    }


def _reread(view: View) -> bool:
    return any(
        call.name == "read" and call.args.get("path") == "shop/orders.py" and call.args.get("offset")
        for call in view.calls
    )


def facts(text: str) -> list[str]:
    return [f"renamed {site}" for site in ORDERS_SITES + REPORTS_SITES if _renamed(site) in text]


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith(f"Renamed {OLD} to {NEW}"):
        return f"the answer is not the rename: {answer[:80]!r}"
    left = [
        str(p.relative_to(repo)) for p in sorted(repo.rglob("*.py")) if OLD in p.read_text(encoding="utf-8")
    ]
    if left:
        return f"{OLD} is still used in {', '.join(left)}"
    return run_tests(repo)


TASK = Task(
    name="read-and-refactor",
    description="rename a function across a 48 KB and a 36 KB module: reads, four edits, a re-read",
    prompts=(
        f"Rename the function `{OLD}` to `{NEW}` everywhere in this repository (definition, call sites, "
        "imports and docstrings), then check that nothing uses the old name and that the tests pass.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
