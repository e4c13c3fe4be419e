"""The sandbox: a script reaches nothing but the injected tools, and every limit stops it.

No ``import``, no file system, no network, no timers; an endless loop ends at its deadline, a memory
bomb at the VM's heap limit, output past its limit fails the script, and an abort stops the script
and the tool it is running (a ``sleep`` in ``bash`` is killed).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from codemode_harness import Harness, code_call, text_of

from tau.bundled.codemode.sandbox import SandboxTool, ScriptCallError, run_script
from tau.extension import AbortSignal


def run(code: str, **options: Any):
    return asyncio.run(asyncio.wait_for(run_script(code, tools=options.pop("tools", []), **options), 120))


def test_modules_cannot_be_imported():
    result = run('await import("fs")')
    assert not result.ok and result.error.kind == "script"
    assert result.error.stack == "ReferenceError: could not load module 'fs'"
    static = run('import fs from "fs";\nreturn 1')
    assert not static.ok and static.error.name == "SyntaxError"


def test_no_host_objects_reach_the_script():
    """Nothing to open a file, a socket, a process or a timer with: only the injected globals."""
    names = [
        "require", "process", "std", "os", "fetch", "XMLHttpRequest", "WebSocket", "Deno", "Bun",
        "setTimeout", "setInterval", "WebAssembly", "print", "__tau_bridge",
    ]  # fmt: skip
    result = run(f"return {names!r}.filter((name) => typeof globalThis[name] !== 'undefined')")
    assert result.ok and result.value == []
    reached = run("return [typeof tools, typeof text, typeof store, typeof console.log, typeof ALL_TOOLS]")
    assert reached.value == ["object", "function", "function", "function", "object"]


def test_files_are_reached_only_through_tools(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    opened: list[Any] = []

    async def read(args: Any, signal: AbortSignal) -> Any:
        opened.append(args)
        return Path(args["path"]).read_text()

    code = f"return [typeof std, await tools.read({{ path: {str(secret)!r} }})]"
    result = run(code, tools=[SandboxTool("read", "Read a file", read)])
    assert result.ok and result.value == ["undefined", "top secret"]
    assert opened == [{"path": str(secret)}]


def test_an_endless_loop_stops_at_the_deadline():
    result = run("let n = 0;\nwhile (true) { n++ }", timeout_ms=300)
    assert not result.ok and result.error.kind == "timeout"
    assert result.error.message == "Execution timed out after 300 ms"


def test_a_memory_bomb_stops_at_the_heap_limit():
    code = 'const hoard = [];\nwhile (true) hoard.push("x".repeat(10000) + hoard.length);'
    result = run(code, memory_limit=32 * 1024 * 1024)
    assert not result.ok and result.error.kind == "script"
    assert (result.error.name, result.error.message) == ("InternalError", "out of memory")


def test_output_past_its_limit_fails_the_script_even_if_caught():
    code = 'const big = "x".repeat(9000000);\ntry { text(big); text(big); } catch {}\ntext("after")'
    result = run(code)
    assert not result.ok and result.error.name == "RangeError"
    assert "script output exceeded the limit of 16777216 characters" in result.error.message
    assert len(result.output) == 1


def test_deep_recursion_is_a_catchable_range_error():
    result = run("function f() { return f() }\ntry { f() } catch (e) { return e.name + ': ' + e.message }")
    assert result.ok and result.value == "RangeError: Maximum call stack size exceeded"


def test_built_ins_are_frozen_so_the_bridge_cannot_be_corrupted():
    result = run(
        "Array.prototype.toJSON = () => 'patched';\ntext([1, 2]);\nreturn typeof Array.prototype.toJSON"
    )
    assert result.ok and result.output == [{"type": "text", "text": "[1,2]"}] and result.value == "undefined"
    subclass = run(
        'class Oops extends Error { constructor(m) { super(m); this.name = "Oops" } }\nthrow new Oops("x")'
    )
    assert subclass.error.stack.startswith("Oops: x\n    at Oops (codemode.js:1:")


def test_a_rejected_call_carries_the_tool_error():
    async def fail(args: Any, signal: AbortSignal) -> Any:
        raise ScriptCallError("ENOENT: no such file")

    result = run(
        "try { await tools.read({}) } catch (e) { return e.message }",
        tools=[SandboxTool("read", "", fail)],
    )
    assert result.ok and result.value == "ENOENT: no such file"
    assert [call["status"] for call in result.calls] == ["error"]


def test_an_abort_stops_the_script_and_its_running_call():
    seen: dict[str, Any] = {}

    async def wait_forever(args: Any, signal: AbortSignal) -> Any:
        seen["signal"] = signal
        await signal.wait()
        seen["aborted"] = True
        raise ScriptCallError("aborted")

    async def scenario() -> Any:
        signal = AbortSignal()
        task = asyncio.ensure_future(
            run_script(
                "await tools.wait({});\ntext('never')",
                tools=[SandboxTool("wait", "", wait_forever)],
                signal=signal,
            )
        )
        while "signal" not in seen:
            await asyncio.sleep(0.01)
        signal.abort()
        result = await task
        await asyncio.sleep(0)
        return result

    result = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert not result.ok and result.error.kind == "aborted"
    assert seen.get("aborted") is True
    assert [call["status"] for call in result.calls] == ["cancelled"]
    assert result.output == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def test_aborting_the_session_mid_script_kills_the_running_bash(tmp_path):
    code = 'await tools.bash({ command: "echo $$ > bash.pid; exec sleep 300" });\ntext("never")'
    harness = Harness([code_call(code), {"text": "after"}, {"text": "next"}], tmp_path)

    async def scenario() -> None:
        await harness.start()
        prompt = asyncio.ensure_future(harness.session.prompt("go"))
        pid_file = tmp_path / "bash.pid"
        for _ in range(6000):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.01)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        await harness.session.abort()
        await prompt
        for _ in range(6000):
            if not _alive(pid):
                break
            await asyncio.sleep(0.01)
        assert not _alive(pid)

    asyncio.run(asyncio.wait_for(scenario(), 120))
    (result,) = harness.tool_results("codemode")
    assert result["isError"] is True
    assert "Script aborted: " in text_of(result)
    assert result["details"]["calls"][0]["status"] == "cancelled"
