"""The kill switch: todo-loop stays inert while any of these is set, checked on every request.

- the file ``todo-loop.disabled`` in the agent dir (``~/.tau/agent``, ``$TAU_AGENT_DIR``);
- the file ``.tau/todo-loop.disabled`` in the project, only when the project is trusted;
- the environment variable ``TAU_TODO_LOOP_DISABLED=1``.

Creating or removing the file takes effect on the next request, without a reload: nothing is
read once at load.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tau.extension import project_config_dir

__all__ = ["DISABLED_FILE", "ENV_VAR", "kill_switch"]

DISABLED_FILE = "todo-loop.disabled"
ENV_VAR = "TAU_TODO_LOOP_DISABLED"


def kill_switch(
    agent_dir: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    *,
    project_trusted: bool,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """What disables the loop right now (the variable or the file's path), or ``None`` when it runs."""
    env = os.environ if environ is None else environ
    if env.get(ENV_VAR) == "1":
        return ENV_VAR
    candidates = [Path(agent_dir) / DISABLED_FILE]
    if project_trusted:
        candidates.append(project_config_dir(cwd) / DISABLED_FILE)
    for path in candidates:
        try:
            if path.exists():
                return str(path)
        except OSError:  # an unreadable location cannot hold a switch we can see
            continue
    return None
