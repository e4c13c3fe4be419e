"""tau as a program in the tests: ``python -m tau`` with this checkout's ``src`` first on the import path.

Every test that starts tau (or one of its modules, ``tau.modes.savings``, ``tau.modes.demo``) as a
child process goes through here, so the command, the import path and the isolation are written once:

- :func:`tau_command`: ``[python, "-m", "tau", *args]`` (``module=`` for another of tau's modules);
- :func:`tau_env`: the test's environment (the root conftest has already pointed ``HOME`` and
  ``TAU_AGENT_DIR`` at the test's own temporary directories), ``PYTHONPATH`` set to this checkout's
  ``src``, ``home=`` / ``agent_dir=`` for a run that needs other ones, and ``extra`` on top (a
  ``None`` value removes the variable);
- :func:`run_tau`: run it to the end, stdin empty unless given, output captured (text unless
  ``text=False``), with a generous timeout; :func:`popen_tau` starts it and returns at once.

Tests use the root conftest's ``run_tau`` fixture (``cwd`` defaults to the test's ``tmp_path``);
helper modules that run tau for several tests import these functions.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["REPO", "SRC", "popen_tau", "run_tau", "tau_command", "tau_env"]

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"

PathLike = str | os.PathLike[str]


def tau_command(*args: PathLike, module: str = "tau") -> list[str]:
    """``python -m tau ARGS`` (or ``-m MODULE``) with the interpreter running the tests."""
    return [sys.executable, "-m", module, *(os.fspath(arg) for arg in args)]


def tau_env(
    extra: Mapping[str, PathLike | None] | None = None,
    *,
    home: PathLike | None = None,
    agent_dir: PathLike | None = None,
    path: Sequence[PathLike] = (),
) -> dict[str, str]:
    """The environment of a tau child process: this one's, with this checkout's ``src`` to import.

    Args:
        extra: Variables set on top; a ``None`` value removes the variable.
        home: ``HOME`` of the run (default: the test's, set by the root conftest).
        agent_dir: ``TAU_AGENT_DIR`` of the run (default: the test's).
        path: More directories after ``src`` on ``PYTHONPATH`` (factories, support modules).
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.fspath(entry) for entry in (SRC, *path))
    if home is not None:
        env["HOME"] = os.fspath(home)
    if agent_dir is not None:
        env["TAU_AGENT_DIR"] = os.fspath(agent_dir)
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = os.fspath(value)
    return env


def run_tau(
    args: Sequence[PathLike],
    *,
    cwd: PathLike | None = None,
    env: Mapping[str, PathLike | None] | None = None,
    stdin: str | bytes | None = None,
    timeout: float = 120,
    text: bool = True,
    module: str = "tau",
    **run_options: Any,
) -> subprocess.CompletedProcess[Any]:
    """Run ``python -m tau ARGS`` to the end and return what it did.

    Args:
        args: The command line after ``tau``.
        cwd: The working directory (default: this process's).
        env: Variables over :func:`tau_env`'s (``None`` removes one).
        stdin: What the program reads; ``None``: an empty stdin (``/dev/null``).
        timeout: Seconds before the run is killed and the test fails.
        text: Output as ``str`` (else ``bytes``).
        module: ``-m MODULE`` in place of ``tau``.
        run_options: More :func:`subprocess.run` arguments (``check=True``, ``env``-free ones).
    """
    return subprocess.run(
        tau_command(*args, module=module),
        cwd=cwd,
        env=tau_env(env),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=text,
        timeout=timeout,
        **run_options,
    )


def popen_tau(
    args: Sequence[PathLike],
    *,
    cwd: PathLike | None = None,
    env: Mapping[str, PathLike | None] | None = None,
    module: str = "tau",
    **popen_options: Any,
) -> subprocess.Popen[Any]:
    """Start ``python -m tau ARGS`` and return the process (streams as ``popen_options`` say)."""
    return subprocess.Popen(tau_command(*args, module=module), cwd=cwd, env=tau_env(env), **popen_options)
