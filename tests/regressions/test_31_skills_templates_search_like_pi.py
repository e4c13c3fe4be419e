"""Issue 31: skills, prompt templates and grep/find/ls give what real pi 1.6 gives.

Each scenario of ``pi31_runs.py`` was run through pi 1.6 (``data/pi31/<name>.json``, made with the
command in ``data/pi31/README.md``); tau runs it the same way and the events, the session file and
the context of every model request are compared (``pi31_runs.comparable``). With ``PI_BIN`` set, pi
runs again next to tau.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path

import pytest
from pi31_runs import SCENARIOS, comparable, load_golden, run_pi, run_tau

_RUNS: dict[str, dict] = {}


def _tau(name: str) -> dict:
    if name not in _RUNS:
        with tempfile.TemporaryDirectory(prefix="pi31-") as tmp:
            _RUNS[name] = comparable(run_tau(name, Path(tmp)))
    return _RUNS[name]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_run_equals_pi(name):
    tau, pi = _tau(name), comparable(load_golden(name))
    for part in ("stdout", "session", "contexts", "code"):
        assert tau[part] == pi[part], part
    assert json.dumps(tau) == json.dumps(pi)  # the fields in pi's order too


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to run it next to tau")
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_run_equals_a_fresh_pi_run(name):
    with tempfile.TemporaryDirectory(prefix="pi31-") as tmp:
        pi = comparable(run_pi(name, Path(tmp), os.environ["PI_BIN"]))
    assert _tau(name) == pi


def test_comparison_notices_a_changed_listing_or_result():
    golden = load_golden("skills-user")
    changed = [line.replace("<name>pdf-tools</name>", "<name>pdf-tool</name>") for line in golden.stdout]
    assert changed != golden.stdout
    assert comparable(dataclasses.replace(golden, stdout=changed)) != comparable(golden)
    search = load_golden("search-tools")
    contexts = json.loads(json.dumps(search.contexts).replace("100 matches limit", "99 matches limit"))
    assert comparable(dataclasses.replace(search, contexts=contexts)) != comparable(search)


# -- what each scenario shows, stated on pi's goldens -----------------------------------------


def _system_sections(run) -> dict:
    for entry in run.session:
        message = entry.get("message") or {}
        if message.get("role") == "system":
            return message["sections"]
    raise AssertionError("no system message")


def _prompts(run) -> list[str]:
    """The user text of each request (the last message of each context)."""
    return [context[-1]["content"][0]["text"] for context in run.contexts]


def _commands(run) -> list[str]:
    for line in run.stdout:
        record = json.loads(line)
        if record.get("command") == "get_commands":
            return [command["name"] for command in record["data"]["commands"]]
    raise AssertionError("no get_commands response")


def test_pi_lists_name_description_location_never_the_body():
    run = load_golden("skills-user")
    listing = _system_sections(run)["skills"]
    assert "<name>pdf-tools</name>" in listing and "Extract text &amp; tables from &lt;PDF&gt;" in listing
    assert "<location>/tmp/pi31/agent/skills/pdf-tools/SKILL.md</location>" in listing
    assert "Run `scripts/x.sh`" not in listing  # the body stays out
    assert "<name>Bad_Name</name>" in listing  # a bad name is a warning, the skill loads
    assert "no-desc" not in listing  # no description: not loaded
    assert "manual-only" not in listing  # disable-model-invocation: not listed ...
    assert "The first twin." in listing and "The second twin." not in listing  # first of a name wins
    assert "<name>notes</name>" not in listing and "A root-level Markdown skill." in listing
    assert "<name>deeper</name>" in listing  # no name: the folder's
    prompts = _prompts(run)
    assert prompts[0].startswith(
        '<skill name="pdf-tools" location="/tmp/pi31/agent/skills/pdf-tools/SKILL.md">'
    )
    assert prompts[0].endswith("Run `scripts/x.sh`.\n</skill>\n\nextract report.pdf")
    assert "manual body" in prompts[1]  # ... but /skill:manual-only loads it
    assert prompts[2].endswith("</skill>\n\nspaced   args") and "first twin" in prompts[2]
    assert prompts[3] == "/skill:unknown stays as typed"
    assert "skill:manual-only" in _commands(run) and "skill:no-desc" not in _commands(run)


def test_pi_reads_project_skills_only_when_trusted():
    trusted, untrusted = load_golden("skills-project-trusted"), load_golden("skills-project-untrusted")
    assert "local-skill" in _system_sections(trusted)["skills"]
    assert "local-skill" not in _system_sections(untrusted)["skills"]
    assert _prompts(trusted)[0].endswith("Project body.\n</skill>\n\ngo")
    assert _prompts(trusted)[1] == "Project template: x\n"  # no frontmatter: the body is not trimmed
    assert _prompts(untrusted) == ["/skill:local-skill go", "/local x"]
    assert _commands(trusted) == ["local", "skill:local-skill", "skill:pdf-tools"]
    assert _commands(untrusted) == ["skill:pdf-tools"]


def test_pi_keeps_explicit_paths_with_no_skills_and_no_templates():
    run = load_golden("skills-flags")
    assert (
        "extra-skill" in _system_sections(run)["skills"]
        and "pdf-tools" not in _system_sections(run)["skills"]
    )
    prompts = _prompts(run)
    assert "extra body" in prompts[0] and prompts[1] == "/skill:pdf-tools x"
    assert prompts[2] == "T: b then a" and prompts[3] == "/review y"


def test_pi_substitutes_every_placeholder():
    prompts = _prompts(load_golden("templates"))
    assert prompts[:2] == [
        "Review the staged changes. Focus on correctness.",
        "Review the staged changes. Focus on concurrency.",
    ]
    assert prompts[2] == (
        "one=a b two=c ten= all=a b c d e f args=a b c d e f from2=c d e f mid=c d=c dall=a b c d e f "
        "dargs=a b c d e f zero=a b c d e f\n"
    )
    assert prompts[3] == "one= two= ten= all= args= from2= mid= d=none dall=nothing dargs=empty zero=\n"
    assert prompts[4].startswith('one=don\'t two=say "hi" ') and 'all=don\'t say "hi" "unclosed' in prompts[4]
    assert "ten=ten" in prompts[5]


def test_pi_search_tools_cap_and_skip_as_documented():
    results = [
        c[-1]["content"][0]["text"]
        for c in load_golden("search-tools").contexts
        if c[-1]["role"] == "toolResult"
    ]
    assert results[0].endswith("[100 matches limit reached. Use limit=200 for more, or refine pattern]")
    assert results[2].endswith("[Some lines truncated to 500 chars. Use read tool to see full lines]")
    assert results[3] == results[4] == "No matches found"  # binary, then ignored files
    assert results[5].endswith("\n\n[50.0KB limit reached]")
    assert ".hidden/config.txt" in results[6] and "build/" not in results[6]
    assert results[10].endswith("[1 entries limit reached. Use limit=2 for more]")
