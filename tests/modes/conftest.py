"""Fixtures of the mode tests."""

from __future__ import annotations

import pytest

from tau.llm.providers import faux


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A fresh working directory ``proj`` (the process's cwd), with the process's faux script reset."""
    work = tmp_path / "proj"
    work.mkdir()
    monkeypatch.chdir(work)
    faux.use_script(None)
    yield work
    faux.use_script(None)
