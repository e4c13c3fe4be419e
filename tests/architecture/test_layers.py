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


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
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


def test_every_import_points_downward():
    violations = []
    for path in sorted(SRC.rglob("*.py")):
        own = layer_of(module_name(path))
        if own is None:
            continue
        own_name = LAYERS[own][0]
        for line, target in imported_modules(path):
            target_layer = layer_of(target)
            if target_layer is None:
                continue
            target_name = LAYERS[target_layer][0]
            allowed = ALLOWED_OVERRIDES.get(own_name)
            ok = target_name in allowed if allowed is not None else target_layer <= own
            if not ok:
                violations.append(
                    f"{path.relative_to(SRC.parent)}:{line} ({own_name}) imports {target} ({target_name})"
                )
    assert not violations, "imports against the layer order:\n" + "\n".join(violations)


def test_the_checker_sees_a_violation(tmp_path):
    """Guard against a checker that passes vacuously."""
    assert layer_of("tau.session.store") < layer_of("tau.llm.types")
    assert layer_of("tau.modes.run") > layer_of("tau.extension")
    assert layer_of("tau.sdk.session") == layer_of("tau.modes.runtime")
    assert layer_of("tau.cli") == len(LAYERS) - 1
