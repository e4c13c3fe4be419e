"""Benchmark: open a 10,000-entry session and build its model context; one append; peak memory.

Targets (decisions.md "Benchmarks", CI machine class: 2 cores): open + context build <= 70 ms
(median of >= 5 runs after a warm-up), peak memory of the open session <= 4x the file size (peak RSS
from ``resource.getrusage`` minus the RSS before the work). The append must not re-read the file.

Usage: ``.venv/bin/python bench/session_open.py [--runs N] [--keep FILE]``
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.common import jsjson  # noqa: E402
from tau.common.jsstr import iso_from_ms  # noqa: E402
from tau.session import SessionManager, projection  # noqa: E402

TARGET_MS = 70.0
TARGET_MEMORY_FACTOR = 4.0
WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "with",
    "as",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "from",
    "at",
    "or",
    "an",
    "file",
    "line",
    "code",
    "test",
    "value",
    "error",
    "function",
    "return",
    "import",
    "class",
    "self",
    "def",
    "if",
    "else",
    "while",
    "print",
    "module",
    "session",
    "entry",
]


def generate(path: Path, seed: int = 1, entries: int = 10_000, cwd: str = "/tmp/proj") -> int:
    """Write the benchmark session: header, model_change, thinking_level_change, system message,
    (entries - 4) / 4 x [user, assistant (text + bash call), tool result, assistant text] (2,499 for
    the default 10,000 entries), session_info."""
    rnd = random.Random(seed)
    clock = 1_795_996_792_369
    used: set[str] = set()
    parent: str | None = None
    out = [
        {
            "type": "session",
            "version": 3,
            "id": "019b0000-0000-7000-8000-000000000001",
            "timestamp": iso_from_ms(clock),
            "cwd": cwd,
        }
    ]

    def text(n: int) -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(n))

    def usage() -> dict:
        return {
            "input": rnd.randint(0, 5000),
            "output": rnd.randint(0, 900),
            "cacheRead": rnd.randint(0, 90000),
            "cacheWrite": rnd.randint(0, 3000),
            "totalTokens": rnd.randint(0, 99000),
            "cost": {
                "input": 0.0012,
                "output": 0.0135,
                "cacheRead": 0.0291,
                "cacheWrite": 0.0037,
                "total": 0.0475,
            },
        }

    def add(kind: str, **fields: object) -> None:
        nonlocal parent, clock
        clock += 9
        entry_id = f"{rnd.getrandbits(32):08x}"
        while entry_id in used:
            entry_id = f"{rnd.getrandbits(32):08x}"
        used.add(entry_id)
        out.append(
            {"type": kind, "id": entry_id, "parentId": parent, "timestamp": iso_from_ms(clock), **fields}
        )
        parent = entry_id

    def assistant(content: list, stop: str) -> dict:
        return {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": usage(),
            "stopReason": stop,
            "timestamp": clock,
            "durationMs": rnd.randint(100, 9000),
            "thinkingLevel": "off",
        }

    add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    add("thinking_level_change", thinkingLevel="off")
    tool = {"name": "bash", "description": text(40), "parameters": {"type": "object", "properties": {}}}
    add(
        "message",
        message={
            "role": "system",
            "content": "",
            "sections": {"preamble": text(30)},
            "timestamp": clock,
            "toolsAdded": [tool],
        },
    )
    for turn in range((entries - 4) // 4):
        add(
            "message",
            message={"role": "user", "content": [{"type": "text", "text": text(40)}], "timestamp": clock},
        )
        call = f"toolu_{turn:020d}"
        bash = {
            "type": "toolCall",
            "id": call,
            "name": "bash",
            "arguments": {"command": "grep -rn " + text(3)},
        }
        add("message", message=assistant([{"type": "text", "text": text(45)}, bash], "toolUse"))
        output = "\n".join(text(12) for _ in range(9))
        result = {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": "bash",
            "content": [{"type": "text", "text": output}],
            "isError": False,
            "durationMs": rnd.randint(1, 900),
            "timestamp": clock,
        }
        add("message", message=result)
        add("message", message=assistant([{"type": "text", "text": text(70)}], "stop"))
    add("session_info", name="benchmark session")
    path.write_bytes(b"".join(jsjson.dumps(entry) + b"\n" for entry in out))
    return len(out) - 1


def open_and_build(path: Path) -> int:
    manager = SessionManager.open(path)
    try:
        return len(manager.build_session_context()["messages"])
    finally:
        manager.close()


def stages(path: Path) -> tuple[float, float, float]:
    """Wall ms of the three parts: open (read + index), parse the branch, project it."""
    start = time.perf_counter()
    manager = SessionManager.open(path)
    opened = time.perf_counter()
    branch = manager.get_branch()
    parsed = time.perf_counter()
    projection.build_session_context(branch)
    done = time.perf_counter()
    manager.close()
    return (opened - start) * 1000, (parsed - opened) * 1000, (done - parsed) * 1000


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure_memory(path: Path) -> int:
    """Peak RSS growth while the session is open and its context built (this process must be fresh)."""
    gc.collect()
    before = rss_bytes()
    manager = SessionManager.open(path)
    context = manager.build_session_context()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert context["messages"]
    manager.close()
    return peak - before


def measure_append(path: Path, runs: int) -> tuple[list[float], int]:
    """Times of ``runs`` appends, and how many times they read the file (must be 0)."""
    manager = SessionManager.open(path)
    message = {"role": "user", "content": [{"type": "text", "text": "one more question"}], "timestamp": 1}
    reads = 0
    real_pread, real_read = os.pread, os.read

    def counting(real):
        def call(*args, **kwargs):
            nonlocal reads
            reads += 1
            return real(*args, **kwargs)

        return call

    os.pread, os.read = counting(real_pread), counting(real_read)
    times = []
    try:
        for _ in range(runs):
            start = time.perf_counter()
            manager.append_message(message)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        os.pread, os.read = real_pread, real_read
    manager.close()
    return times, reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", type=Path, help="write the session here (and reuse it if present)")
    parser.add_argument("--memory-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_only:
        print(measure_memory(args.memory_only))
        return
    if args.generate_only:
        generate(args.generate_only)
        return
    with tempfile.TemporaryDirectory(prefix="tau-bench-") as directory:
        run(args, Path(directory))


def run(args: argparse.Namespace, workdir: Path) -> None:
    path = args.keep or workdir / "bench.jsonl"
    if not path.exists():
        # In a child process: Linux keeps a process's peak RSS across fork and exec, so a big
        # parent would hand its peak to the memory probe below.
        subprocess.check_call([sys.executable, __file__, "--generate-only", str(path)])
    size = path.stat().st_size
    # Memory first, in a fresh interpreter.
    memory = int(subprocess.check_output([sys.executable, __file__, "--memory-only", str(path)]).split()[-1])
    copy = workdir / "timed.jsonl"
    copy.write_bytes(path.read_bytes())
    open_and_build(copy)  # warm-up
    times, cpu = [], []
    for _ in range(max(args.runs, 5)):
        start, start_cpu = time.perf_counter(), time.process_time()
        count = open_and_build(copy)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    parts = [stages(copy) for _ in range(max(args.runs, 5))]
    appends, reads = measure_append(copy, 200)
    median = statistics.median(times)
    opened, parsed, projected = (statistics.median(column) for column in zip(*parts, strict=True))
    print(f"session: 10,000 entries, {size / 1e6:.2f} MB, {count} context messages, {os.cpu_count()} cores")
    print(
        f"open + context build : median {median:6.1f} ms (min {min(times):.1f})   target <= {TARGET_MS:.0f} ms"
    )
    print(f"  cpu time           : median {statistics.median(cpu):6.1f} ms (min {min(cpu):.1f})")
    print(
        f"  parts (medians)    : open+index {opened:.1f} ms, parse branch {parsed:.1f} ms, project {projected:.1f} ms"
    )
    print(
        f"one append           : median {statistics.median(appends) * 1000:6.0f} us (max {max(appends):.2f} ms), "
        f"file reads during 200 appends: {reads}"
    )
    print(
        f"peak memory (RSS)    : {memory / 1e6:6.1f} MB = {memory / size:.2f}x file   "
        f"target <= {TARGET_MEMORY_FACTOR:.0f}x ({TARGET_MEMORY_FACTOR * size / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
