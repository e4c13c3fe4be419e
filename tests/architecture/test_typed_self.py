"""No method types its ``self`` as ``Any`` (issue 28).

A method with ``self: Any`` reads state that no class declares: mypy checks nothing it does with
``self``, and a structure tracer following a request from the command line to the session file stops
there. A mixin-like base declares the state and operations it uses instead (as
``tau.session.storage.FileStorage`` does).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tau"


def untyped_selves(tree: ast.AST) -> list[tuple[str, int]]:
    """``(method name, line)`` of the methods of every class in ``tree`` that annotate ``self`` as Any."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.args.args:
                first = item.args.args[0]
                annotation = first.annotation
                if (
                    first.arg == "self"
                    and annotation is not None
                    and ast.unparse(annotation) in ("Any", "typing.Any")
                ):
                    found.append((f"{node.name}.{item.name}", item.lineno))
    return found


def test_no_method_types_self_as_any():
    offenders = [
        f"{path.relative_to(SRC.parent)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for name, line in untyped_selves(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def test_the_check_finds_an_untyped_self():
    source = "from typing import Any\nclass Part:\n    def save(self: Any, entry: dict) -> None:\n        self._file.write(entry)\n"
    assert untyped_selves(ast.parse(source)) == [("Part.save", 3)]
