"""Benchmark: memory of a long streamed response and of the JSON writer's slow path (issue 17).

Each figure is the peak RSS of a fresh interpreter minus its RSS before the work
(decisions.md "Benchmarks"):

1. **streamed response, result only**: a 30 MiB text response built by ``MessageBuilder`` from
   64 KiB deltas, read only through ``stream.result()`` (what a compaction summary does). Target:
   the process peaks below 300 MiB RSS.
2. **streamed response, iterated**: the same response read event by event, keeping only the latest
   partial message (what the agent loop does). Target: below 300 MiB RSS.
3. **jsjson.dumps of a 10 MB string with a lone surrogate** (orjson refuses it: the slow path).
   Target: below 200 MiB.

Usage: ``.venv/bin/python bench/memory_bounds.py``
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

RESPONSE = 30 << 20
DELTA = 64 << 10
TARGETS_MIB = {"result only": 300, "iterated": 300, "dumps": 200}


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def _stream(iterate: bool) -> int:
    from tau.llm.builder import MessageBuilder
    from tau.llm.types import Model

    builder = MessageBuilder(Model(id="m", provider="p", api="faux"))
    delta = "x" * DELTA

    async def produce() -> None:
        index = builder.text_start()
        for _ in range(RESPONSE // DELTA):
            builder.text_delta(index, delta)
            await asyncio.sleep(0)
        builder.finish()

    producer = asyncio.ensure_future(produce())
    latest = None
    if iterate:
        async for event in builder.stream:
            latest = event.get("partial")  # the agent loop keeps only the newest partial
    message = await builder.stream.result()
    await producer
    del latest
    return len(message["content"][0]["text"])


def _child(kind: str) -> dict[str, float]:
    before = _rss()
    started = time.process_time()
    if kind == "dumps":
        from tau.common.jsjson import dumps

        size = len(dumps({"content": "x" * 10_000_000 + "\ud800"}))
    else:
        size = asyncio.run(_stream(kind == "iterated"))
    return {
        "mib": (_peak() - before) / 2**20,
        "peak": _peak() / 2**20,
        "cpu": time.process_time() - started,
        "size": size,
    }


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2])))
        return 0
    print(f"memory bounds (peak RSS of a fresh interpreter); load average {os.getloadavg()[0]:.2f}")
    for kind, label in (
        ("result only", "30 MiB response, result only"),
        ("iterated", "30 MiB response, iterated"),
        ("dumps", "dumps, 10 MB string + lone surrogate"),
    ):
        out = subprocess.check_output([sys.executable, __file__, "--child", kind], text=True)
        figures = json.loads(out.strip().splitlines()[-1])
        target = TARGETS_MIB[kind]
        shown = figures["peak"] if kind != "dumps" else figures["mib"]
        verdict = "ok" if shown < target else "MISSED"
        what = "process peak" if kind != "dumps" else "growth"
        print(
            f"{label:38} {what} {shown:7.1f} MiB (growth {figures['mib']:.1f} MiB, cpu {figures['cpu']:.2f} s) "
            f"target < {target} MiB  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
