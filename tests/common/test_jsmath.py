"""``js_log`` gives Node 22's ``Math.log`` bit for bit (``data/math_log.json``, made by ``node
data/math_log.mjs``), where :func:`math.log` (the C library's) does not always."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tau.common.jsmath import js_log

PAIRS = json.loads((Path(__file__).parent / "data" / "math_log.json").read_text())


def test_every_value_is_nodes_to_the_last_bit():
    assert len(PAIRS) > 5_000
    assert [js_log(x) for x, _ in PAIRS] == [y for _, y in PAIRS]


def test_the_c_library_would_not_be():
    assert any(math.log(x) != y for x, y in PAIRS)  # why js_log exists


def test_edges():
    assert js_log(1.0) == 0.0
    assert js_log(0.0) == -math.inf
    assert math.isnan(js_log(-1.0))
    assert js_log(math.inf) == math.inf
