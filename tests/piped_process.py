"""Starting a CLI under test with all three standard streams piped (the RPC and differential drivers)."""

from __future__ import annotations

import asyncio
from pathlib import Path


async def start_piped(argv: list[str], *, cwd: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    """``argv`` with stdin, stdout and stderr piped; stdout lines may be up to 16 MiB."""
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 24,
    )
