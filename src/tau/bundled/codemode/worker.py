"""One codemode script in a QuickJS VM, in a process of its own (run as ``python -P worker.py``).

The host (``sandbox.py``) starts this file per script and talks to it in JSON lines: it sends one
``start`` message, then a ``result`` for each call the script makes; the worker sends ``call``,
``output``, and finally ``done`` (or ``crash``) and exits. The host owns the deadline and aborts:
it kills the process, which stops a script in any state, an endless loop included. The VM's own
limits (heap, stack) make a runaway script fail inside the script; an address-space limit on the
process is the backstop should the engine itself misbehave.

This file imports only the standard library and ``quickjs`` (the ``quickjs-ng`` distribution), and
never tau: a fresh interpreter starts it in about a tenth of a second.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

# The wrapper shares line 1 with the script so stack-trace line numbers match what was written.
WRAPPER_HEAD = "(async (tools, console) => {"
WRAPPER_TAIL = "\n})"
# Address space above the heap limit that the interpreter, the engine and its stack may use.
ADDRESS_SPACE_HEADROOM = 1024 * 1024 * 1024
# QuickJS throws null when it cannot even allocate the "out of memory" error; a script that throws
# null itself says so in its text.
THROWN_NULL = json.dumps({"message": "null"}, separators=(",", ":"))
OUT_OF_MEMORY = json.dumps(
    {"name": "InternalError", "message": "out of memory", "stack": "InternalError: out of memory"},
    separators=(",", ":"),
)
_USER_NULL = re.compile(r"\bthrow\s+null\b|reject\(\s*null\s*\)")


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _read() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


def _limit_address_space(heap: int | None) -> None:
    if not heap:
        return
    try:
        import resource

        limit = heap + ADDRESS_SPACE_HEADROOM
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # not on this platform: the heap limit still holds
        pass


def _exception_error(exc: BaseException) -> str:
    """A compile error (``SyntaxError: ...\\n    at <input>:1:36``) as the script error JSON."""
    text = str(exc).rstrip()
    head, _, stack = text.partition("\n")
    name, _, message = head.partition(": ")
    frames = [line.replace("<input>:", "codemode.js:") for line in stack.split("\n") if line.strip()]
    error = {"name": name, "message": message, "stack": "\n".join([head, *frames])}
    return json.dumps(error, separators=(",", ":"))


def main() -> int:
    import quickjs

    start = _read()
    if start is None:
        return 1
    _limit_address_space(start.get("memoryLimit"))
    prelude = start["prelude"]
    code = start["code"]
    wrapped = WRAPPER_HEAD + code + WRAPPER_TAIL
    script_lines = wrapped.count("\n") + 1
    finished = False

    def bridge(kind: str, a: Any = None, b: Any = None, c: Any = None, d: Any = None) -> None:
        nonlocal finished
        if kind in ("call", "global"):
            target = "tool" if kind == "call" else "global"
            _write({"type": "call", "id": int(a), "target": target, "name": b, "args": c})
        elif kind == "output":
            if a == "image":
                item = {"type": "image", "data": b, "mimeType": c}
            elif a == "console":
                item = {"type": "text", "text": b, "console": True}
            else:
                item = {"type": "text", "text": b}
            _write({"type": "output", "item": item})
        elif kind == "done":
            finished = True
            if a:
                _write({"type": "done", "ok": True, "value": b, "writes": c})
            else:
                error = OUT_OF_MEMORY if b == THROWN_NULL and not _USER_NULL.search(code) else b
                _write({"type": "done", "ok": False, "error": error})

    try:
        context = quickjs.Context()
        if start.get("memoryLimit"):
            context.set_memory_limit(int(start["memoryLimit"]))
        if start.get("stackLimit"):
            context.set_max_stack_size(int(start["stackLimit"]))
        context.add_callable("__tau_bridge", bridge)
        # Past the script's last line, so the prelude's frames can be told from the script's.
        padding = "\n" * (script_lines + 1)
        arguments = ", ".join(json.dumps(json.dumps(start[key])) for key in ("tools", "globals", "store"))
        # The bridge leaves the global object before the prelude freezes it: only the prelude's closure keeps it.
        take_bridge = "(() => { const bridge = globalThis.__tau_bridge; delete globalThis.__tau_bridge; return bridge; })()"
        control = context.eval(f"{padding}{prelude}({take_bridge}, {arguments}, {script_lines})")
        try:
            script = context.eval(wrapped)
        except quickjs.JSException as exc:
            bridge("done", False, _exception_error(exc))
            return 0

        def drain() -> None:
            while not finished and context.execute_pending_job():
                pass
            if not finished:
                control("stalled")

        control("run", script)
        drain()
        while not finished:
            message = _read()
            if message is None:  # the host went away
                return 1
            control(
                "settle",
                message["id"],
                bool(message["ok"]),
                message.get("payload"),
                message.get("properties"),
            )
            drain()
    except Exception as exc:  # the VM itself failed: the host reports a sandbox error
        if not finished:
            _write({"type": "crash", "message": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
