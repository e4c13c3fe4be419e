"""Where the pi 1.6 golden fixtures are (shared by conftest.py and tests that parametrize over them)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fixtures_dir() -> Path | None:
    """The pi 1.6 golden fixtures: ``$TAU_FIXTURES`` or ``../shared/fixtures/pi`` beside the checkout."""
    env = os.environ.get("TAU_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "fixtures" / "pi")
    for candidate in candidates:
        if (candidate / "README.md").is_file():
            return candidate
    return None
