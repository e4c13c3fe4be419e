"""tau's side of ``data/pi31/faux-ext.ts``: pi22's replies, each request's messages logged.

The messages of every request (system messages are not among them) go as one JSON line to the
file ``TAU31_CONTEXTS`` names, so a run's contexts can be compared with pi's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pi22_faux import _reply

SPEC = f"{Path(__file__).resolve()}:respond"


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    log = os.environ.get("TAU31_CONTEXTS")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(request["messages"], ensure_ascii=False) + "\n")
    return [_reply(request), {"factory": SPEC}]
