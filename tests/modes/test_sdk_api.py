"""``tau.__all__`` is the SDK's promise: pinned against docs/sdk.md, resolvable, and lazy.

As httpx's ``tests/test_exported_members.py``: a name that appears in ``tau`` or disappears from it
without docs/sdk.md's reference saying so fails here.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import tau
from tau_process import tau_env

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "sdk.md"


def _documented() -> set[str]:
    reference = DOC.read_text(encoding="utf-8").split("\n## Reference\n", 1)[1]
    return set(re.findall(r"^### `tau\.([A-Za-z_]+)`$", reference, flags=re.MULTILINE))


def test_all_is_what_the_reference_documents():
    assert sorted(tau.__all__) == sorted(_documented())


def test_every_public_name_resolves_and_none_is_extra():
    for name in tau.__all__:
        assert getattr(tau, name) is not None, name
    public = {
        name
        for name in dir(tau)
        if not name.startswith("_") and not isinstance(getattr(tau, name), types.ModuleType)
    }
    assert public == set(tau.__all__) - {"__version__"}


def test_the_checker_sees_an_undocumented_name(monkeypatch):
    """Guard against a pin that passes vacuously."""
    monkeypatch.setattr(tau, "__all__", [*tau.__all__, "Surprise"])
    assert sorted(tau.__all__) != sorted(_documented())


def test_import_tau_loads_no_sdk_until_a_name_is_used():
    """``import tau`` stays as cheap as ``tau --version`` needs (the names load on first use)."""
    code = (
        "import json, sys, tau; before = sorted(m for m in sys.modules if m.startswith('tau'));"
        " tau.run; after = 'tau.sdk.oneshot' in sys.modules; print(json.dumps([before, after]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=tau_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout)
    assert before == ["tau", "tau.common", "tau.common.lazy"]
    assert after is True


# RuntimeOptions fields the SDK spells another way: session=None / "continue", tools=[].
_SPELLED_OTHERWISE = {"no_session": "session", "continue_": "session", "no_tools": "tools"}


def test_every_option_of_the_command_line_is_a_keyword():
    """Issue 21: "everything the CLI can set, the SDK can set". A new flag fails here until
    ``create_agent_session`` takes it and docs/sdk.md's options table lists it."""
    from tau.modes.run import _FLAG_NAMES, FLAGS
    from tau.modes.runtime import RuntimeOptions

    fields = {item.name for item in dataclasses.fields(RuntimeOptions)}
    from_flag = {flag: name for name, flag in _FLAG_NAMES.items()}
    # The flags that reach the session (not the prompts, the output mode, --help, ...), and the
    # extensions' own flags (``args.unknown_flags``).
    flags = {flag.dest for flag in FLAGS if flag.runtime} | {"unknown_flags"}
    assert {from_flag.get(dest, dest) for dest in flags} == fields - {"cwd", "settings"}
    keywords = set(inspect.signature(tau.create_agent_session).parameters)
    assert {_SPELLED_OTHERWISE.get(name, name) for name in fields} == keywords
    table = DOC.read_text(encoding="utf-8").split("\n### Options\n", 1)[1].split("\n### ", 1)[0]
    assert set(re.findall(r"^\| `([a-z_]+)=` \|", table, flags=re.MULTILINE)) == keywords
