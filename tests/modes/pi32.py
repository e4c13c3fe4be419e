"""Issue 32's differential runs: the same command line through real pi 1.6 and through tau.

Both answer with the echo model of issue 22 (``tests/regressions/data/pi22/faux-ext.ts`` for pi, the
faux factory in ``tests/regressions/pi22_faux.py`` for tau), in a scratch folder ``base`` holding
``proj/`` (the working directory), ``agent/`` (the agent dir) and ``sessions/``. The goldens in
``data/pi32/`` were made with real pi 1.6 by :func:`make_goldens` (``PI_BIN=… python tests/modes/pi32.py``);
the opt-in tests that run pi live skip when ``PI_BIN`` is unset.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE.parent) not in sys.path:  # run as a script: the shared test helpers live in tests/
    sys.path.insert(0, str(HERE.parent))

from tau_process import tau_command, tau_env  # noqa: E402

DATA = HERE / "data" / "pi32"
FAUX_EXT = REPO / "tests" / "regressions" / "data" / "pi22" / "faux-ext.ts"
FAUX_FACTORY = f"{REPO / 'tests' / 'regressions' / 'pi22_faux.py'}:respond"
PLACE = "/tmp/pi32"  # what the goldens say the scratch folder was


def prepare(base: Path) -> Path:
    """``base/proj`` (returned), ``base/agent``, ``base/sessions``."""
    for name in ("proj", "agent", "sessions"):
        (base / name).mkdir(parents=True, exist_ok=True)
    return base / "proj"


def run(
    program: str, args: list[str], base: Path, *, pi_bin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """One run of ``program`` (``"pi"`` or ``"tau"``) in ``base/proj``, sessions in ``base/sessions``."""
    project = prepare(base)
    common = ["-ne", "--model", "faux/faux-1", "--session-dir", str(base / "sessions")]
    if program == "pi":
        assert pi_bin, "PI_BIN names real pi 1.6"
        argv = [pi_bin, *common, "-e", str(FAUX_EXT), *args]
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(base / "agent"), "HOME": str(base), "PI_OFFLINE": "1"}
        # pi's launcher runs `node` from PATH; the Node 22 beside it, as in data/pi22/README.md.
        env["PATH"] = f"{Path(pi_bin).parent}{os.pathsep}{env.get('PATH', '')}"
    else:
        script = base / "script.json"
        script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
        argv = tau_command(*common, "--faux-script", str(script), *args)
        env = tau_env({"TAU_FAUX_SCRIPT": None}, home=base, agent_dir=base / "agent")
    return subprocess.run(
        argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )


def relocated(value: Any, base: Path) -> Any:
    """``value`` with the scratch folder written as :data:`PLACE`."""
    text = json.dumps(value, ensure_ascii=False).replace(str(base), PLACE)
    return json.loads(text)


def session_records(base: Path) -> list[list[dict[str, Any]]]:
    """Every session file under ``base/sessions``, oldest name first, as records."""
    return [
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for path in sorted((base / "sessions").glob("*.jsonl"))
    ]


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Session records without what differs from run to run (decisions.md: ids, times, usage, prompt text)."""
    masked = []
    for record in records:
        record = json.loads(json.dumps(record))
        for key in ("id", "parentId", "timestamp"):
            record.pop(key, None)
        message = record.get("message")
        if isinstance(message, dict):
            for key in (
                "timestamp",
                "usage",
                "responseId",
                "durationMs",
                "sections",
                "toolsAdded",
                "toolsRemoved",
            ):
                message.pop(key, None)
            if message.get("role") == "system":
                message["content"] = "<system prompt>"
        masked.append(record)
    return masked


# -- the scenarios ---------------------------------------------------------------------------


def file_args_files(project: Path) -> list[str]:
    """Text (with a BOM), an empty file, a small PNG and one too wide (resized): the ``@`` arguments."""
    import random

    from PIL import Image

    (project / "notes.txt").write_bytes("\ufeffhello notes\nsecond line\n".encode())
    (project / "empty.txt").write_bytes(b"")
    (project / "dot.png").write_bytes((DATA / "dot.png").read_bytes())
    # Noise: JPEG is the smaller encoding whatever the encoder (pi's Photon, tau's Pillow).
    noise = random.Random(32).randbytes(2500 * 400 * 3)
    Image.frombytes("RGB", (2500, 400), noise).save(project / "wide.png")
    return ["@notes.txt", "@empty.txt", "@dot.png", "@wide.png"]


def file_args_run(program: str, base: Path, pi_bin: str | None = None) -> dict[str, Any]:
    """``--mode json @… "what is in these"``: the first user message as the program sent it."""
    files = file_args_files(prepare(base))
    done = run(program, ["--mode", "json", "--no-session", *files, "what is in these"], base, pi_bin=pi_bin)
    assert done.returncode == 0, done.stderr
    user = next(
        json.loads(line)["message"]
        for line in done.stdout.splitlines()
        if line.startswith('{"type":"message_end"') and '"role":"user"' in line
    )
    blocks = []
    for block in user["content"]:
        if block["type"] == "image" and block["mimeType"] == "image/png" and len(block["data"]) < 1000:
            blocks.append(block)  # not resized: the file's bytes, equal in both programs
        elif block["type"] == "image":
            blocks.append({"type": "image", "mimeType": block["mimeType"], "data": "<resized>"})
        else:
            blocks.append(block)
    return relocated({"content": blocks, "stderr": done.stderr}, base)


def session_id_run(program: str, base: Path, pi_bin: str | None = None) -> dict[str, Any]:
    """``--session-id`` twice: the first run creates the session (saying so), the second reopens it."""
    first = run(program, ["-p", "--session-id", "my-task.1", "first prompt"], base, pi_bin=pi_bin)
    second = run(program, ["-p", "--session-id", "my-task.1", "second prompt"], base, pi_bin=pi_bin)
    bad = run(program, ["-p", "--session-id", "-bad", "x"], base, pi_bin=pi_bin)
    sessions = session_records(base)
    return relocated(
        {
            "runs": [[r.returncode, r.stdout, r.stderr] for r in (first, second)],
            "bad": [bad.returncode, bad.stderr.startswith("Error: "), bad.stdout],
            "files": len(sessions),
            "header": {k: v for k, v in sessions[0][0].items() if k != "timestamp"},
            "session": comparable(sessions[0][1:]),
        },
        base,
    )


EXPORT_SESSION = DATA / "export-session.jsonl"


def make_export_session(pi_bin: str, base: Path) -> str:
    """The session ``export`` pages: made by real pi (a tool call and its result, an image, a name),
    then a branch from the first reply appended (the session's leaf), as pi writes one."""
    from tau.session.manager import SessionManager

    project = prepare(base)
    (project / "dot.png").write_bytes((DATA / "dot.png").read_bytes())
    first = run("pi", ["-p", "-n", "export demo", "bash: echo hello from the tool"], base, pi_bin=pi_bin)
    second = run("pi", ["-p", "-c", "@dot.png", "plain words & <markup>"], base, pi_bin=pi_bin)
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    [path] = sorted((base / "sessions").glob("*.jsonl"))
    manager = SessionManager.open(path)
    reply = next(
        e["id"]
        for e in manager.get_entries()
        if e.get("type") == "message"
        and e["message"]["role"] == "assistant"
        and not any(b.get("type") == "toolCall" for b in e["message"]["content"])
    )
    manager.branch(reply)
    manager.append_message(
        {"role": "user", "content": [{"type": "text", "text": "another way"}], "timestamp": 1}
    )
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "echo: another way"}],
            "api": "faux",
            "provider": "faux",
            "model": "faux-1",
            "usage": {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    manager.close()
    return path.read_text(encoding="utf-8").replace(str(base), PLACE)


def page_data(page: str) -> dict[str, Any]:
    """The session data a pi (or tau) export page embeds."""
    import base64
    import re

    match = re.search(r'<script id="session-data" type="application/json">([^<]*)</script>', page)
    assert match, "no session-data block"
    return json.loads(base64.b64decode(match.group(1)))


def export_run(program: str, base: Path, pi_bin: str | None = None) -> dict[str, Any]:
    """``--export SESSION.jsonl out.html`` of :data:`EXPORT_SESSION`: what it said, and the page's data."""
    project = prepare(base)
    (project / "session.jsonl").write_text(EXPORT_SESSION.read_text(encoding="utf-8"), encoding="utf-8")
    done = run(program, ["--export", "session.jsonl", "out.html"], base, pi_bin=pi_bin)
    page = (project / "out.html").read_text(encoding="utf-8")
    return relocated({"stdout": done.stdout, "code": done.returncode, "data": page_data(page)}, base)


def export_texts() -> list[str]:
    """What the page must show: every message text, tool call and result of the session (all branches)."""
    records = [json.loads(line) for line in EXPORT_SESSION.read_text(encoding="utf-8").splitlines()]
    texts = []
    for record in records:
        message = record.get("message") or {}
        for block in message.get("content") or []:
            if block.get("type") == "text" and message.get("role") in ("user", "assistant", "toolResult"):
                texts += [line for line in block["text"].splitlines() if line.strip()]
            elif block.get("type") == "toolCall":
                texts.append(block["arguments"]["command"])
    return texts


def chromium() -> str | None:
    """Headless Chromium (Debian's ``chromium``), if installed."""
    import shutil

    return next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)


def browser_dom(browser: str, page: Path, timeout: float = 120) -> str:
    """The DOM a headless Chromium builds from ``page`` (scripts run; no network)."""
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def visible_text(dom: str) -> str:
    """The text of a DOM outside ``<script>`` and ``<style>`` (entities decoded)."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []
            self.hidden = 0

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            self.hidden += tag in ("script", "style")

        def handle_endtag(self, tag: str) -> None:
            self.hidden -= tag in ("script", "style")

        def handle_data(self, data: str) -> None:
            if not self.hidden:
                self.parts.append(data)

    parser = Text()
    parser.feed(dom)
    return "".join(parser.parts)


def export_golden(pi_bin: str, base: Path) -> dict[str, Any]:
    """The ``export`` golden: pi's run, and which of :func:`export_texts` pi's rendered page shows."""
    result = export_run("pi", base, pi_bin)
    browser = chromium()
    assert browser, "the export golden needs chromium to render pi's page"
    shown = visible_text(browser_dom(browser, base / "proj" / "out.html"))
    result["shown"] = [text for text in export_texts() if text in shown]
    return result


SCENARIOS = {"file-args": file_args_run, "session-id": session_id_run, "export": export_run}
GOLDEN_MAKERS = {"export": export_golden}


def golden(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def make_goldens(pi_bin: str, names: list[str]) -> None:
    import tempfile

    if "export-session" in names:
        with tempfile.TemporaryDirectory() as scratch:
            EXPORT_SESSION.write_text(make_export_session(pi_bin, Path(scratch)), encoding="utf-8")
        print(f"wrote {EXPORT_SESSION.name}")
        names = [name for name in names if name != "export-session"]
        if not names:
            return
    for name in names or list(SCENARIOS):
        with tempfile.TemporaryDirectory() as scratch:
            if name in GOLDEN_MAKERS:
                result = GOLDEN_MAKERS[name](pi_bin, Path(scratch))
            else:
                result = SCENARIOS[name]("pi", Path(scratch), pi_bin)
        (DATA / f"{name}.json").write_text(
            json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"wrote {name}.json")


if __name__ == "__main__":
    make_goldens(os.environ["PI_BIN"], sys.argv[1:])
