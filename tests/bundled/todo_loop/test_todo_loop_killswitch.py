"""The kill switch: agent-dir file, trusted-project file, environment variable."""

from __future__ import annotations

from tau.bundled.todo_loop.killswitch import kill_switch


def test_nothing_set_means_running(tmp_path):
    assert kill_switch(tmp_path / "agent", tmp_path / "proj", project_trusted=True, environ={}) is None


def test_agent_dir_file(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "todo-loop.disabled").touch()
    assert kill_switch(agent, tmp_path, project_trusted=False, environ={}) == str(
        agent / "todo-loop.disabled"
    )


def test_project_file_counts_only_when_trusted(tmp_path):
    (tmp_path / ".tau").mkdir()
    (tmp_path / ".tau" / "todo-loop.disabled").touch()
    assert kill_switch(tmp_path / "agent", tmp_path, project_trusted=False, environ={}) is None
    assert kill_switch(tmp_path / "agent", tmp_path, project_trusted=True, environ={}) is not None


def test_environment_variable_is_exactly_one(tmp_path):
    args = (tmp_path / "agent", tmp_path)
    assert kill_switch(*args, project_trusted=False, environ={"TAU_TODO_LOOP_DISABLED": "1"}) == (
        "TAU_TODO_LOOP_DISABLED"
    )
    assert kill_switch(*args, project_trusted=False, environ={"TAU_TODO_LOOP_DISABLED": "0"}) is None


def test_removing_the_file_turns_the_loop_back_on(tmp_path):
    switch = tmp_path / "todo-loop.disabled"
    switch.touch()
    assert kill_switch(tmp_path, tmp_path, project_trusted=False, environ={}) is not None
    switch.unlink()
    assert kill_switch(tmp_path, tmp_path, project_trusted=False, environ={}) is None
