"""The tests' one harness (docs/testing.md): tau runs as a program only through ``tests/tau_process.py``,
and no test sets a faux script for the whole process. A test that writes its own command line or
``PYTHONPATH`` drifts from the rest (another checkout's ``src``, the real ``HOME``); this names it."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
HARNESS = {TESTS / "tau_process.py", Path(__file__).resolve()}

RULES = {
    "runs python -m tau itself (use run_tau, popen_tau or tau_command)": re.compile(
        r"sys\.executable\s*,\s*\[?\s*[\"']-m[\"']\s*,\s*[\"']tau"  # also pexpect.spawn(python, ["-m", "tau"])
    ),
    "sets PYTHONPATH itself (use tau_env or run_tau)": re.compile(r"[\"']PYTHONPATH[\"']|\bPYTHONPATH\s*="),
    "sets a script for the process (use faux_model.FauxModel)": re.compile(r"\buse_script\("),
}


def breaches(root: Path, skip: set[Path] = frozenset()) -> list[str]:
    """``file:line: what`` for every line under ``root`` that goes around the harness."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.resolve() in skip:
            continue
        text = path.read_text(encoding="utf-8")
        for what, pattern in RULES.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(root)}:{line}: {what}")
    return found


def test_every_test_uses_the_harness():
    found = breaches(TESTS, HARNESS)
    assert not found, "tests going around tests/tau_process.py or faux_model:\n" + "\n".join(found)


def test_the_check_sees_a_test_going_around_the_harness(tmp_path):
    (tmp_path / "test_x.py").write_text(
        "import os, subprocess, sys\n"
        "env = {**os.environ, 'PYTHONPATH': 'src'}\n"
        "subprocess.run([\n    sys.executable,\n    '-m',\n    'tau', '-p', 'hi'], env=env)\n"
        "subprocess.run([sys.executable, '-m', 'cProfile', '-m', 'tau'])\n"  # not tau itself: allowed
        "faux.use_script([])\n"
        "pexpect.spawn(sys.executable, ['-m', 'tau'], env=dict(os.environ, PYTHONPATH='src'))\n"
    )
    assert breaches(tmp_path) == [
        "test_x.py:4: runs python -m tau itself (use run_tau, popen_tau or tau_command)",
        "test_x.py:9: runs python -m tau itself (use run_tau, popen_tau or tau_command)",
        "test_x.py:2: sets PYTHONPATH itself (use tau_env or run_tau)",
        "test_x.py:9: sets PYTHONPATH itself (use tau_env or run_tau)",
        "test_x.py:8: sets a script for the process (use faux_model.FauxModel)",
    ]
