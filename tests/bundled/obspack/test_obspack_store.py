"""The object store's safety rules: modes, exclusive publish, integrity, no symlinks (§5.4)."""

from __future__ import annotations

import errno
import glob
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from tau.bundled.obspack import store as store_module
from tau.bundled.obspack.store import ObservationStore, StoreError, guard_no_follow
from tau.bundled.sol_common import private_dirs, runtime_root

OBS = "obs_" + "a" * 24
DATA = b"stored bytes\n" * 1000


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_store(tmp_path, session="session-a") -> ObservationStore:
    return ObservationStore(runtime_root(str(tmp_path), session))


def test_objects_are_private_and_published_whole(tmp_path):
    store = make_store(tmp_path)
    store.ensure_stored(OBS, DATA, sha(DATA))
    path = tmp_path / "sol" / "session-a" / "observation-pack" / "objects" / f"{sha(DATA)}.txt"
    assert path.read_bytes() == DATA
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for directory in (path.parent, path.parent.parent, tmp_path / "sol", tmp_path / "sol" / "session-a"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == [f"{sha(DATA)}.txt"]  # no temporary file left behind


def test_an_existing_identical_object_is_reused_and_a_corrupt_one_is_never_overwritten(tmp_path):
    store = make_store(tmp_path)
    store.ensure_stored(OBS, DATA, sha(DATA))
    store.ensure_stored(OBS, DATA, sha(DATA))
    path = store.object_path(sha(DATA))
    corrupt = b"x" * len(DATA)
    with open(path, "wb") as handle:
        handle.write(corrupt)
    with pytest.raises(StoreError, match=f"Content-addressed observation hash mismatch for {OBS}"):
        store.ensure_stored(OBS, DATA, sha(DATA))
    assert Path(path).read_bytes() == corrupt
    with open(path, "wb") as handle:
        handle.write(b"short")
    with pytest.raises(StoreError, match="size mismatch"):
        store.ensure_stored(OBS, DATA, sha(DATA))
    os.remove(path)
    os.mkdir(path)
    with pytest.raises(StoreError, match="not a regular file"):
        store.ensure_stored(OBS, DATA, sha(DATA))


def test_a_symlinked_object_or_objects_directory_is_refused(tmp_path):
    store = make_store(tmp_path)
    store.ensure_stored("obs_" + "b" * 24, b"other bytes", sha(b"other bytes"))
    target = tmp_path / "target.txt"
    target.write_bytes(DATA)
    os.symlink(target, store.object_path(sha(DATA)))
    with pytest.raises(StoreError, match="not a regular file"):
        store.ensure_stored(OBS, DATA, sha(DATA))
    with pytest.raises(StoreError) as info, store.open_object(OBS, sha(DATA)):
        pass
    assert info.value.code == "ELOOP"

    other = make_store(tmp_path, "session-b")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.makedirs(os.path.dirname(other.objects_path))
    os.symlink(outside, other.objects_path)
    with pytest.raises(StoreError, match=f"Observation directory is not a regular directory for {OBS}"):
        other.ensure_stored(OBS, DATA, sha(DATA))
    assert os.listdir(outside) == []


def test_identical_bytes_are_one_object_and_every_id_reads_them(tmp_path):
    """Issue 33, item 8: objects are addressed by their content (one object for identical results);
    an older archive's object named by its observation id is still read."""
    store = make_store(tmp_path)
    ids = [f"obs_{n:024x}" for n in range(50)]
    for obs_id in ids:
        store.ensure_stored(obs_id, DATA, sha(DATA))
    assert os.listdir(store.objects_path) == [f"{sha(DATA)}.txt"]
    for obs_id in ids:
        with store.open_object(obs_id, sha(DATA)) as (fd, size):
            assert (size, os.pread(fd, size, 0)) == (len(DATA), DATA)
    legacy = "obs_" + "c" * 24
    Path(store.objects_path, f"{legacy}.txt").write_bytes(b"old layout\n")
    with store.open_object(legacy, sha(b"old layout\n")) as (fd, size):
        assert os.pread(fd, size, 0) == b"old layout\n"
    with pytest.raises(StoreError, match="not a SHA-256 content hash"), store.open_object(legacy, "../x"):
        pass


@pytest.mark.parametrize("linked", ["sol", "sol/session-a"])
def test_linked_runtime_ancestors_are_refused(tmp_path, linked):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if linked == "sol/session-a":
        (tmp_path / "sol").mkdir()
    os.symlink(elsewhere, tmp_path / linked)
    with pytest.raises(StoreError, match="SoL runtime directory is not a regular directory"):
        make_store(tmp_path).ensure_stored(OBS, DATA, sha(DATA))
    assert os.listdir(elsewhere) == []


def test_a_directory_swapped_after_open_is_detected(tmp_path, monkeypatch):
    store = make_store(tmp_path)
    store.ensure_stored(OBS, DATA, sha(DATA))
    real_lstat = os.lstat
    calls = {"n": 0}

    def swapping_lstat(path, *args, **kwargs):
        info = real_lstat(path, *args, **kwargs)
        if path == "objects":
            calls["n"] += 1
            fake = list(info)
            fake[stat.ST_INO] += 1
            return os.stat_result(fake)
        return info

    monkeypatch.setattr(store_module.os, "lstat", swapping_lstat)
    with pytest.raises(StoreError, match="changed while open"):
        store.ensure_stored(OBS, DATA, sha(DATA))
    assert calls["n"] == 1


def test_a_failed_write_publishes_nothing(tmp_path, monkeypatch):
    store = make_store(tmp_path)

    def full_disk(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module.os, "write", full_disk)
    with pytest.raises(OSError) as info:
        store.ensure_stored(OBS, DATA, sha(DATA))
    assert info.value.errno == errno.ENOSPC
    assert os.listdir(store.objects_path) == []


def test_the_ledger_appends_whole_batches(tmp_path):
    store = make_store(tmp_path)
    store.append_ledger(b"")
    assert not os.path.exists(store.ledger_path)
    store.append_ledger(b'{"a":1}\n{"b":2}\n')
    store.append_ledger(b'{"c":3}\n')
    assert Path(store.ledger_path).read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'
    assert stat.S_IMODE(os.stat(store.ledger_path).st_mode) == 0o600


def test_the_no_follow_fallback_refuses_symlinks_and_passes_the_rest(tmp_path, monkeypatch):
    """observation-symlink-guard: what tau does where O_NOFOLLOW does not exist (Windows)."""
    regular = tmp_path / "regular.txt"
    regular.write_text("x")
    link = tmp_path / "link.txt"
    os.symlink(regular, link)
    with pytest.raises(StoreError) as info:
        guard_no_follow(str(link))
    assert info.value.code == "ELOOP"
    guard_no_follow(str(regular))
    guard_no_follow(str(tmp_path / "absent.txt"))

    def denied(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(store_module.os, "lstat", denied)
    with pytest.raises(PermissionError):
        guard_no_follow(str(regular))


def test_the_store_works_without_o_nofollow(tmp_path, monkeypatch):
    monkeypatch.setattr(private_dirs, "_NOFOLLOW", 0)
    store = make_store(tmp_path)
    store.ensure_stored(OBS, DATA, sha(DATA))
    os.remove(store.object_path(sha(DATA)))
    os.symlink(tmp_path / "nowhere", store.object_path(sha(DATA)))
    with pytest.raises(StoreError) as info:
        store.ensure_stored(OBS, DATA, sha(DATA))
    assert "not a regular file" in str(info.value)


def test_unsafe_session_ids_are_refused_and_in_memory_sessions_get_one_private_dir(tmp_path):
    from tau.bundled.sol_common import SolPathError

    with pytest.raises(SolPathError, match="SoL-Pi requires a safe session id"):
        runtime_root(str(tmp_path), "../escape")
    session = f"mem-{os.getpid()}-{secrets.token_hex(4)}"
    first, second = runtime_root("", session), runtime_root("", session)
    pattern = os.path.join(tempfile.gettempdir(), f"sol-{session}-*")
    assert first.key == f"memory:{session}" and glob.glob(pattern) == []  # created only when needed
    assert first.base == second.base and os.path.basename(first.base).startswith(f"sol-{session}-")
    assert glob.glob(pattern) == [first.base] and stat.S_IMODE(os.stat(first.base).st_mode) == 0o700
    assert runtime_root("", session + "x").key != first.key
    shutil.rmtree(first.base)
