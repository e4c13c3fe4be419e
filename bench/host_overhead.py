"""Benchmark: the host's work per provider request on a 10,000-entry session (no model).

What the session does before every request (pi-host §4.2 step 3): the canonical projection of the
session (``prepare_request``), the ``context`` hook chain with its copy of the messages,
``convert_to_llm``, and the ``before_provider_request`` handlers (the provider's own payload
building is not counted), with every extension loaded (bundled ones included). Between requests a user
and an assistant message are appended, as in a real run. Target: <= 20 ms per request (median of
>= 5 runs after a warm-up).

Usage: ``.venv/bin/python bench/host_overhead.py [--runs N] [--no-extensions]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from session_open import generate  # noqa: E402
from tau.agent.hooks import AgentContext, RequestContext  # noqa: E402
from tau.agent.session import AgentSession  # noqa: E402
from tau.agent.settings import Settings  # noqa: E402
from tau.common.jsstr import ms_now  # noqa: E402
from tau.llm.providers.faux import chat_completions_payload  # noqa: E402
from tau.llm.registry import ModelRegistry  # noqa: E402
from tau.llm.transcript import normalize_context  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402

TARGET_MS = 20.0


async def measure(
    path: Path, runs: int, extensions: bool, cpu: list[float] | None = None
) -> tuple[list[float], list[float], int, int]:
    """Wall ms per request and between turns, the model messages, the ``context`` handlers; ``cpu``
    (when given) gets the CPU ms of each request (this process's, less sensitive to other load)."""
    manager = SessionManager.open(path)
    registry = ModelRegistry()
    model = registry.find("faux", "faux-1")
    # Every SoL mechanism on (tau's default profile turns on fusion and packing only), so that each
    # bundled ``context`` handler runs.
    sol = {"onlineContextCompact": True, "evidencePreservingReducer": True}
    settings = Settings.in_memory({"sol": sol})
    session = AgentSession(manager, settings, registry, model, cwd=manager.get_cwd())
    handlers = 0
    if extensions:
        from tau.extension.loader import load_extensions

        runner = await load_extensions(session, cwd=session.cwd, trusted=False, mode="json")
        await session.start()  # the SoL extensions install their handlers at ``session_start``
        handlers = sum(len(ext.handlers.get("context", [])) for ext in runner.extensions)
    times: list[float] = []
    between: list[float] = []
    for index in range(runs + 1):
        manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"q{index}"}], "timestamp": ms_now()}
        )
        manager.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"a{index}"}],
                "api": "faux",
                "provider": "faux",
                "model": "faux-1",
                "usage": {
                    "input": 1,
                    "output": 1,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 2,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
                "timestamp": ms_now(),
            }
        )
        manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": "next"}], "timestamp": ms_now()}
        )
        turn_started = time.perf_counter()
        await session.agent.prepare_next_turn(None, None)
        turn_ms = (time.perf_counter() - turn_started) * 1000
        started, cpu_started = time.perf_counter(), time.process_time()
        request = RequestContext(AgentContext([], []), model, "off")
        update = await session.agent.prepare_request(request, None)
        messages = await session.agent.transform_context(update.context.messages, None)
        llm = session.agent.convert_to_llm(messages)
        elapsed = time.perf_counter() - started
        cpu_elapsed = time.process_time() - cpu_started
        # The provider builds its payload (not the host's work), then the host shows it to
        # ``before_provider_request`` handlers.
        payload = chat_completions_payload(model, normalize_context({"messages": llm}))
        started, cpu_started = time.perf_counter(), time.process_time()
        await session.agent.stream_options.on_payload(payload, model)
        elapsed = (elapsed + time.perf_counter() - started) * 1000
        cpu_elapsed = (cpu_elapsed + time.process_time() - cpu_started) * 1000
        if index:  # the first request is the warm-up
            times.append(elapsed)
            between.append(turn_ms)
            if cpu is not None:
                cpu.append(cpu_elapsed)
    count = len(llm)
    manager.close()
    return times, between, count, handlers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--no-extensions", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("TAU_AGENT_DIR", str(Path(tmp) / "agent"))
        path = Path(tmp) / "bench.jsonl"
        entries = generate(path)
        cpu: list[float] = []
        times, between, count, handlers = asyncio.run(
            measure(path, max(5, args.runs), not args.no_extensions, cpu)
        )
    median = statistics.median(times)
    verdict = "ok" if median <= TARGET_MS else "MISSED"
    print(f"session: {entries} entries, {count} model messages per request, {handlers} context handler(s)")
    print(
        f"host overhead per request: median {median:.1f} ms (min {min(times):.1f}, max {max(times):.1f}) "
        f"target <= {TARGET_MS:.0f} ms  {verdict}"
    )
    print(f"CPU per request: median {statistics.median(cpu):.1f} ms (min {min(cpu):.1f})")
    print(
        f"between turns (threshold check, prompt diff): median {statistics.median(between):.1f} ms (no target)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
