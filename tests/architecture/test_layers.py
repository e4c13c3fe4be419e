"""The layer table of docs/architecture.md: every module imports only from its own layer or below."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tau"

# bottom first; a module may import from its own layer and any layer listed before it
LAYERS = [
    ("common", ["tau.common"]),
    ("session", ["tau.session"]),
    ("llm", ["tau.llm"]),
    ("tools", ["tau.tools"]),
    ("agent", ["tau.agent"]),
    ("extension", ["tau.extension"]),
    ("bundled", ["tau.bundled"]),
    ("modes", ["tau.modes", "tau.sdk"]),
    ("cli", ["tau.cli", "tau.__main__"]),
]
# bundled extensions may use only the public extension API (and the shared primitives)
ALLOWED_OVERRIDES = {"bundled": {"common", "extension", "bundled"}}


def layer_of(module: str) -> int | None:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return None


def module_name(path: Path, root: Path = SRC.parent) -> str:
    """``tau.x.y`` of a file under ``root`` (the directory holding the ``tau`` package)."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path = SRC.parent) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    own = module_name(path, root)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return [(line, name) for line, name in found if name == "tau" or name.startswith("tau.")]


def violations(root: Path) -> list[str]:
    """Every import of the ``tau`` package under ``root`` against the layer order, as ``file:line`` lines."""
    found = []
    for path in sorted((root / "tau").rglob("*.py")):
        own = layer_of(module_name(path, root))
        if own is None:
            continue
        own_name = LAYERS[own][0]
        for line, target in imported_modules(path, root):
            target_layer = layer_of(target)
            if target_layer is None:
                continue
            target_name = LAYERS[target_layer][0]
            allowed = ALLOWED_OVERRIDES.get(own_name)
            ok = target_name in allowed if allowed is not None else target_layer <= own
            if not ok:
                found.append(f"{path.relative_to(root)}:{line} ({own_name}) imports {target} ({target_name})")
    return found


def test_every_import_points_downward():
    found = violations(SRC.parent)
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def test_the_checker_sees_a_violation(tmp_path):
    """Guard against a checker that passes vacuously: a tree with real upward imports (absolute,
    relative, and a bundled extension reaching past the extension API) is caught line by line, and
    the downward imports beside them are not."""
    session = tmp_path / "tau" / "session"
    session.mkdir(parents=True)
    (session / "leaky.py").write_text(
        "from tau.common import jsjson\n"  # downward
        "from tau.llm.types import Model\n"  # session -> llm
        "from ..agent import session\n"  # relative: tau.agent
        "import tau.modes.run\n"
        "from . import store\n"  # its own layer
    )
    todo = tmp_path / "tau" / "bundled" / "todo"
    todo.mkdir(parents=True)
    (todo / "ext.py").write_text(
        "from tau.extension import ToolDefinition\n"  # the public API: allowed
        "from tau.agent.session import AgentSession\n"  # below bundled, but not the extension API
    )
    assert violations(tmp_path) == [
        "tau/bundled/todo/ext.py:2 (bundled) imports tau.agent.session (agent)",
        "tau/session/leaky.py:2 (session) imports tau.llm.types (llm)",
        "tau/session/leaky.py:3 (session) imports tau.agent (agent)",
        "tau/session/leaky.py:4 (session) imports tau.modes.run (modes)",
    ]
    assert layer_of("tau.session.store") < layer_of("tau.llm.types")
    assert layer_of("tau.modes.run") > layer_of("tau.extension")
    assert layer_of("tau.sdk.session") == layer_of("tau.modes.runtime")
    assert layer_of("tau.cli") == len(LAYERS) - 1
