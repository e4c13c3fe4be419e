"""Drive ``tau --mode rpc`` as a subprocess the way pi's transcript driver drove pi.

The transcript (``rpc/rpc-session.jsonl``, ``{dir, line}`` records) says when each input line was
sent: right after some output line. The driver waits for the same *anchor*: the n-th output line
that is a response, an ``agent_settled`` or a ``tool_execution_start`` (lines whose position does
not depend on timing), then writes the input line. After the last input it closes stdin and reads
to the end.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import tau_process
from piped_process import start_piped

ANCHOR_TYPES = {"response", "agent_settled", "tool_execution_start"}


def is_anchor(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") in ANCHOR_TYPES


def plan_inputs(transcript: list[dict]) -> list[tuple[int, str | None]]:
    """``(anchors to wait for, input line)`` for each input of a transcript, then ``(all anchors, None)``:
    stdin is closed once every anchor of the transcript has been seen."""
    plan: list[tuple[int, str | None]] = []
    anchors = 0
    for record in transcript:
        if record["dir"] == "out":
            anchors += is_anchor(record["line"])
        else:
            plan.append((anchors, record["line"]))
    plan.append((anchors, None))
    return plan


@dataclass
class Run:
    out: list[str] = field(default_factory=list)
    stderr: bytes = b""
    code: int | None = None


def tau_command(*args: str) -> list[str]:
    return tau_process.tau_command("--mode", "rpc", *args)


def tau_env(**extra: str) -> dict[str, str]:
    return tau_process.tau_env(extra)


async def replay(
    plan: list[tuple[int, str | None]],
    argv: list[str],
    *,
    cwd: Path,
    env: dict,
    timeout: float = 60,
    on_output: Callable[[str], None] | None = None,
) -> Run:
    """Run ``argv`` through ``plan``; ``on_output`` sees each output line as it is read."""
    proc = await start_piped(argv, cwd=cwd, env=env)
    run = Run()
    anchors = 0

    async def read_line() -> bool:
        nonlocal anchors
        raw = await proc.stdout.readline()
        if not raw:
            return False
        line = raw.decode().removesuffix("\n")
        run.out.append(line)
        anchors += is_anchor(line)
        if on_output is not None:
            on_output(line)
        return True

    async def drive() -> None:
        for wanted, line in plan:
            while anchors < wanted:
                if not await read_line():
                    raise AssertionError(f"tau ended before anchor {wanted}; output so far: {run.out[-5:]}")
            if line is None:
                break
            proc.stdin.write(line.encode() + b"\n")
            await proc.stdin.drain()
        proc.stdin.close()
        while await read_line():
            pass

    try:
        await asyncio.wait_for(drive(), timeout)
        run.stderr = await proc.stderr.read()
        run.code = await asyncio.wait_for(proc.wait(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return run
