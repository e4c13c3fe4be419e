"""Fixtures for the tool tests: a tool context in a temporary project."""

from __future__ import annotations

import pytest

from tau.tools import ToolContext


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    project = tmp_path / "proj"
    project.mkdir()
    return ToolContext(cwd=str(project))
