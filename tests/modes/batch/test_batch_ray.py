"""``tau batch --backend ray`` (issue 20): the eight faux tasks as Ray tasks on a local Ray the test started.

The Ray is tau's own local start (``start_local_ray``): bound to 127.0.0.1, dashboard off, usage
statistics off; the batch finds it running and uses it. Session files come back to the driver.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from batch_support import (
    assert_batch_output,
    assert_recall_works,
    cli,
    eight_tasks,
    faux_task,
    interrupt_when,
    packed_task,
    requires_ray,
    results,
    write_tasks,
)

from tau_process import popen_tau, run_tau

SECRET = "sk-ant-test-0123456789-never-written"


def test_eight_tasks_through_ray(local_ray, tmp_path, monkeypatch):
    import ray

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)  # passed to every task, written nowhere

    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
    # The Ray started before the key was set: a task has it only through its environment (it shows the length).
    keyed = {
        **faux_task("keyed"),
        "faux_script": [{"bash": "echo key of ${#ANTHROPIC_API_KEY}"}, {"text": "ok"}],
    }
    tasks = [
        *eight_tasks(tmp_path / "repos"),
        faux_task("broken", setup="exit 4"),
        packed_task("packed"),
        keyed,
    ]
    out = tmp_path / "out"
    argv = ["batch", str(write_tasks(tmp_path / "tasks.jsonl", tasks)), "--out", str(out), "--backend", "ray"]
    code, _, err = cli(argv)
    assert code == 1, err
    found = results(out)
    assert sorted(found) == sorted(task["id"] for task in tasks)
    assert (found["broken"]["status"], found["broken"]["exit_reason"]) == ("error", "setup failed (exit 4)")
    assert_batch_output(out, [task["id"] for task in tasks[:8]])
    assert (tmp_path / "repos" / "repo0" / "out.txt").read_text() == "cwd-0\n"
    assert not (out / "work").exists()  # a Ray task's fresh directory is a scratch directory on its worker
    assert "10 ok, 1 error" in err
    keyed_session = (out / "sessions" / "keyed.jsonl").read_text()
    assert f"key of {len(SECRET)}" in keyed_session
    assert found["packed"]["status"] == "ok"
    assert_recall_works(out, "packed")
    written = [path for path in out.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert written == []


def test_a_task_environment_carries_credentials_and_local_paths_only_to_a_local_ray(
    monkeypatch, isolated_agent_dir
):
    from tau.modes.batch.ray_backend import task_environment

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("TAU_OFFLINE", "1")
    local, remote = task_environment(local=True), task_environment(local=False)
    assert local["ANTHROPIC_API_KEY"] == remote["ANTHROPIC_API_KEY"] == SECRET
    assert local["TAU_OFFLINE"] == remote["TAU_OFFLINE"] == "1"
    assert local["TAU_AGENT_DIR"] == str(isolated_agent_dir) and "HOME" in local
    assert not {"HOME", "TAU_AGENT_DIR"} & set(remote)


@requires_ray
def test_tau_batch_starts_its_own_loopback_ray_and_ctrl_c_cancels_it(tmp_path, isolated_agent_dir):
    """The command as a user runs it, in a fresh process: ``ray`` is imported by tau itself, so the Ray
    it starts must still be on 127.0.0.1 only (it refuses to start otherwise, exit 2). A Ctrl+C aborts
    the running tasks, whose sessions come back to the driver, and cancels the queued one."""
    marks = tmp_path / "marks"
    marks.mkdir()
    tasks = [
        {**faux_task(f"long-{n}", cwd=str(marks)), "faux_script": [{"bash": f"touch long-{n}; sleep 600"}]}
        for n in range(2)
    ] + [faux_task("later")]
    out = tmp_path / "out"
    command = ["batch", str(write_tasks(tmp_path / "t.jsonl", tasks))]
    process = popen_tau(
        [*command, "--out", str(out), "--backend", "ray", "--workers", "2"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    err = interrupt_when(process, lambda: all((marks / f"long-{n}").exists() for n in range(2)), 300)
    assert process.returncode == 130, err
    found = results(out)
    assert [found[name]["status"] for name in ("long-0", "long-1", "later")] == ["cancelled"] * 3
    assert found["later"]["exit_reason"] == "cancelled before it started"
    for n in range(2):
        assert found[f"long-{n}"]["requests"] >= 1
        assert cli(["session", "check", str(out / "sessions" / f"long-{n}.jsonl")])[0] == 0


def test_without_ray_installed_the_command_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: import ray fails
    out = tmp_path / "out"
    code, _, err = cli(
        [
            "batch",
            str(write_tasks(tmp_path / "t.jsonl", [faux_task("one")])),
            "--out",
            str(out),
            "--backend",
            "ray",
        ]
    )
    assert code == 2
    first, second = err.splitlines()  # no "results in" a file that was never written
    assert first == "tau batch: nothing run"
    assert second.startswith("tau batch: the Ray backend needs Ray: pip install 'tau[ray]'")
    assert not (out / "results.jsonl").exists()


def test_ray_address_joins_a_running_cluster(local_ray, tmp_path):
    """``--ray-address``: a fresh tau process joins the Ray this test process runs (on 127.0.0.1, so the
    driver must not swap the address for the machine's outward one), its tasks run there, and their
    sessions come back. Ray 2.x starts a local cluster with token auth: the joining process is given
    the token as a user would give it (``RAY_AUTH_TOKEN_PATH``)."""
    import ray

    from tau.modes.batch import ray_backend

    address = ray.get_runtime_context().gcs_address
    assert address.startswith("127.0.0.1:")
    env = {}
    token = Path(ray_backend._own_homes[-1], ".ray", "auth_token")
    if token.is_file():
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token))
    tasks = [faux_task("joined-1"), faux_task("joined-2", setup="true")]
    out = tmp_path / "out"
    command = ["batch", str(write_tasks(tmp_path / "t.jsonl", tasks))]
    done = run_tau(
        [*command, "--out", str(out), "--backend", "ray", "--ray-address", address], env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert_batch_output(out, ["joined-1", "joined-2"])


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in found]
        found.update(children)
        frontier.extend(children)
    return found


def _listening_addresses(pids: set[int]) -> dict[str, set[str]]:
    """``{process name: {listening IP}}`` for the TCP sockets these processes hold (from /proc)."""
    owners: dict[str, str] = {}
    for pid in pids:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    owners[target[8:-1]] = name
        except OSError:
            continue
    listening: dict[str, set[str]] = {}
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in owners:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(fields[1].split(":")[0])
            # /proc writes each 32-bit word of the address in host (little-endian) order
            packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            listening.setdefault(owners[fields[9]], set()).add(socket.inet_ntop(family, packed))
    return listening


def test_the_local_ray_listens_on_loopback_only_without_dashboard_or_usage_statistics(local_ray):
    if not Path("/proc/net/tcp").exists():
        pytest.skip("reads the listening sockets from Linux's /proc")
    import ray

    assert ray.get(ray.remote(lambda: "up").remote()) == "up"
    listening = _listening_addresses(_descendants(os.getpid()))
    assert {"gcs_server", "raylet"} <= set(listening), listening
    loopback = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}
    assert {name: ips - loopback for name, ips in listening.items() if ips - loopback} == {}
    assert ray._private.worker.get_dashboard_url() == ""
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
