"""Issues 6–9 (todo, todo-loop, Action Fusion/ObservationPack, reducer/OCC): every bundled extension
is built on the public extension API only, and each has its page under ``docs/extensions/``.

``tests/architecture/test_layers.py`` checks ``import`` statements. This file checks what it does not:
that it sees every module of every bundled extension, that the extensions do not reach into each
other (only the shared ``sol_common`` helpers and each other's ``wire`` module, the names their
session entries carry), and that no module name handed to ``importlib`` at
run time points outside ``tau.common``/``tau.extension``/``tau.bundled``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from tau.extension import BUNDLED_EXTENSIONS

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "tau"
DOCS = ROOT / "docs" / "extensions"
SHARED = ("tau.bundled.sol_common", "tau.bundled.todo_state")  # shared helpers, not extensions
# An extension's wire format (what it writes into a session file) is public: another may read it.
WIRE = re.compile(r"tau\.bundled\.\w+\.wire")
DOC_OF = {
    "todo": "todo.md",
    "todo-loop": "todo-loop.md",
    "action-fusion": "sol.md",
    "observation-pack": "sol.md",
    "evidence-reducer": "sol-reducer-occ.md",
    "online-compact": "sol-reducer-occ.md",
    "codemode": "../codemode.md",
    "tool-search": "../mcp.md",
    "mcp": "../mcp.md",
}


def load_layer_checker():
    spec = importlib.util.spec_from_file_location(
        "layer_checker", ROOT / "tests" / "architecture" / "test_layers.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def package_of(name: str) -> Path:
    """The directory (or module file) the loader finds for a bundled extension."""
    for candidate in BUNDLED_EXTENSIONS[name]:
        path = SRC.parent / Path(*candidate.split("."))
        if path.is_dir():
            return path
        if path.with_suffix(".py").is_file():
            return path.with_suffix(".py")
    raise AssertionError(f"bundled extension {name}: none of {BUNDLED_EXTENSIONS[name]} exists under src/")


def sources(package: Path) -> list[Path]:
    return sorted(package.rglob("*.py")) if package.is_dir() else [package]


def test_every_bundled_extension_has_a_documented_page():
    assert set(BUNDLED_EXTENSIONS) == set(DOC_OF), "a bundled extension without a documented page here"
    for name, page in DOC_OF.items():
        text = (DOCS / page).read_text(encoding="utf-8")
        assert f"`{name}`" in text or f'"{name}"' in text, f"docs/extensions/{page} never names `{name}`"


@pytest.mark.parametrize("name", sorted(BUNDLED_EXTENSIONS))
def test_the_layer_checker_sees_every_module_as_bundled(name):
    checker = load_layer_checker()
    files = sources(package_of(name))
    assert files
    for path in files:
        module = checker.module_name(path)
        assert checker.LAYERS[checker.layer_of(module)][0] == "bundled", module


@pytest.mark.parametrize("name", sorted(BUNDLED_EXTENSIONS))
def test_imports_stay_in_the_public_api_the_extension_and_the_shared_helpers(name):
    checker = load_layer_checker()
    package = package_of(name)
    own = checker.module_name(package if package.is_dir() else package.with_suffix(""))
    if package.is_dir() and package.joinpath("__init__.py").exists():
        own = checker.module_name(package / "__init__.py")
    allowed = ("tau.common", "tau.extension", own, *SHARED)
    wrong = []
    for path in sources(package):
        for line, target in checker.imported_modules(path):
            if target == "tau" or not (
                any(target == a or target.startswith(a + ".") for a in allowed) or WIRE.fullmatch(target)
            ):
                wrong.append(f"{path.relative_to(SRC.parent)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


DOTTED = re.compile(r"tau(\.[A-Za-z_]\w*)+")


def test_module_names_loaded_at_run_time_stay_in_the_allowed_layers():
    """``importlib.import_module("tau.agent...")`` would pass the import-statement check."""
    wrong = []
    for path in sorted((SRC / "bundled").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            named = (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and DOTTED.fullmatch(node.value)
            )
            if named and not node.value.startswith(("tau.common", "tau.extension", "tau.bundled")):
                wrong.append(f"{path.relative_to(SRC.parent)}:{node.lineno} names {node.value}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
                wrong.append(f"{path.relative_to(SRC.parent)}:{node.lineno} calls __import__")
    assert not wrong, "\n".join(wrong)


def test_the_run_time_check_sees_a_violation(tmp_path):
    """Guard against a check that passes vacuously."""
    tree = ast.parse('importlib.import_module("tau.agent.session")')
    names = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and DOTTED.fullmatch(str(n.value))
    ]
    assert names == ["tau.agent.session"]


def test_a_wire_module_is_a_leaf():
    """Reading another extension's wire format never loads its internals: a ``wire`` module imports
    only the extension API and the shared primitives."""
    checker = load_layer_checker()
    wires = sorted((SRC / "bundled").glob("*/wire.py"))
    assert {path.parent.name for path in wires} >= {"fusion", "obspack", "reducer", "occ"}
    wrong = [
        f"{path.relative_to(SRC.parent)}:{line} imports {target}"
        for path in wires
        for line, target in checker.imported_modules(path)
        if not target.startswith(("tau.common", "tau.extension"))
    ]
    assert not wrong, "\n".join(wrong)
