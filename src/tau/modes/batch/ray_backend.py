"""The Ray backend of ``tau batch`` (``pip install 'tau[ray]'``): each task a Ray task with one CPU.

A task runs in a Ray worker in a scratch directory of its own; its session file and archives come
back to the driver with the result, and the driver writes them under ``DIR/sessions``. The batch's
cancel flag is a small actor the running tasks poll.

Without ``--ray-address`` tau starts a Ray of its own on this machine, on the loopback interface
only, without the dashboard and with usage statistics off (:func:`start_local_ray`).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau.modes.batch.tasks import Task
from tau.modes.batch.worker import TaskRun, empty_result, run_task

__all__ = ["import_ray", "join_ray", "run_ray", "start_local_ray", "stop_local_ray", "task_environment"]

Done = Callable[[Task, dict[str, Any]], None]
_FLAG_POLL_S = 1.0  # a running task asks the cancel flag at most this often
_WAIT_S = 1.0
_own_homes: list[str] = []  # private HOMEs of the Ray processes tau started (removed at stop)
# Variables that name paths on the driver's machine: passed only to a Ray on this machine.
_LOCAL_ONLY = ("HOME", "TAU_AGENT_DIR", "TAU_SESSION_DIR", "TAU_FAUX_SCRIPT")


def import_ray() -> Any:
    """The ``ray`` module, or ``RuntimeError`` saying how to install it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError(f"the Ray backend needs Ray: pip install 'tau[ray]' ({exc})") from exc
    return ray


def start_local_ray(num_cpus: int) -> None:
    """Start a Ray on this machine for ``num_cpus`` tasks at a time, reachable on 127.0.0.1 only.

    - ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` makes Ray bind and advertise the loopback address (Ray
      otherwise replaces 127.0.0.1 by the machine's outward address and listens on every interface);
      it must be set before ``ray`` is imported.
    - Ray's processes get a HOME of their own holding an empty ``ray_bootstrap_config.yaml``: with
      usage statistics off, Ray's API server still probes cloud metadata services
      (169.254.169.254, metadata.google.internal) unless that file exists. Tasks get the real HOME back
      through their environment (:func:`task_environment`).

    Raises ``RuntimeError`` when Ray is missing, or when it does not come up on the loopback address
    (``ray`` was already imported without the variable).
    """
    _loopback_environment()
    ray = import_ray()
    if _binds_outward(ray):  # refuse before starting: never listen on other interfaces, even briefly
        raise RuntimeError(_TOO_LATE)
    home = tempfile.mkdtemp(prefix="tau-ray-home-")
    Path(home, "ray_bootstrap_config.yaml").write_text("{}\n", encoding="utf-8")
    _own_homes.append(home)
    real_home = os.environ.get("HOME")
    os.environ["HOME"] = home
    try:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            object_store_memory=128 * 1024 * 1024,
            log_to_driver=False,
            logging_level=logging.ERROR,  # its start-up notices (a new auth token, "Started …") are noise here
        )
    finally:
        if real_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = real_home
    addresses = {node.get("NodeManagerAddress") for node in ray.nodes()}
    if addresses != {"127.0.0.1"}:
        stop_local_ray()
        raise RuntimeError(f"Ray started on {', '.join(sorted(map(str, addresses)))}, not on 127.0.0.1 only")


_TOO_LATE = (
    "cannot start a Ray bound to 127.0.0.1 only: ray was imported before tau could keep it on the "
    "loopback address (set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 before importing ray, or pass --ray-address)"
)


def _loopback_environment() -> None:
    """What a Ray started here needs to stay on 127.0.0.1; Ray reads it when ``ray`` is imported."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


def _binds_outward(ray: Any) -> bool:
    """Whether the imported ``ray`` would bind and advertise the machine's outward address."""
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    return bool(getattr(constants, "ENABLE_RAY_CLUSTER", False))


def stop_local_ray() -> None:
    """Shut down the Ray this process runs, and remove the private HOMEs tau gave it."""
    ray = import_ray()
    ray.shutdown()
    while _own_homes:
        shutil.rmtree(_own_homes.pop(), ignore_errors=True)


def task_environment(local: bool) -> dict[str, str]:
    """What a Ray task gets from the driver's environment: credentials, never written anywhere.

    The provider keys tau would use here (``auth.json``, ``models.json``, the usual variables) as
    each provider's variable, and the ``TAU_*`` variables; for a Ray on this machine also HOME and
    the paths (agent dir, session dir, faux script), so a task reads the same settings.
    """
    from tau.common.paths import agent_dir
    from tau.llm.catalog import BUILTIN_PROVIDERS
    from tau.llm.registry import ModelRegistry

    env = {name: value for name, value in os.environ.items() if name.startswith("TAU_")}
    registry = ModelRegistry()
    for provider, info in BUILTIN_PROVIDERS.items():
        if not info.env_var:
            continue
        try:
            key = registry.api_key(provider)[0]
        except ValueError:
            key = None
        if key:
            env[info.env_var] = key
    if local:
        env["TAU_AGENT_DIR"] = str(agent_dir())
        if os.environ.get("HOME"):
            env["HOME"] = os.environ["HOME"]
    else:
        env = {name: value for name, value in env.items() if name not in _LOCAL_ONLY}
    return env


def run_ray(tasks: list[Task], out: Path, workers: int | None, address: str | None, done: Done) -> None:
    """Run ``tasks`` as Ray tasks (at most ``workers`` at a time when given); report each to ``done``.

    Joins the cluster at ``address``, or uses the Ray this process already runs, or starts one
    (:func:`start_local_ray`, stopped at the end). Raises ``KeyboardInterrupt`` after a Ctrl+C, once
    every task has been reported.
    """
    if _on_loopback(address) and "ray" not in sys.modules:
        # before the import: a Ray this process starts stays on 127.0.0.1, and a driver joining one
        # there connects to 127.0.0.1 (Ray otherwise swaps it for the machine's outward address)
        _loopback_environment()
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        if address:
            join_ray(ray, address)
        else:
            start_local_ray(workers or os.cpu_count() or 1)
            started = True
    try:
        _dispatch(ray, tasks, out, workers, task_environment(local=not address), done)
    finally:
        if started:
            stop_local_ray()


def join_ray(ray: Any, address: str) -> None:
    """Connect this process to the Ray cluster at ``address``; ``RuntimeError`` saying why it cannot."""
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except Exception as exc:  # boundary: Ray's errors (ConnectionError, a missing auth token) become one
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        reason = str(exc.__cause__ or "").strip().splitlines()  # under a ConnectionError: the auth error
        why = lines[0] + (f" ({reason[-1]})" if reason else "")
        raise RuntimeError(f"cannot join the Ray cluster at {address}: {why}") from exc


def _on_loopback(address: str | None) -> bool:
    """Whether the Ray at ``address`` is on this machine's loopback interface (``None``: the one tau starts)."""
    if not address:
        return True
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def _dispatch(
    ray: Any, tasks: list[Task], out: Path, workers: int | None, env: dict[str, str], done: Done
) -> None:
    flag = ray.remote(num_cpus=0)(_CancelFlag).remote()
    remote = ray.remote(num_cpus=1, max_retries=0)(_run_remote)
    queue = list(tasks)
    running: dict[Any, Task] = {}
    try:
        while queue or running:
            while queue and (workers is None or len(running) < workers):
                task = queue.pop(0)
                running[remote.remote(task, env, flag)] = task
            ready, _ = ray.wait(list(running), num_returns=1, timeout=_WAIT_S)
            for ref in ready:
                task = running.pop(ref)
                done(task, _fetch(ray, ref, task, out))
    except KeyboardInterrupt:
        flag.set.remote()
        for task in queue:
            done(
                task,
                {"result": empty_result(task.id, "cancelled", "cancelled before it started"), "warnings": []},
            )
        for ref, task in running.items():
            done(task, _fetch(ray, ref, task, out))
        raise


class _CancelFlag:
    """The batch's cancel flag, an actor every running task polls."""

    def __init__(self) -> None:
        self.value = False

    def set(self) -> None:
        self.value = True

    def get(self) -> bool:
        return self.value


def _run_remote(task: Task, env: dict[str, str], flag: Any) -> dict[str, Any]:
    """In a Ray worker: run ``task`` in a scratch directory, return its result and its session's files."""
    with tempfile.TemporaryDirectory(prefix=f"tau-batch-{task.id}-") as scratch:
        where = TaskRun(
            sessions=os.path.join(scratch, "sessions"), work=os.path.join(scratch, "work", task.id), env=env
        )
        Path(where.sessions).mkdir()
        payload = run_task(task, where, _poller(flag))
        payload["files"] = _files_below(Path(where.sessions))
    return payload


def _poller(flag: Any) -> Callable[[], bool]:
    import ray

    checked = 0.0
    found = False

    def cancelled() -> bool:
        nonlocal checked, found
        now = time.monotonic()
        if not found and now - checked >= _FLAG_POLL_S:
            checked = now
            found = bool(ray.get(flag.get.remote()))
        return found

    return cancelled


def _files_below(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


def _fetch(ray: Any, ref: Any, task: Task, out: Path) -> dict[str, Any]:
    try:
        payload = ray.get(ref)
    except ray.exceptions.RayError as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {"result": empty_result(task.id, "error", f"ray task failed: {message}"), "warnings": []}
    write_private_files(out / "sessions", payload.pop("files", {}))
    from tau.modes.batch.results import FINISHED_DIR, write_finished

    write_finished(out / FINISHED_DIR, payload["result"])  # kept if the driver dies before recording it
    return payload


def write_private_files(root: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (relative path → bytes) below ``root``: directories 0700, files 0600.

    As every archive writer under ``sol/`` (``sol_common.private_dirs``): a link at any directory
    below ``root``, or at the file, is refused (``PrivatePathError``, an ``OSError``), never followed.
    """
    from tau.bundled.sol_common.paths import RuntimeRoot
    from tau.bundled.sol_common.private_dirs import open_no_follow, private_directory, write_all

    for name, data in files.items():
        parts = Path(name).parts
        if not parts or ".." in parts or Path(name).is_absolute():
            raise ValueError(f"refusing to write {name!r} outside {root}")
        with private_directory(RuntimeRoot(str(root), "", ()), parts[:-1], create=True) as directory:
            fd = open_no_follow(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, dir_fd=directory)
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
