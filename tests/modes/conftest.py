"""Fixtures of the mode tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A fresh working directory ``proj`` (the process's cwd)."""
    work = tmp_path / "proj"
    work.mkdir()
    monkeypatch.chdir(work)
    return work
