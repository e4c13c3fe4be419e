"""The watchdog of one ``tau batch`` run: it outlives a killed driver only to stop what the driver started.

Before it starts anything, the driver marks its environment with ``TAU_BATCH_RUN=<token>``; every
process it starts inherits the mark: the pool's workers and ``multiprocessing``'s resource tracker,
a local Ray's node processes (GCS, raylet, the dashboard and runtime-env agents, its workers), and
the commands the tasks run, even those in sessions of their own. The watchdog is started in a
session of its own, without the mark, reading a pipe from the driver. A driver that ends normally
writes ``done`` and closes the pipe; when the pipe closes without it (the driver was killed with
SIGKILL, or crashed), the watchdog ends every process whose environment carries the mark: SIGTERM,
then SIGKILL to what is left after a short grace, until none is left, and exits.

Linux only: the marks are read from ``/proc/<pid>/environ`` (the environment a process was started
with). Elsewhere the driver starts no watchdog.

Run as ``python -m tau.modes.batch.watchdog TOKEN`` (only :func:`guard` does); it imports nothing
of tau beyond this module.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

__all__ = ["MARK", "guard", "marked_processes", "stop_marked"]

MARK = "TAU_BATCH_RUN"
DONE = b"done\n"
_GRACE_S = 1.0  # between SIGTERM and SIGKILL: a resource tracker cleans up, a Ray node stops
_GIVE_UP_S = 10.0  # what keeps respawning after this long is left alone
_POLL_S = 0.05


def supported() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc")


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Mark this process's environment and run a watchdog while the block runs (see the module).

    The mark is removed and the watchdog told ``done`` when the block ends, whichever way it ends.
    """
    if not supported():
        yield
        return
    # A batch run by a task of another batch marks its processes with its own token: killing it
    # ends them through its watchdog, which carries neither mark.
    outer = os.environ.get(MARK)
    token = secrets.token_hex(16)
    env = {name: value for name, value in os.environ.items() if name != MARK}
    try:
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "tau.modes.batch.watchdog", token],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # neither a terminal's Ctrl+C nor its hangup reaches it
        )
    except OSError as exc:  # without it a killed driver leaves orphans, as before: say so, run anyway
        print(f"tau batch: no watchdog ({exc}); kill -9 of tau batch would leave its workers", file=sys.stderr)
        yield
        return
    os.environ[MARK] = token
    try:
        yield
    finally:
        if outer is None:
            os.environ.pop(MARK, None)
        else:
            os.environ[MARK] = outer
        assert watchdog.stdin is not None
        with contextlib.suppress(OSError):
            watchdog.stdin.write(DONE)
        with contextlib.suppress(OSError):
            watchdog.stdin.close()
        try:
            watchdog.wait(timeout=10)
        except subprocess.TimeoutExpired:
            watchdog.kill()
            watchdog.wait()


def marked_processes(token: str) -> list[int]:
    """The processes (other than this one) started with ``TAU_BATCH_RUN=<token>`` in their environment."""
    needle = f"{MARK}={token}".encode()
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # gone, or not ours to read
            continue
        if needle in environ.split(b"\0"):  # a zombie's environment reads empty: it is not listed
            found.append(int(name))
    return found


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def stop_marked(token: str, grace: float = _GRACE_S, give_up: float = _GIVE_UP_S) -> list[int]:
    """End every process marked with ``token``: SIGTERM, SIGKILL after ``grace``; the pids signalled."""
    signalled: set[int] = set()
    started = time.monotonic()
    while time.monotonic() - started < give_up:
        pids = marked_processes(token)
        if not pids:
            break
        _signal_all(pids, signal.SIGTERM)
        signalled.update(pids)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and marked_processes(token):
            time.sleep(_POLL_S)
        _signal_all(marked_processes(token), signal.SIGKILL)
        time.sleep(_POLL_S)
    return sorted(signalled)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tau.modes.batch.watchdog TOKEN", file=sys.stderr)
        return 2
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    received = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(0, 64):  # until the driver closes the pipe, or dies
            received += chunk
    if received == DONE:
        return 0
    stop_marked(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
