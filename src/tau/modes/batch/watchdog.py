"""The watchdog of one ``tau batch`` run: it outlives a killed driver only to stop what the driver started.

Before it starts anything, the driver marks its environment with ``TAU_BATCH_RUN=<token>``; every
process it starts inherits the mark: the pool's workers and ``multiprocessing``'s resource tracker,
a local Ray's node processes (GCS, raylet, the dashboard and runtime-env agents, its workers), and
the commands the tasks run, even those in sessions of their own. The watchdog is started in a
session of its own, without the mark, reading a pipe from the driver; while it waits it also notes
the driver's descendants now and then (a process that rewrites its title, as Ray's agents do,
overwrites the environment ``/proc`` shows, and once the driver is gone its orphans no longer
descend from it). A driver that ends normally writes ``done`` and closes the pipe; when the pipe
closes without it (the driver was killed with SIGKILL, or crashed), the watchdog ends every marked
process, every noted descendant still running and what descends from them: SIGTERM, then SIGKILL to
what is left after a short grace, until none is left, and exits.

Linux only (``/proc``). Elsewhere the driver starts no watchdog.

Run as ``python -m tau.modes.batch.watchdog TOKEN DRIVER_PID`` (only :func:`guard` does); it
imports nothing of tau beyond this module.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
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
_NOTE_FIRST_S, _NOTE_MAX_S = 0.5, 2.0  # how often the driver's descendants are noted (slower with time)


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
            [sys.executable, "-m", "tau.modes.batch.watchdog", token, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # neither a terminal's Ctrl+C nor its hangup reaches it
        )
    except OSError as exc:  # without it a killed driver leaves orphans, as before: say so, run anyway
        print(
            f"tau batch: no watchdog ({exc}); kill -9 of tau batch would leave its workers", file=sys.stderr
        )
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


def _processes() -> dict[int, tuple[int, bytes]]:
    """Every process: pid → (parent pid, start time); the start time tells a reused pid apart."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z":  # a zombie has ended already
            found[int(name)] = (int(fields[1]), fields[19])
    return found


def descendants(root: int, processes: dict[int, tuple[int, bytes]] | None = None) -> dict[int, bytes]:
    """The processes below ``root``: pid → start time."""
    processes = _processes() if processes is None else processes
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, bytes] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found[child] = processes[child][1]
                stack.append(child)
    return found


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


def _targets(token: str, noted: dict[int, bytes]) -> list[int]:
    """What is left to stop: marked processes, noted ones still running, and their descendants."""
    processes = _processes()
    roots = set(marked_processes(token))
    roots |= {pid for pid, started in noted.items() if pid in processes and processes[pid][1] == started}
    found = set(roots)
    for pid in roots:
        found |= set(descendants(pid, processes))
    found.discard(os.getpid())
    return sorted(found)


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def stop_marked(
    token: str, noted: dict[int, bytes] | None = None, grace: float = _GRACE_S, give_up: float = _GIVE_UP_S
) -> list[int]:
    """End every process marked with ``token`` or ``noted`` (pid → start time) and still running, and
    their descendants: SIGTERM, SIGKILL after ``grace``; the pids signalled."""
    noted = noted or {}
    signalled: set[int] = set()
    started = time.monotonic()
    while time.monotonic() - started < give_up:
        pids = _targets(token, noted)
        if not pids:
            break
        _signal_all(pids, signal.SIGTERM)
        signalled.update(pids)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _targets(token, noted):
            time.sleep(_POLL_S)
        _signal_all(_targets(token, noted), signal.SIGKILL)
        time.sleep(_POLL_S)
    return sorted(signalled)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: python -m tau.modes.batch.watchdog TOKEN DRIVER_PID", file=sys.stderr)
        return 2
    token, driver = argv[0], int(argv[1])
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    noted: dict[int, bytes] = {}
    received = b""
    wait = _NOTE_FIRST_S
    while True:
        try:
            ready, _, _ = select.select([0], [], [], wait)
            chunk = os.read(0, 64) if ready else None
        except OSError:
            chunk = b""
        if chunk == b"":  # the driver closed the pipe, or is gone
            break
        if chunk is not None:
            received += chunk
            continue
        noted.update(descendants(driver))
        noted.pop(os.getpid(), None)
        wait = min(wait * 1.5, _NOTE_MAX_S)
    if received == DONE:
        return 0
    stop_marked(token, noted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
