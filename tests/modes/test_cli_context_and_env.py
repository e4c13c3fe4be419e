"""Issue 32: pi 1.6's context file names (``AGENTS.override.md``, the ``.MD`` spellings, a nested
worktree's shadowing) and the markers tau sets for the commands it runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_run import faux, messages, session_files, tau

from tau.agent.session_setup import context_files


def test_override_wins_then_agents_then_the_capital_spellings(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    root = tmp_path / "repo"
    sub = root / "sub"
    sub.mkdir(parents=True)
    (root / "AGENTS.md").write_text("root agents")
    (root / "AGENTS.override.md").write_text("root override")
    (sub / "CLAUDE.MD").write_text("sub claude")
    assert [Path(path).name for path, _ in context_files(sub, agent)] == ["AGENTS.override.md", "CLAUDE.MD"]
    texts = [text for _, text in context_files(sub, agent)]
    assert texts == ["root override", "sub claude"]
    (sub / "AGENTS.MD").write_text("sub agents upper")
    assert [text for _, text in context_files(sub, agent)] == ["root override", "sub agents upper"]


def test_a_nested_worktree_does_not_load_its_main_checkouts_file_twice(tmp_path):
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main"]
    main = tmp_path / "main"
    main.mkdir()
    (main / "AGENTS.md").write_text("main instructions")
    subprocess.run([*git, "init", "-q"], cwd=main, check=True)
    subprocess.run([*git, "add", "."], cwd=main, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=main, check=True)
    subprocess.run(
        [*git, "worktree", "add", "-q", str(main / "wt" / "feature"), "-b", "f"], cwd=main, check=True
    )
    feature = main / "wt" / "feature"
    (feature / "AGENTS.md").write_text("worktree instructions")
    texts = [text for _, text in context_files(feature, tmp_path / "agent")]
    assert texts == ["worktree instructions"]
    # an ordinary subdirectory of the main checkout still inherits its file
    (main / "pkg").mkdir()
    assert [text for _, text in context_files(main / "pkg", tmp_path / "agent")] == ["main instructions"]


def test_the_override_reaches_the_model(project, tmp_path, isolated_agent_dir):
    (project / "AGENTS.override.md").write_text("Use tabs, always.")
    (project / "AGENTS.md").write_text("Use spaces.")
    done = tau(["-p", *faux(tmp_path, [{"text": "ok"}]), "hi"], project)
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    system = next(m for m in messages(path) if m["role"] == "system")
    context = system["sections"]["project_context"]
    assert "Use tabs, always." in context and "Use spaces." not in context


def test_commands_see_the_agent_markers_and_the_session(project, tmp_path, isolated_agent_dir):
    command = 'printf "%s|%s|%s|%s/%s" "$AI_AGENT" "$TAU_CODING_AGENT" "$TAU_SESSION_ID" "$TAU_PROVIDER" "$TAU_MODEL"'
    done = tau(
        ["-p", "--session-id", "env-check", *faux(tmp_path, [{"bash": command}, {"text": "done"}]), "run"],
        project,
    )
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    result = next(m for m in messages(path) if m["role"] == "toolResult")
    assert result["content"][0]["text"] == "tau|true|env-check|faux/faux-1"
