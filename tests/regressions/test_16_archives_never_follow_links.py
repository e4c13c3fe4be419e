"""Issue 16, item 2: no archive under ``sol/`` is written through a symbolic link.

The reducer used ``os.makedirs`` on the whole archive path, which follows a link in the middle of it;
ObservationPack refused links. Both now go through ``sol_common.private_dirs``: a link at ``sol/`` or
at any directory below it is refused with a clear error, the reducer keeps the original result, and
nothing lands in the link's target. A session dir that is itself a link stays allowed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundled" / "reducer"))

from reducer_fakes import FakeCtx, FakeRegistry, FakeTau, bash_event, failure_receipt

from tau.bundled.obspack.store import ObservationStore
from tau.bundled.reducer.reducer import Reducer
from tau.bundled.sol_common import SolSettings, runtime_root
from tau.bundled.sol_common.private_dirs import PrivatePathError

LOG = "".join(f"tests/test_m{n:03d}.py::test_case PASSED\n" for n in range(150)) + (
    "E   AssertionError: assert 41 == 42\nFAILED tests/test_calc.py::test_add\n1 failed, 150 passed\n"
)
INLINE = LOG + "\n\nCommand exited with code 1"
DIGEST = hashlib.sha256(LOG.encode()).hexdigest()
REDUCER_PARTS = ["sol", "sol/session-a", "evidence-preserving-reducer", "objects", DIGEST[:2]]
OBSPACK_PARTS = ["sol", "sol/session-a", "observation-pack", "objects"]
OBS = "obs_" + "c" * 24


def _link_at(tmp_path: Path, parts: list[str], index: int) -> Path:
    """Create the directories above ``parts[index]`` and a link there to an empty outside dir."""
    outside = tmp_path / "outside"
    outside.mkdir()
    walked = tmp_path
    for part in parts[:index]:
        walked = walked / part.rsplit("/", 1)[-1]
        walked.mkdir(mode=0o700)
    os.symlink(outside, walked / parts[index].rsplit("/", 1)[-1])
    return outside


def _every_file(top: Path) -> list[str]:
    return sorted(str(Path(d, f).relative_to(top)) for d, _, files in os.walk(top) for f in files)


def _reduce(session_dir: Path) -> tuple[FakeTau, FakeCtx, dict | None]:
    tau = FakeTau()
    ctx = FakeCtx(str(session_dir), FakeRegistry(replies=[]))
    # An unknown reducer model: a log that gets past the archive ends as reducer-model-unavailable.
    settings = SolSettings(
        evidence_preserving_reducer=True, evidence_extractors=False, reducer_model="not-configured"
    )
    reducer = Reducer(tau, settings)
    result = asyncio.run(reducer.on_tool_result(bash_event("pytest -q", INLINE, is_error=True), ctx))
    return tau, ctx, result


@pytest.mark.parametrize("index", range(len(REDUCER_PARTS)), ids=REDUCER_PARTS)
def test_the_reducer_refuses_a_link_at_every_component_and_keeps_the_original(tmp_path, index):
    session_dir = tmp_path / "sessions"
    session_dir.mkdir()
    outside = _link_at(session_dir, REDUCER_PARTS, index)
    tau, ctx, result = _reduce(session_dir)
    assert result is None  # no replacement: the model sees the original result
    assert ctx.model_registry.calls == []
    (fallback,) = tau.journal()
    assert fallback["kind"] == "fallback" and fallback["reason"] == "archive-unavailable"
    assert "SoL runtime directory is not a regular directory" in fallback["error"]
    assert "tau never writes through it" in fallback["error"]
    assert fallback["sourceSha256"] == DIGEST
    assert _every_file(outside) == [] and os.listdir(outside) == []


@pytest.mark.parametrize("index", range(len(OBSPACK_PARTS)), ids=OBSPACK_PARTS)
def test_observation_pack_refuses_a_link_at_every_component(tmp_path, index):
    outside = _link_at(tmp_path, OBSPACK_PARTS, index)
    store = ObservationStore(runtime_root(str(tmp_path), "session-a"))
    with pytest.raises(PrivatePathError, match="not a regular directory"):
        store.ensure_stored(OBS, b"x" * 100, hashlib.sha256(b"x" * 100).hexdigest())
    if OBSPACK_PARTS[index] != "objects":  # the ledger sits beside objects/
        with pytest.raises(PrivatePathError, match="not a regular directory"):
            store.append_ledger(b'{"a":1}\n')
    assert os.listdir(outside) == []


def test_a_linked_session_dir_above_sol_stays_allowed_and_everything_is_private(tmp_path):
    real = tmp_path / "real-sessions"
    real.mkdir()
    linked = tmp_path / "sessions"
    os.symlink(real, linked)
    tau, _ctx, result = _reduce(linked)
    assert result is None and tau.journal()[-1]["reason"] == "reducer-model-unavailable"  # archived first
    store = ObservationStore(runtime_root(str(linked), "session-a"))
    store.ensure_stored(OBS, b"x" * 100, hashlib.sha256(b"x" * 100).hexdigest())
    store.append_ledger(b'{"a":1}\n')
    sol = real / "sol"
    files = _every_file(sol)
    assert files == [
        f"session-a/evidence-preserving-reducer/objects/{DIGEST[:2]}/{DIGEST}.txt",
        "session-a/observation-pack/ledger.jsonl",
        f"session-a/observation-pack/objects/{hashlib.sha256(b'x' * 100).hexdigest()}.txt",
    ]
    for directory, _, names in os.walk(sol):
        assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700, directory
        for name in names:
            assert stat.S_IMODE(os.lstat(Path(directory, name)).st_mode) == 0o600, name


def test_a_link_that_appears_after_archiving_makes_a_cache_hit_fall_back(tmp_path):
    tau = FakeTau()
    ctx = FakeCtx(
        str(tmp_path), FakeRegistry(replies=[failure_receipt("E   AssertionError: assert 41 == 42")])
    )
    reducer = Reducer(tau, SolSettings(evidence_preserving_reducer=True, evidence_extractors=False))
    event = bash_event("pytest -q", INLINE, is_error=True)
    assert asyncio.run(reducer.on_tool_result(event, ctx)) is not None
    session = tmp_path / "sol" / "session-a"
    moved = tmp_path / "moved"
    os.rename(session, moved)
    os.symlink(moved, session)
    assert asyncio.run(reducer.on_tool_result(event, ctx)) is None
    assert tau.journal()[-1]["reason"] == "archive-unavailable"


BATCH_FILES = {
    "t1.jsonl": b'{"type":"session"}\n',
    f"sol/session-a/evidence-preserving-reducer/objects/{DIGEST[:2]}/{DIGEST}.txt": LOG.encode(),
}
BATCH_PARTS = ["sol", "sol/session-a", "evidence-preserving-reducer", "objects", DIGEST[:2]]


@pytest.mark.parametrize("index", range(len(BATCH_PARTS)), ids=BATCH_PARTS)
def test_tau_batch_copies_a_ray_task_s_archives_without_following_a_link(tmp_path, index):
    """The Ray backend writes each task's session and ``sol/`` archives into ``--out`` on the driver."""
    from tau.modes.batch.ray_backend import write_private_files

    sessions = tmp_path / "sessions"
    sessions.mkdir()
    outside = _link_at(sessions, BATCH_PARTS, index)
    with pytest.raises(PrivatePathError, match="not a regular directory"):
        write_private_files(sessions, BATCH_FILES)
    assert os.listdir(outside) == []


def test_tau_batch_writes_a_ray_task_s_files_private(tmp_path):
    from tau.modes.batch.ray_backend import write_private_files

    sessions = tmp_path / "sessions"
    write_private_files(sessions, BATCH_FILES)
    write_private_files(sessions, BATCH_FILES)  # a rerun replaces its files
    assert _every_file(sessions) == sorted(BATCH_FILES)
    for name, data in BATCH_FILES.items():
        assert (sessions / name).read_bytes() == data
        assert stat.S_IMODE(os.lstat(sessions / name).st_mode) == 0o600
    for directory, _, _ in os.walk(sessions / "sol"):
        assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700, directory
    os.symlink(tmp_path / "elsewhere", sessions / "t2.jsonl")
    with pytest.raises(OSError):
        write_private_files(sessions, {"t2.jsonl": b"x"})  # nor a link at the file itself
    assert not (tmp_path / "elsewhere").exists()
    with pytest.raises(ValueError, match="outside"):
        write_private_files(sessions, {"../escape": b"x"})
