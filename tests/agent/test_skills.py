"""Skills: the warnings pi gives (a bad name, a missing description, a duplicate), discovery and
trust, frontmatter read as YAML 1.2, the listing and ``/skill:name``."""

from __future__ import annotations

import pytest

from tau.agent.frontmatter import FrontmatterError, parse_frontmatter
from tau.agent.resources import ResourceOptions, load_resources
from tau.agent.skills import expand_skill_command, format_skills_for_prompt, load_skills
from tau.agent.system_prompt import PromptOptions, build_sections
from tau.agent.trust import needs_trust


def _skill(path, name="my-skill", description="Does things.", body="Body.", **extra):
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = ([f"name: {name}"] if name else []) + ([f"description: {description}"] if description else [])
    fields += [f"{key}: {value}" for key, value in extra.items()]
    path.write_text("---\n" + "\n".join(fields) + f"\n---\n\n{body}\n")
    return path


def _load(tmp_path, *paths):
    return load_skills([(str(p), None) for p in paths], cwd=str(tmp_path))


# -- the warnings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "messages"),
    [
        ("Bad_Name", ["name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"]),
        ("-edge-", ["name must not start or end with a hyphen"]),
        ("two--dashes", ["name must not contain consecutive hyphens"]),
        ("x" * 65, ["name exceeds 64 characters (65)"]),
    ],
)
def test_a_bad_name_warns_and_the_skill_still_loads(tmp_path, name, messages):
    path = _skill(tmp_path / "skills" / "s" / "SKILL.md", name=name)
    skills, diagnostics = _load(tmp_path, tmp_path / "skills")
    assert [s.name for s in skills] == [name]
    assert [(d.type, d.message, d.path) for d in diagnostics] == [("warning", m, str(path)) for m in messages]


def test_a_missing_description_warns_and_the_skill_does_not_load(tmp_path):
    path = _skill(tmp_path / "skills" / "s" / "SKILL.md", description=None)
    skills, diagnostics = _load(tmp_path, tmp_path / "skills")
    assert skills == []
    assert [(d.type, d.message, d.path) for d in diagnostics] == [
        ("warning", "description is required", str(path))
    ]


def test_a_too_long_description_warns_and_loads(tmp_path):
    _skill(tmp_path / "skills" / "s" / "SKILL.md", description="d" * 1025)
    skills, diagnostics = _load(tmp_path, tmp_path / "skills")
    assert len(skills) == 1 and diagnostics[0].message == "description exceeds 1024 characters (1025)"


def test_a_duplicate_name_keeps_the_first_and_warns(tmp_path):
    first = _skill(tmp_path / "a" / "one" / "SKILL.md", name="twin", description="First.")
    second = _skill(tmp_path / "b" / "two" / "SKILL.md", name="twin", description="Second.")
    skills, diagnostics = _load(tmp_path, tmp_path / "a", tmp_path / "b")
    assert [s.description for s in skills] == ["First."]
    (collision,) = diagnostics
    assert collision.type == "collision" and collision.message == 'name "twin" collision'
    assert collision.collision == {
        "resourceType": "skill",
        "name": "twin",
        "winnerPath": str(first),
        "loserPath": str(second),
    }
    assert collision.text() == f'skill name "twin" collision: {second} skipped, {first} kept'


def test_malformed_frontmatter_warns_only_for_a_declared_skill(tmp_path):
    bad = tmp_path / "skills" / "s" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: [unclosed\n---\nbody\n")
    (tmp_path / "skills" / "loose.md").write_text("---\nname: [unclosed\n---\n")
    skills, diagnostics = _load(tmp_path, tmp_path / "skills")
    assert skills == [] and [d.path for d in diagnostics] == [str(bad)]


def test_missing_and_non_markdown_paths_warn(tmp_path):
    (tmp_path / "x.txt").write_text("")
    _, diagnostics = _load(tmp_path, tmp_path / "nope", tmp_path / "x.txt")
    assert [d.message for d in diagnostics] == [
        "skill path does not exist",
        "skill path is not a markdown file",
    ]


def test_warnings_reach_the_run_without_failing_it(tmp_path):
    agent = tmp_path / "agent"
    _skill(agent / "skills" / "bad" / "SKILL.md", name="Bad")
    _skill(agent / "skills" / "none" / "SKILL.md", description=None)
    resources = load_resources(
        ResourceOptions(cwd=str(tmp_path), agent_dir=str(agent), trusted=False, home=str(tmp_path))
    )
    assert [s.name for s in resources.skills] == ["Bad"]
    assert resources.warnings() == [
        f"Skill {agent / 'skills/bad/SKILL.md'}: name contains invalid characters "
        "(must be lowercase a-z, 0-9, hyphens only)",
        f"Skill {agent / 'skills/none/SKILL.md'}: description is required",
    ]


# -- discovery --------------------------------------------------------------------------------------


def _options(tmp_path, **kwargs):
    defaults = {
        "cwd": str(tmp_path / "proj"),
        "agent_dir": str(tmp_path / "agent"),
        "trusted": True,
        "home": str(tmp_path),
    }
    return ResourceOptions(**{**defaults, **kwargs})


def test_discovery_order_project_first_then_user_then_explicit(tmp_path):
    _skill(tmp_path / "proj" / ".tau" / "skills" / "p" / "SKILL.md", name="p")
    _skill(tmp_path / "proj" / ".agents" / "skills" / "a" / "SKILL.md", name="a")
    _skill(tmp_path / "agent" / "skills" / "u" / "SKILL.md", name="u")
    _skill(tmp_path / ".agents" / "skills" / "h" / "SKILL.md", name="h")
    _skill(tmp_path / "extra" / "SKILL.md", name="x")
    resources = load_resources(_options(tmp_path, skill_paths=["../extra/SKILL.md"]))
    assert [s.name for s in resources.skills] == ["p", "a", "u", "h", "x"]
    assert resources.skills[0].source_info == {
        "path": str(tmp_path / "proj/.tau/skills/p/SKILL.md"),
        "source": "auto",
        "scope": "project",
        "origin": "top-level",
        "baseDir": str(tmp_path / "proj/.tau"),
    }
    assert resources.skills[-1].source_info["scope"] == "temporary"


def test_an_untrusted_project_s_skills_and_agents_folders_are_not_read(tmp_path):
    _skill(tmp_path / "proj" / ".tau" / "skills" / "p" / "SKILL.md", name="p")
    _skill(tmp_path / "proj" / ".agents" / "skills" / "a" / "SKILL.md", name="a")
    _skill(tmp_path / "agent" / "skills" / "u" / "SKILL.md", name="u")
    assert [s.name for s in load_resources(_options(tmp_path, trusted=False)).skills] == ["u"]


def test_agents_folders_stop_at_the_git_root(tmp_path):
    _skill(tmp_path / ".agents" / "skills" / "outside" / "SKILL.md", name="outside")  # ~ is tmp_path
    _skill(tmp_path / "work" / ".agents" / "skills" / "above" / "SKILL.md", name="above")
    repo = tmp_path / "work" / "repo"
    (repo / ".git").mkdir(parents=True)
    _skill(repo / ".agents" / "skills" / "root" / "SKILL.md", name="root")
    _skill(repo / "pkg" / ".agents" / "skills" / "deep" / "SKILL.md", name="deep")
    names = [s.name for s in load_resources(_options(tmp_path, cwd=str(repo / "pkg"))).skills]
    assert names == ["deep", "root", "outside"]  # "outside" is the user's own ~/.agents/skills


def test_no_skills_keeps_only_explicit_paths(tmp_path):
    _skill(tmp_path / "agent" / "skills" / "u" / "SKILL.md", name="u")
    _skill(tmp_path / "extra" / "e" / "SKILL.md", name="e")
    resources = load_resources(_options(tmp_path, no_skills=True, skill_paths=[str(tmp_path / "extra")]))
    assert [s.name for s in resources.skills] == ["e"]


def test_a_skill_folder_is_not_searched_further_and_ignore_files_apply(tmp_path):
    root = tmp_path / "agent" / "skills"
    _skill(root / "outer" / "SKILL.md", name="outer")
    _skill(root / "outer" / "inner" / "SKILL.md", name="inner")
    _skill(root / "hidden" / "SKILL.md", name="hidden")
    _skill(root / ".dot" / "SKILL.md", name="dot")
    _skill(root / "node_modules" / "x" / "SKILL.md", name="nm")
    (root / ".gitignore").write_text("hidden/\n")
    assert [s.name for s in load_resources(_options(tmp_path)).skills] == ["outer"]


def test_settings_entries_and_exclusions(tmp_path):
    _skill(tmp_path / "agent" / "skills" / "keep" / "SKILL.md", name="keep")
    _skill(tmp_path / "agent" / "skills" / "drop" / "SKILL.md", name="drop")
    _skill(tmp_path / "shared" / "s" / "SKILL.md", name="shared")
    settings = {"skills": ["../shared", "!drop"]}
    names = [s.name for s in load_resources(_options(tmp_path, user_settings=settings)).skills]
    assert names == ["shared", "keep"]


def test_agents_skills_in_the_project_need_trust(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "proj" / "sub"
    project.mkdir(parents=True)
    assert not needs_trust(project)
    (tmp_path / "proj" / ".agents" / "skills").mkdir(parents=True)
    assert needs_trust(project)
    (tmp_path / "home" / ".agents" / "skills").mkdir(parents=True)
    assert not needs_trust(tmp_path / "home")  # the user's own folder never asks


# -- frontmatter ------------------------------------------------------------------------------------


def test_frontmatter_reads_yaml_1_2_scalars():
    fields, body = parse_frontmatter(
        "---\ndescription: yes\nname: on\nwhen: 2024-01-01\ndisable-model-invocation: true\nn: 0o17\n---\n\n body \n"
    )
    assert fields == {
        "description": "yes",
        "name": "on",
        "when": "2024-01-01",
        "disable-model-invocation": True,
        "n": 15,
    }
    assert body == "body"


def test_frontmatter_rejects_repeated_keys_and_bad_yaml():
    with pytest.raises(FrontmatterError, match="unique"):
        parse_frontmatter("---\nname: a\nname: b\n---\n")
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\nname: [a\n---\n")


def test_frontmatter_edges_as_pi():
    assert parse_frontmatter("\ufeff---\r\nname: x\r\n---\r\nbody") == ({"name": "x"}, "body")
    assert parse_frontmatter("no frontmatter\n") == ({}, "no frontmatter\n")
    assert parse_frontmatter("---\nunterminated") == ({}, "---\nunterminated")


# -- the listing and the command -------------------------------------------------------------------


def test_the_listing_needs_a_reader_and_names_it(tmp_path):
    path = _skill(tmp_path / "s" / "SKILL.md", description="Use <it> & \"quote\" 'it'")
    skills, _ = _load(tmp_path, path)
    listing = format_skills_for_prompt(skills, "bash")
    assert "Use bash to load a skill's file" in listing
    assert "<description>Use &lt;it&gt; &amp; &quot;quote&quot; &apos;it&apos;</description>" in listing
    assert "Body." not in listing
    with_read = build_sections(PromptOptions(cwd="/p", skills=skills))
    assert with_read["skills"].startswith("<skills>\nThe following skills")
    no_reader = build_sections(PromptOptions(cwd="/p", selected_tools=["edit"], skills=skills))
    assert "skills" not in no_reader
    hidden = build_sections(
        PromptOptions(cwd="/p", selected_tools=["read"], hidden_tools=["read"], skills=skills)
    )
    assert "Load a skill's file when the task matches" in hidden["skills"]
    assert list(with_read)[-2:] == ["skills", "cwd"]


def test_skill_command_expansion(tmp_path):
    path = _skill(tmp_path / "s" / "SKILL.md", body="Line one.\n\nLine two.")
    skills, _ = _load(tmp_path, path)
    expanded = expand_skill_command("/skill:my-skill   do it  ", skills)
    assert expanded == (
        f'<skill name="my-skill" location="{path}">\nReferences are relative to {path.parent}.\n\n'
        "Line one.\n\nLine two.\n</skill>\n\ndo it"
    )
    assert expand_skill_command("/skill:my-skill", skills).endswith("</skill>")
    assert expand_skill_command("/skill:other x", skills) == "/skill:other x"
    assert expand_skill_command("plain /skill:my-skill", skills) == "plain /skill:my-skill"


def test_extensions_add_skills_and_templates_through_resources_discover(tmp_path, monkeypatch):
    """pi's ``resources_discover``: after ``session_start`` an extension names more paths."""
    import asyncio

    from tau.modes.runtime import RuntimeOptions, open_runtime

    _skill(tmp_path / "ext" / "skills" / "from-ext" / "SKILL.md", name="from-ext", description="Ext skill.")
    _skill(tmp_path / "ext" / "skills" / "only-ext" / "SKILL.md", name="only-ext", description="Only there.")
    _skill(
        tmp_path / "agent" / "skills" / "from-ext" / "SKILL.md", name="from-ext", description="User skill."
    )
    (tmp_path / "ext" / "prompts").mkdir()
    (tmp_path / "ext" / "prompts" / "ext-t.md").write_text("from an extension: $1")

    def extension(tau):
        async def discover(event, ctx):
            return {
                "skillPaths": [str(tmp_path / "ext" / "skills")],
                "promptPaths": [str(tmp_path / "ext" / "prompts")],
            }

        tau.on("resources_discover", discover)

    async def scenario():
        options = RuntimeOptions(
            cwd=str(tmp_path), model="faux/faux-1", no_session=True, extensions=[extension]
        )
        runtime = await open_runtime(options, "sdk")
        return runtime

    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path))
    runtime = asyncio.run(scenario())
    session = runtime.session
    assert [s.description for s in session.skills] == ["User skill.", "Only there."]  # the user's came first
    assert "only-ext" in session.get_system_prompt()
    assert [t.name for t in session.prompt_templates] == ["ext-t"]
    assert any("collision" in warning for warning in runtime.warnings)


@pytest.mark.parametrize(
    ("start_reason", "discover_reason"), [("startup", "startup"), ("reload", "reload"), ("resume", "startup")]
)
def test_session_start_and_resources_discover_say_why_the_runtime_starts(
    tmp_path, monkeypatch, start_reason, discover_reason
):
    """As pi's: after /reload both events say ``reload``; a resume by a new runtime starts with
    ``resume`` and discovers as at startup."""
    import asyncio

    from tau.modes.runtime import RuntimeOptions, open_runtime

    seen: list[tuple[str, str]] = []

    def extension(tau):
        tau.on("session_start", lambda event, ctx: seen.append(("session_start", event.reason)))
        tau.on("resources_discover", lambda event, ctx: seen.append(("resources_discover", event.reason)))

    async def scenario():
        options = RuntimeOptions(
            cwd=str(tmp_path), model="faux/faux-1", no_session=True, extensions=[extension]
        )
        await open_runtime(options, "sdk", start_reason=start_reason)

    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path))
    asyncio.run(scenario())
    assert seen == [("session_start", start_reason), ("resources_discover", discover_reason)]
