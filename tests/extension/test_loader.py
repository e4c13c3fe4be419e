"""Discovery and load order: -e, trusted project, agent dir, entry points, bundled; failures reported."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from extension_fakes import FakeHost

from tau.common.paths import agent_dir
from tau.extension import ExtensionRunner, load_extensions
from tau.extension import loader as loader_module


def write_extension(path: Path, label: str, *, body: str = "", is_async: bool = False) -> Path:
    """A module whose factory registers the command ``label`` (``body``: more lines at module level)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = "async " if is_async else ""
    lines = [
        body,
        f"{prefix}def extension(tau):",
        '    tau.on("agent_start", lambda event, ctx: None)',
        f"    tau.register_command({label!r}, 'from {label}', lambda args, ctx: None)",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def loaded_names(runner: ExtensionRunner) -> list[str]:
    return [ext.name for ext in runner.extensions]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def no_bundled(monkeypatch):
    monkeypatch.setattr(loader_module, "BUNDLED_EXTENSIONS", {})


def test_cli_then_trusted_project_then_agent_dir(tmp_path, no_bundled):
    project = tmp_path / "project"
    write_extension(project / ".tau" / "extensions" / "proj.py", "proj")
    write_extension(agent_dir() / "extensions" / "user_b.py", "user_b")
    package = agent_dir() / "extensions" / "user_a"
    write_extension(package / "__init__.py", "user_a", body="from .helper import VALUE\nassert VALUE == 7")
    (package / "helper.py").write_text("VALUE = 7\n", encoding="utf-8")
    (agent_dir() / "extensions" / "notes.txt").write_text("not an extension", encoding="utf-8")
    cli2 = write_extension(tmp_path / "cli2.py", "cli2", is_async=True)
    cli1 = write_extension(tmp_path / "cli1.py", "cli1")

    runner = run(
        load_extensions(FakeHost(str(project)), cli_paths=[cli2, str(cli1)], cwd=project, trusted=True)
    )
    assert runner.load_errors == []
    assert loaded_names(runner) == ["cli2", "cli1", "proj", "user_a", "user_b"]
    assert [ext.source for ext in runner.extensions] == ["cli", "cli", "project", "user", "user"]
    assert [c["name"] for c in runner.get_commands()] == ["cli2", "cli1", "proj", "user_a", "user_b"]


def test_an_untrusted_project_loads_no_project_extensions(tmp_path, no_bundled):
    write_extension(tmp_path / ".tau" / "extensions" / "proj.py", "proj")
    runner = run(load_extensions(None, cwd=tmp_path, trusted=False))
    assert loaded_names(runner) == []
    assert runner.create_context().is_project_trusted() is False


def test_no_extensions_keeps_only_the_cli_paths(tmp_path, no_bundled):
    write_extension(agent_dir() / "extensions" / "user.py", "user")
    cli = write_extension(tmp_path / "cli.py", "cli")
    runner = run(load_extensions(None, cli_paths=[cli], cwd=tmp_path, no_extensions=True))
    assert loaded_names(runner) == ["cli"]


def test_a_failing_module_is_reported_with_its_path_and_the_others_still_load(tmp_path, no_bundled, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("def extension(tau):\n    raise RuntimeError('no config')\n", encoding="utf-8")
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def extension(tau)\n", encoding="utf-8")
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n", encoding="utf-8")
    good = write_extension(tmp_path / "good.py", "good")
    runner = run(
        load_extensions(None, cli_paths=[broken, syntax, empty, good, tmp_path / "gone.py"], cwd=tmp_path)
    )
    assert loaded_names(runner) == ["good"]
    errors = {Path(e["path"]).name: e["error"] for e in runner.load_errors}
    assert errors["broken.py"] == "Failed to load extension: RuntimeError: no config"
    assert errors["syntax.py"] == "Failed to load extension: SyntaxError: expected ':' (syntax.py, line 1)"
    assert (
        errors["empty.py"] == f"Failed to load extension: TypeError: {empty} does not define extension(tau)"
    )
    assert "gone.py" in errors
    assert (
        f"Extension error ({broken}): Failed to load extension: RuntimeError: no config"
        in capsys.readouterr().err
    )


def test_a_failed_factory_leaves_no_handlers_or_commands(tmp_path, no_bundled):
    half = tmp_path / "half.py"
    half.write_text(
        "def extension(tau):\n"
        "    tau.register_command('half', '', lambda a, c: None)\n"
        "    tau.register_flag('half-flag', type='boolean', default=True)\n"
        "    tau.events.on('news', lambda data: None)\n"
        "    raise ValueError('late')\n",
        encoding="utf-8",
    )
    runner = run(load_extensions(None, cli_paths=[half], cwd=tmp_path))
    assert runner.extensions == [] and runner.get_commands() == []
    assert runner.flag_values == {} and runner.event_bus._handlers == {"news": []}


def test_a_cli_directory_is_scanned_and_a_path_loads_once(tmp_path, no_bundled):
    folder = tmp_path / "exts"
    one = write_extension(folder / "one.py", "one")
    write_extension(folder / "two.py", "two")
    runner = run(load_extensions(None, cli_paths=[one, folder], cwd=tmp_path))
    assert loaded_names(runner) == ["one", "two"]


def make_distribution(site: Path, name: str, entry_points: str) -> None:
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def test_entry_points_load_after_the_agent_dir(tmp_path, monkeypatch, no_bundled):
    site = tmp_path / "site"
    write_extension(site / "tau_ep_module.py", "ep_module")
    (site / "tau_ep_func.py").write_text(
        "def setup(tau):\n    tau.register_command('ep_func', '', lambda a, c: None)\n", encoding="utf-8"
    )
    make_distribution(
        site, "tau-ep-demo", "[tau.extensions]\nzeta = tau_ep_module\nalpha = tau_ep_func:setup\n"
    )
    monkeypatch.syspath_prepend(str(site))
    write_extension(agent_dir() / "extensions" / "user.py", "user")
    runner = run(load_extensions(None, cwd=tmp_path))
    assert [(ext.path, ext.source) for ext in runner.extensions] == [
        (str(agent_dir() / "extensions" / "user.py"), "user"),
        ("entry-point:alpha", "package"),
        ("entry-point:zeta", "package"),
    ]
    assert [c["name"] for c in runner.get_commands()] == ["user", "ep_func", "ep_module"]
    for name in ("tau_ep_module", "tau_ep_func"):
        sys.modules.pop(name, None)


def test_bundled_extensions_load_last_in_registry_order_and_can_be_disabled(tmp_path, monkeypatch):
    site = tmp_path / "site"
    for name in ("tau_bundled_first", "tau_bundled_second", "tau_bundled_third"):
        write_extension(site / f"{name}.py", name)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(
        loader_module,
        "BUNDLED_EXTENSIONS",
        {
            "first": ("tau_bundled_missing", "tau_bundled_first"),
            "second": ("tau_bundled_second",),
            "absent": ("tau_bundled_absent",),
            "third": ("tau_bundled_third",),
        },
    )
    cli = write_extension(tmp_path / "cli.py", "cli")
    runner = run(load_extensions(None, cli_paths=[cli], cwd=tmp_path))
    assert [ext.path for ext in runner.extensions] == [
        str(cli),
        "bundled:first",
        "bundled:second",
        "bundled:third",
    ]

    host = FakeHost(str(tmp_path))
    host.settings.global_settings["disabledExtensions"] = ["third"]
    runner = run(load_extensions(host, cwd=tmp_path, disabled=["first"]))
    assert [ext.name for ext in runner.extensions] == ["second"]
    runner = run(load_extensions(None, cwd=tmp_path, no_extensions=True))
    assert runner.extensions == []


def test_the_registry_names_the_bundled_extensions_in_decided_order():
    assert list(loader_module.BUNDLED_EXTENSIONS) == [
        "todo",
        "todo-loop",
        "action-fusion",
        "observation-pack",
        "evidence-reducer",
        "online-compact",
        "codemode",
        "tool-search",
        "mcp",
    ]


def test_an_explicit_bundled_extension_loads_under_no_extensions(tmp_path):
    """``-e builtin:codemode`` (pi's spelling) loads that bundled extension even with ``-ne``; an
    unknown name is a load error naming the known ones."""

    async def load() -> Any:
        return await loader_module.load_extensions(
            cli_paths=["builtin:codemode", "bundled:nothing"], cwd=tmp_path, no_extensions=True
        )

    runner = asyncio.run(load())
    assert [ext.path for ext in runner.extensions] == ["bundled:codemode"]
    assert "codemode" in runner.extensions[0].tools
    (error,) = runner.load_errors
    assert error["path"] == "bundled:nothing" and "known: todo, todo-loop" in error["error"]


def test_project_trust_is_asked_of_an_untrusted_pass_then_project_extensions_load(tmp_path, no_bundled):
    write_extension(tmp_path / ".tau" / "extensions" / "proj.py", "proj")
    (agent_dir() / "extensions").mkdir(parents=True, exist_ok=True)
    (agent_dir() / "extensions" / "trust.py").write_text(
        "def extension(tau):\n"
        "    tau.on('project_trust', lambda event, ctx: {'trusted': 'yes', 'remember': False}"
        " if event.cwd.endswith(ctx.cwd[-8:]) else None)\n",
        encoding="utf-8",
    )

    async def decide() -> ExtensionRunner:
        pre = await load_extensions(None, cwd=tmp_path, trusted=False)
        assert loaded_names(pre) == ["trust"]
        answer = await pre.emit_project_trust(str(tmp_path))
        return await load_extensions(None, cwd=tmp_path, trusted=answer["trusted"] == "yes")

    runner = run(decide())
    assert loaded_names(runner) == ["proj", "trust"]
    assert runner.create_context().is_project_trusted() is True
