"""RPC mode tests share the faux replies of pi's golden CLI runs (``tests/modes/faux_ext.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

MODES_TESTS = str(Path(__file__).resolve().parents[1])
if MODES_TESTS not in sys.path:
    sys.path.insert(0, MODES_TESTS)
