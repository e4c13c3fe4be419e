"""The faux ``factory`` of every benchmark run: ``play.py:respond`` plays the task named by
``$TAU_ECONOMY_TASK`` as the persona named by ``$TAU_ECONOMY_PERSONA`` (default ``recall``; faux
loads this file by path, so it makes ``bench/economy`` importable)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import policy  # noqa: E402
import tasks  # noqa: E402

SPEC = f"{Path(__file__).resolve()}:respond"
TASK_ENV = "TAU_ECONOMY_TASK"
# A policy that loops (a bug, or a mechanism that hides what it needs) must not run forever.
MAX_REQUESTS = 400


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    task = tasks.load(os.environ[TASK_ENV])
    answer = policy.side_answer(request, task.facts)
    if answer is None:
        view = policy.View(request, os.environ.get(policy.PERSONA_ENV) or "recall")
        asked = sum(1 for message in view.messages if message.get("role") == "assistant")
        answer = {"text": "Giving up: too many requests."} if asked >= MAX_REQUESTS else task.decide(view)
    return [answer, {"factory": SPEC}]
