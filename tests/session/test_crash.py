"""Writers killed with SIGKILL at random moments: every append that returned survives, the file loads.

The driver lives in ``bench/session_crash.py`` (which runs many more kills); the seed is printed and
can be fixed with ``TAU_CRASH_SEED`` to replay a failure.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "session_crash.py"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def load_driver():
    spec = importlib.util.spec_from_file_location("tau_bench_session_crash", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_sigkilled_writers_lose_nothing_that_returned(tmp_path):
    driver = load_driver()
    seed = int(os.environ.get("TAU_CRASH_SEED") or random.randrange(2**32))
    print(f"crash test seed {seed} (replay with TAU_CRASH_SEED={seed})")
    stats = driver.run_crashes(tmp_path, kills=220, seed=seed, per_file=22)
    assert stats.failures == [], f"seed {seed}"
    assert stats.kills == 220
    assert stats.reported > stats.kills  # the children did get appends through before dying
    assert stats.cut_lines > 0  # some kills left a cut last line that the next writer had to repair
