"""A full disk at the session store's write path, for tests (imported as ``full_disk``)."""

from __future__ import annotations

import errno
import os

import pytest

from tau.session.lock import SessionWriter


class FullDisk:
    """Session writes fail with ENOSPC from write number ``fail_from`` on, while ``full``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail_from: int) -> None:
        self.writes = 0
        self.fail_from = fail_from
        self.full = True
        real_append = SessionWriter.append

        def append(writer: SessionWriter, data: bytes) -> None:
            self.writes += 1
            if self.full and self.writes >= self.fail_from:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real_append(writer, data)

        monkeypatch.setattr(SessionWriter, "append", append)
