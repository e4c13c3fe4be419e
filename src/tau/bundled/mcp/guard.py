"""The guard every stdio MCP server runs under, so no server outlives tau.

The MCP SDK starts a stdio server in a session (process group) of its own and, when tau closes the
connection, closes its stdin, then sends SIGTERM and SIGKILL to the group. Nothing does that when
tau itself is killed (``kill -9``): the group would be orphaned. So tau starts a small guard in
that group (``python -I -c GUARD_SOURCE <tau pid> <command> <args>``) that spawns the server with
the same stdin, stdout, stderr and environment, lets go of its own copies, and waits:

- the server exits: the guard sends SIGTERM to what is left of the group (helpers the server
  started, ``npx``'s child) and exits with the server's status;
- tau dies (a parent-death signal from ``prctl(PR_SET_PDEATHSIG)`` wakes it at once on Linux, and
  it checks its parent every second everywhere): SIGTERM to the group, SIGKILL after two seconds.

A server command that cannot start is reported on stderr as Node does (``spawn <cmd> ENOENT``).
"""

from __future__ import annotations

import os
import sys

__all__ = ["GUARD_SOURCE", "guarded_command"]

GUARD_SOURCE = r"""
import errno, os, signal, sys, time
parent = int(sys.argv[1])
argv = sys.argv[2:]
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGUSR1))  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() != parent:
    os._exit(1)
try:
    child = os.posix_spawnp(argv[0], argv, dict(os.environ))
except OSError as exc:
    os.write(2, ("spawn %s %s\n" % (argv[0], errno.errorcode.get(exc.errno, exc.strerror))).encode())
    os._exit(127)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD, signal.SIGUSR1})

def status_of(status):
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)

def group(sig):
    try:
        os.killpg(0, sig)
    except OSError:
        pass

def reap(deadline):
    while time.monotonic() < deadline:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            return status
        signal.sigtimedwait({signal.SIGCHLD}, 0.1)
    return None

signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pid, status = os.waitpid(child, os.WNOHANG)
    if pid:
        group(signal.SIGTERM)
        os._exit(status_of(status))
    if os.getppid() != parent:
        group(signal.SIGTERM)
        reap(time.monotonic() + 2.0)
        group(signal.SIGKILL)
        os._exit(137)
    signal.sigtimedwait({signal.SIGCHLD, signal.SIGUSR1}, 1.0)
"""


def guarded_command(command: str, args: list[str]) -> tuple[str, list[str]]:
    """``(executable, args)`` that run ``command args`` under the guard (POSIX); unchanged elsewhere."""
    if os.name != "posix" or not sys.executable:
        return command, list(args)
    return sys.executable, ["-I", "-c", GUARD_SOURCE, str(os.getpid()), command, *args]
