"""Benchmark: a long streamed answer is assembled in time linear in its size (issue 26, item 7).

Two measurements, each at several sizes, with seconds per MB (wall and CPU: on a shared machine the
CPU time is the steadier figure) and the ratio of each size's CPU seconds per MB to the smallest
size's (linear: about 1, or below it where start-up weighs on the smallest; the quadratic assembly
this replaced doubled it with each doubling of the size):

- ``tau -p`` end to end (a fresh process, ``--no-session -ne``) on a faux script whose one step is a
  text answer of N MB: faux streams it in 16-character deltas, 65,536 per MB, each through the agent
  loop and the session's events. Target: well under a second per MB at 20 MB.
- The three real adapters' event handling in process (Anthropic ``content_block_delta``, OpenAI
  Responses ``response.output_text.delta``, Chat Completions chunks), 16 characters per event,
  into a ``MessageBuilder`` whose events a consumer reads as the agent loop does.

Usage: ``.venv/bin/python bench/text_assembly.py [--sizes 1,2,4,8,20] [--runs 3] [--skip-cli]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
MB = 1024 * 1024
TARGET_SECONDS_PER_MB = 1.0
LINE = "all work and no play makes a dull answer " * 3 + "\n"


def _answer(megabytes: float) -> str:
    size = int(megabytes * MB)
    return (LINE * (size // len(LINE) + 1))[:size]


def cli_seconds(megabytes: float, work: Path) -> tuple[float, float]:
    script = work / f"answer-{megabytes}.json"
    text = _answer(megabytes)
    script.write_text(json.dumps([{"text": text}]))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TAU_AGENT_DIR": str(work / "agent")}
    command = [sys.executable, "-m", "tau", "-p", "--no-session", "-ne", "--model", "faux/faux-1"]
    command += ["--faux-script", str(script), "go"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or len(done.stdout) != len(text.encode()) + 1:
        raise SystemExit(f"tau failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _events(api: str, text: str) -> list[dict]:
    pieces = [text[i : i + 16] for i in range(0, len(text), 16)]
    if api == "anthropic":
        return [
            {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            *(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
                for p in pieces
            ),
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
            {"type": "message_stop"},
        ]
    if api == "responses":
        item = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
        return [
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            *({"type": "response.output_text.delta", "output_index": 0, "delta": p} for p in pieces),
        ]
    return [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces] + [
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    ]


def adapter_seconds(api: str, megabytes: float) -> tuple[float, float]:
    from tau.llm.builder import MessageBuilder
    from tau.llm.providers import anthropic, openai_completions, openai_responses
    from tau.llm.types import Model

    text = _answer(megabytes)
    events = _events(api, text)

    async def run() -> tuple[float, float]:
        model = Model(id="m", provider="p", api="anthropic-messages")
        builder = MessageBuilder(model)

        async def consume() -> None:
            async for event in builder.stream:
                event.get("partial")  # the agent loop takes each partial

        consumer = asyncio.ensure_future(consume())
        if api == "anthropic":
            state = anthropic._StreamState(builder)
            handle = state.handle
        elif api == "responses":
            state = openai_responses._EventState(builder)
            handle = state.handle
        else:
            state = openai_completions._ChunkState(builder, model)
            handle = state.handle
        started, cpu = time.perf_counter(), time.process_time()
        builder.start()
        for number, event in enumerate(events):
            handle(event)
            if number % 64 == 0:
                await asyncio.sleep(0)  # one loop turn per network read of a few KB
        builder.finish("stop")
        await consumer
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert builder.message["content"][0]["text"] == text
        return elapsed, cpu

    return asyncio.run(run())


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)


def _report(label: str, sizes: list[float], seconds: dict[float, tuple[float, float]]) -> None:
    base = seconds[sizes[0]][1] / sizes[0]
    for size in sizes:
        wall, cpu = seconds[size]
        per_mb = cpu / size
        verdict = "ok" if per_mb < TARGET_SECONDS_PER_MB else "MISSED"
        print(
            f"{label:<22} {size:>5g} MB  wall {wall:6.2f} s ({wall / size:4.2f} s/MB)  cpu {cpu:6.2f} s "
            f"({per_mb:4.2f} s/MB)  ratio to {sizes[0]:g} MB {per_mb / base:4.2f}  "
            f"target < {TARGET_SECONDS_PER_MB:g} s/MB  {verdict}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4,8,20", help="answer sizes in MB, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="median of this many runs per size")
    parser.add_argument("--skip-cli", action="store_true", help="only the in-process adapter figures")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    sizes = sorted(float(size) for size in args.sizes.split(","))
    runs = max(1, args.runs)
    if not args.skip_cli:
        with tempfile.TemporaryDirectory() as tmp:
            cli_seconds(sizes[0], Path(tmp))  # warm-up
            seconds = {size: _median([cli_seconds(size, Path(tmp)) for _ in range(runs)]) for size in sizes}
        _report("tau -p, faux", sizes, seconds)
    for api in ("anthropic", "responses", "completions"):
        seconds = {size: _median([adapter_seconds(api, size) for _ in range(runs)]) for size in sizes}
        _report(f"adapter {api}", sizes, seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
