"""Which shell runs commands, and how their process groups are killed (pi 1.6 ``utils/shell.ts``).

Commands run detached in their own session (so their own process group); aborting or timing out
sends SIGKILL to the whole group, which also reaches background processes the command started.
Every live group is tracked, so the host can kill them all when it is itself told to stop.
"""

from __future__ import annotations

import os
import signal

from tau.common.dataclass import dataclass

__all__ = ["ShellConfig", "kill_process_group", "kill_tracked_groups", "resolve_shell", "shell_environment"]

_tracked: set[int] = set()


@dataclass(frozen=True)
class ShellConfig:
    """The shell a command runs in: its executable and the arguments before the command."""

    shell: str
    args: tuple[str, ...]


def resolve_shell(shell_path: str | None = None) -> ShellConfig:
    """The configured ``shellPath``, else ``/bin/bash``, else ``bash`` on PATH, else ``sh``."""
    if shell_path:
        if os.path.exists(shell_path):
            return ShellConfig(shell_path, ("-c",))
        raise FileNotFoundError(f"Custom shell path not found: {shell_path}")
    if os.path.exists("/bin/bash"):
        return ShellConfig("/bin/bash", ("-c",))
    import shutil  # only without /bin/bash: importing shutil (bz2, lzma) costs ~3 ms at start

    found = shutil.which("bash")
    return ShellConfig(found, ("-c",)) if found else ShellConfig("sh", ("-c",))


_SESSION_VARIABLES = (
    "TAU_SESSION_ID",
    "TAU_SESSION_FILE",
    "TAU_PROVIDER",
    "TAU_MODEL",
    "TAU_REASONING_LEVEL",
)


def shell_environment(session_variables: dict[str, str]) -> dict[str, str]:
    """tau's environment with the ``TAU_*`` session variables of this call (stale inherited ones removed)."""
    env = {name: value for name, value in os.environ.items() if name not in _SESSION_VARIABLES}
    env.update(session_variables)
    return env


def track_group(pid: int) -> None:
    _tracked.add(pid)


def untrack_group(pid: int) -> None:
    _tracked.discard(pid)


def kill_process_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid``; fall back to the process alone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass  # already gone


def kill_tracked_groups() -> None:
    """Kill every command group still running (call on SIGTERM/SIGHUP of the host)."""
    for pid in list(_tracked):
        kill_process_group(pid)
    _tracked.clear()
