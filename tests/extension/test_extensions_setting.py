"""pi 1.6's ``extensions`` setting and replaceable built-ins (settings.md "Resources", mcp.md
"Replace the built-in MCP support", sdk.md ``replaceable``).

- ``builtin:<name>`` entries: the bundled extensions load by default; ``-builtin:mcp`` turns one off,
  ``!builtin:*`` all; a project's ``+``/``-``/``!`` entry for a built-in wins over the user's (trusted
  projects only); ``-e builtin:<name>`` loads one all the same.
- Paths: files and folders, from the agent dir (user) or ``.tau`` (project), before that scope's
  conventional folder; ``!glob``, ``+path``, ``-path`` turn them and the conventional ones off and on.
- The bundled ``codemode``, ``tool-search`` and ``mcp`` are replaceable: another extension that
  registers one of their tools, commands or flags replaces the whole bundled extension.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from extension_fakes import FakeHost

from tau.agent.settings import Settings
from tau.extension import load_extensions
from tau.extension.loader import REPLACEABLE_EXTENSIONS
from tau_process import run_tau

REPO = Path(__file__).resolve().parents[2]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def names(runner: Any) -> list[str]:
    return [ext.name for ext in runner.extensions]


def write_extension(path: Path, command: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"def extension(tau):\n    tau.register_command({command!r}, 'x', lambda args, ctx: None)\n"
    )
    return path


def host_with(tmp_path: Path, user: dict[str, Any], project: dict[str, Any] | None = None) -> FakeHost:
    host = FakeHost(str(tmp_path))
    host.settings = Settings(dict(user), dict(project or {}))
    return host


# -- builtin: entries --------------------------------------------------------------------------


def test_minus_builtin_turns_one_bundled_extension_off_and_a_glob_turns_off_several(tmp_path):
    host = host_with(tmp_path, {"extensions": ["-builtin:mcp", "!builtin:todo*"]})
    runner = run(load_extensions(host, cwd=tmp_path, directory=tmp_path / "agent"))
    assert names(runner) == [
        "action-fusion",
        "observation-pack",
        "evidence-reducer",
        "online-compact",
        "codemode",
        "tool-search",
    ]
    assert runner.load_warnings == []


def test_every_built_in_off_and_one_forced_back_on(tmp_path):
    host = host_with(tmp_path, {"extensions": ["!builtin:*", "+builtin:codemode"]})
    runner = run(load_extensions(host, cwd=tmp_path, directory=tmp_path / "agent"))
    assert names(runner) == ["codemode"]


def test_a_trusted_project_entry_wins_over_the_user_s_and_an_untrusted_one_is_not_read(tmp_path):
    user = {"extensions": ["-builtin:mcp"]}
    project = {"extensions": ["+builtin:mcp", "-builtin:codemode"]}
    trusted = run(
        load_extensions(host_with(tmp_path, user, project), cwd=tmp_path, trusted=True, directory=tmp_path)
    )
    assert "mcp" in names(trusted) and "codemode" not in names(trusted)
    # Settings.load leaves an untrusted project's file out; a project part given anyway is ignored.
    untrusted = run(
        load_extensions(host_with(tmp_path, user, project), cwd=tmp_path, trusted=False, directory=tmp_path)
    )
    assert "mcp" not in names(untrusted) and "codemode" in names(untrusted)


def test_e_builtin_loads_what_the_setting_turns_off(tmp_path):
    host = host_with(tmp_path, {"extensions": ["-builtin:mcp"]})
    runner = run(load_extensions(host, cli_paths=["builtin:mcp"], cwd=tmp_path, directory=tmp_path))
    assert names(runner).count("mcp") == 1 and runner.extensions[0].name == "mcp"


def test_an_unknown_built_in_is_a_warning_pi_s_llama_cpp_is_not(tmp_path):
    host = host_with(tmp_path, {"extensions": ["-builtin:nope", "-builtin:llama.cpp", "!builtin:x*"]})
    runner = run(load_extensions(host, cwd=tmp_path, directory=tmp_path))
    assert runner.load_warnings == [
        'extensions setting: no built-in extension named "nope" (known: todo, todo-loop, action-fusion, '
        "observation-pack, evidence-reducer, online-compact, codemode, tool-search, mcp)"
    ]


# -- paths -------------------------------------------------------------------------------------


def test_settings_paths_load_before_the_scope_s_folder_and_patterns_turn_them_off(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "proj"
    write_extension(agent / "mine" / "a.py", "a")
    write_extension(agent / "mine" / "skip.py", "skip")
    write_extension(agent / "extensions" / "auto.py", "auto")
    write_extension(agent / "extensions" / "off.py", "off")
    write_extension(project / ".tau" / "exts" / "p.py", "p")
    write_extension(project / ".tau" / "extensions" / "pauto.py", "pauto")
    write_extension(tmp_path / "elsewhere" / "abs.py", "abs")
    user = {
        "extensions": ["mine", "!mine/skip.py", "-extensions/off.py", str(tmp_path / "elsewhere" / "abs.py")]
    }
    host = host_with(project, user, {"extensions": ["exts", "missing-folder"]})
    runner = run(load_extensions(host, cwd=project, trusted=True, directory=agent, no_extensions=False))
    files = [ext.name for ext in runner.extensions if ext.source != "bundled"]
    assert files == ["p", "pauto", "a", "abs", "auto"]
    assert [ext.source for ext in runner.extensions][:5] == ["project", "project", "user", "user", "user"]


# -- replaceable built-ins ---------------------------------------------------------------------


def test_codemode_tool_search_and_mcp_are_the_replaceable_ones():
    assert REPLACEABLE_EXTENSIONS == ("codemode", "tool-search", "mcp")


def _replacement(tau: Any) -> None:
    async def search(call_id, params, signal, on_update, ctx):
        from tau.extension import ToolResult

        return ToolResult(content=[{"type": "text", "text": "mine"}])

    from tau.extension import ToolDefinition

    tau.register_command("mcp", "my MCP support", lambda args, ctx: None)
    tau.register_tool(
        ToolDefinition(
            name="tool_search",
            label="s",
            description="my search",
            parameters={"type": "object"},
            execute=search,
        )
    )


def test_an_extension_registering_slash_mcp_and_tool_search_replaces_the_bundled_ones(tmp_path):
    host = host_with(tmp_path, {})
    runner = run(load_extensions(host, cli_paths=[_replacement], cwd=tmp_path, directory=tmp_path))
    assert "mcp" not in names(runner) and "tool-search" not in names(runner)
    assert "codemode" in names(runner) and "todo" in names(runner)  # the others stay
    assert [c["name"] for c in runner.get_commands() if c["name"].startswith("mcp")] == ["mcp"]
    assert host.tools["tool_search"].description == "my search"
    assert runner.load_warnings == [
        f"Extension {runner.extensions[0].path} registers tool `tool_search`, so built-in extension "
        "`tool-search` was not loaded. To use `tool-search`, check that `tau config` lists it as on under "
        "Built-in, then disable or remove the other extension. We recommend only having one or the other "
        "loaded at a time.",
        f"Extension {runner.extensions[0].path} registers command `/mcp`, so built-in extension `mcp` was "
        "not loaded. To use `mcp`, check that `tau config` lists it as on under Built-in, then disable or "
        "remove the other extension. We recommend only having one or the other loaded at a time.",
    ]
    # nothing of the bundled mcp extension is left to connect servers
    assert not runner.has_handlers("mcp_servers_change")


def test_a_replacement_loaded_after_an_explicit_built_in_still_wins(tmp_path):
    host = host_with(tmp_path, {})
    runner = run(
        load_extensions(
            host, cli_paths=["builtin:tool-search", _replacement], cwd=tmp_path, no_extensions=True
        )
    )
    assert names(runner) == [runner.extensions[0].name] and "tool-search" not in names(runner)
    assert host.tools["tool_search"].description == "my search"


def test_non_replaceable_bundled_extensions_are_not_dropped(tmp_path):
    def todo_command(tau: Any) -> None:
        tau.register_command("todo", "mine", lambda args, ctx: None)

    runner = run(
        load_extensions(host_with(tmp_path, {}), cli_paths=[todo_command], cwd=tmp_path, directory=tmp_path)
    )
    assert "todo" in names(runner) and runner.load_warnings == []


# -- tau config ----------------------------------------------------------------------------------


def _tau_config(cwd: Path, agent: Path, *args: str) -> subprocess.CompletedProcess:
    return run_tau(["config", *args], cwd=cwd, env={"TAU_AGENT_DIR": agent, "HOME": cwd.parent})


def test_tau_config_lists_the_built_ins_on_and_off_as_pi_config_groups_them(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "proj"
    agent.mkdir()
    (project / ".tau").mkdir(parents=True)
    (agent / "settings.json").write_text(json.dumps({"extensions": ["-builtin:mcp", "-builtin:codemode"]}))
    (project / ".tau" / "settings.json").write_text(json.dumps({"extensions": ["+builtin:mcp"]}))
    write_extension(agent / "extensions" / "mine.py", "mine")
    done = _tau_config(project, agent, "--approve")
    assert done.returncode == 0, done.stderr
    listing = done.stdout[done.stdout.index("extensions (") :].splitlines()[1:]
    assert listing == [
        f"  User ({agent}/)",
        "    [x] mine.py",
        "  Built-in",
        "    [x] action-fusion",
        "    [ ] codemode",
        "    [x] evidence-reducer",
        "    [x] observation-pack",
        "    [x] online-compact",
        "    [x] todo",
        "    [x] todo-loop",
        "    [x] tool-search",
        "  Built-in (project override)",
        "    [x] mcp",
    ]
    as_json = json.loads(_tau_config(project, agent, "--json", "--no-approve").stdout)
    mcp = next(item for item in as_json["extensions"] if item["path"] == "builtin:mcp")
    assert mcp == {"group": "Built-in", "name": "mcp", "path": "builtin:mcp", "enabled": False}
