"""Issue 32: a session as one self-contained HTML page (``tau --export``, RPC ``export_html``), compared
with real pi 1.6's export and opened in a real browser."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from cli_run import faux, session_files, tau
from pi32 import (
    EXPORT_SESSION,
    browser_dom,
    chromium,
    export_run,
    export_texts,
    golden,
    page_data,
    visible_text,
)


def _tau_export(tmp_path: Path) -> tuple[dict, str]:
    result = export_run("tau", tmp_path)
    return result, (tmp_path / "proj" / "out.html").read_text(encoding="utf-8")


def test_the_page_embeds_the_data_pi_embeds(tmp_path):
    """Against the golden real pi 1.6 made: the same header, entries (every branch) and leaf."""
    result, _ = _tau_export(tmp_path)
    expected = golden("export")
    expected.pop("shown")
    assert result == expected


def test_the_page_shows_what_pis_page_shows_without_a_script(tmp_path):
    _, page = _tau_export(tmp_path)
    shown = visible_text(page)
    missing = [text for text in golden("export")["shown"] if text not in shown]
    assert missing == []
    assert set(golden("export")["shown"]) == set(export_texts())  # pi shows all of them too


def test_the_page_is_one_file_with_nothing_to_fetch(tmp_path):
    _, page = _tau_export(tmp_path)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert re.findall(r"<script\b[^>]*>", page) == ['<script id="session-data" type="application/json">']
    assert "data:image/png;base64," in page  # the image travels inside the page
    assert "default-src 'none'" in page


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_export_against_real_pi(tmp_path):
    assert export_run("tau", tmp_path / "tau") == export_run("pi", tmp_path / "pi", os.environ["PI_BIN"])


def test_export_names_its_output_and_refuses_a_missing_file(project):
    (project / "s.jsonl").write_text(EXPORT_SESSION.read_text(encoding="utf-8"), encoding="utf-8")
    done = tau(["--export", "s.jsonl"], project)
    assert (done.returncode, done.stdout) == (0, "Exported to: tau-session-s.html\n"), done
    assert page_data((project / "tau-session-s.html").read_text(encoding="utf-8"))["leafId"] == "12fc09f0"
    done = tau(["--export", "nope.jsonl"], project)
    assert done.returncode == 1 and done.stderr == f"Error: File not found: {project / 'nope.jsonl'}\n"


def test_rpc_export_html_writes_the_running_session(project, tmp_path, isolated_agent_dir):
    script = faux(tmp_path, [{"text": "hi there"}])
    assert tau(["-p", *script, "hello"], project).returncode == 0
    [session] = session_files(isolated_agent_dir)
    out = tmp_path / "page.html"
    request = json.dumps({"id": "e", "type": "export_html", "outputPath": str(out)})
    done = tau(["--mode", "rpc", "--session", str(session), *script], project, stdin=request + "\n")
    response = next(json.loads(line) for line in done.stdout.splitlines() if '"id":"e"' in line)
    assert response == {
        "id": "e",
        "type": "response",
        "command": "export_html",
        "success": True,
        "data": {"path": str(out)},
    }
    page = out.read_text(encoding="utf-8")
    data = page_data(page)
    assert "You are" in data["systemPrompt"] and {"read", "bash"} <= {t["name"] for t in data["tools"]}
    assert "hello" in visible_text(page) and "hi there" in visible_text(page)


@pytest.fixture(scope="module")
def browser():
    found = chromium()
    if found is None:
        pytest.skip(
            "headless Chromium is not installed (Debian: apt-get install chromium); the page is not opened"
        )
    return found


def test_the_page_in_a_real_browser(tmp_path, browser):
    """Chromium renders every message, tool call and result, on every branch, and draws something."""
    _tau_export(tmp_path)
    page = tmp_path / "proj" / "out.html"
    shown = visible_text(browser_dom(browser, page))
    assert [text for text in export_texts() if text not in shown] == []
    assert "export demo" in shown
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1000,900",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as image:
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 20  # text and cards, not one flat colour
    dominant = max(count for count, _ in colors)
    assert dominant < 0.98 * sum(count for count, _ in colors)
