"""Prompt templates: pi's argument splitting and substitutions, loading, collisions, and the session's
order (extension command, then ``input`` handlers on the raw text, then expansion)."""

from __future__ import annotations

import asyncio

import pytest

from faux_model import FauxModel
from tau.agent.prompt_templates import (
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_args,
)
from tau.agent.resources import ResourceOptions, Resources, load_resources


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ('a "b c" d', ["a", "b c", "d"]),
        ("doesn't split", ["doesn't", "split"]),
        ('"the \\"fast\\" path"', ['the "fast" path']),
        ('"unclosed quote', ['"unclosed', "quote"]),
        ("'' x", ["", "x"]),
        ("  spaced\targs\n", ["spaced", "args"]),
        ("a\\b", ["a\\b"]),
    ],
)
def test_arguments_split_as_pi_splits_them(text, args):
    assert parse_command_args(text) == args


def test_every_substitution():
    template = (
        "$1|$2|$3|$@|$ARGUMENTS|${1:-d}|${4:-d}|${@:-none}|${ARGUMENTS:-none}|${@:2}|${@:2:1}|${@:0}|$0"
    )
    assert (
        substitute_args(template, ["a", "b c", ""])
        == "a|b c||a b c |a b c |a|d|a b c |a b c |b c |b c|a b c |"
    )
    assert substitute_args("${@:-none} ${1:-first}", []) == "none first"
    assert substitute_args("$1 $@", ["$2", "$@"]) == "$2 $2 $@"  # values are not substituted again


def test_templates_load_with_description_hint_and_first_line(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text(
        '---\ndescription: Review\nargument-hint: "<focus>"\n---\nFocus on $1.\n'
    )
    (prompts / "plain.md").write_text("\n\n" + "w" * 70 + "\nsecond\n")
    (prompts / "skip.txt").write_text("not a template")
    templates, diagnostics = load_prompt_templates([(str(prompts), None)], cwd=str(tmp_path))
    by_name = {t.name: t for t in templates}
    assert sorted(by_name) == ["plain", "review"] and diagnostics == []
    assert (by_name["review"].description, by_name["review"].argument_hint) == ("Review", "<focus>")
    assert by_name["review"].content == "Focus on $1."
    assert by_name["plain"].description == "w" * 60 + "..."
    assert expand_prompt_template("/review  the API ", templates) == "Focus on the."
    assert expand_prompt_template("/unknown x", templates) == "/unknown x"


def test_a_duplicate_template_warns(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "t.md").write_text(folder)
    templates, diagnostics = load_prompt_templates(
        [(str(tmp_path / "a"), None), (str(tmp_path / "b"), None)], cwd=str(tmp_path)
    )
    assert [t.content for t in templates] == ["a"]
    assert [d.message for d in diagnostics] == ['name "/t" collision']


def test_project_templates_need_trust_and_explicit_paths_survive_no_prompt_templates(tmp_path):
    (tmp_path / "proj" / ".tau" / "prompts").mkdir(parents=True)
    (tmp_path / "proj" / ".tau" / "prompts" / "p.md").write_text("project")
    (tmp_path / "agent" / "prompts").mkdir(parents=True)
    (tmp_path / "agent" / "prompts" / "u.md").write_text("user")
    (tmp_path / "agent" / "prompts" / ".hidden.md").write_text("never")
    (tmp_path / "x.md").write_text("explicit")

    def names(**kwargs):
        options = ResourceOptions(cwd=str(tmp_path / "proj"), agent_dir=str(tmp_path / "agent"), **kwargs)
        return [t.name for t in load_resources(options).prompts]

    assert names(trusted=True) == ["p", "u"]
    assert names(trusted=False) == ["u"]
    assert names(trusted=True, no_prompt_templates=True, prompt_paths=["../x.md"]) == ["x"]
    missing = load_resources(
        ResourceOptions(
            cwd=str(tmp_path), agent_dir=str(tmp_path / "agent"), trusted=False, prompt_paths=["nope.md"]
        )
    )
    assert [(d.type, d.message) for d in missing.prompt_diagnostics] == [
        ("error", "Prompt template path does not exist")
    ]


class _InputHooks:
    """An ``input`` handler that sees the raw text and may transform it."""

    def __init__(self, transform=None):
        self.seen = []
        self.transform = transform

    def has_handlers(self, event_type):
        return event_type == "input"

    async def emit_input(self, event):
        self.seen.append(event["text"])
        return {"action": "transform", "text": self.transform} if self.transform else None

    def __getattr__(self, name):
        from tau.agent.session_hooks import NoHooks

        return getattr(NoHooks(), name)


def _session(tmp_path, hooks, text_of_template="T: $1"):
    from tau.agent.prompt_templates import PromptTemplate
    from tau.agent.session import AgentSession
    from tau.session.manager import SessionManager

    template = PromptTemplate("t", "d", text_of_template, str(tmp_path / "t.md"))
    scripted = FauxModel([{"text": "ok"}], record=None)
    session = AgentSession(
        SessionManager.in_memory(str(tmp_path)),
        model_registry=scripted.registry,
        model=scripted.model,
        hooks=hooks,
        resources=Resources(prompts=[template]),
    )
    return session


def _user_texts(session):
    return [m["content"][0]["text"] for m in session.messages if m.get("role") == "user"]


def test_input_handlers_see_the_raw_command_before_expansion(tmp_path):
    hooks = _InputHooks()
    session = _session(tmp_path, hooks)
    asyncio.run(session.prompt("/t hello"))
    assert hooks.seen == ["/t hello"] and _user_texts(session) == ["T: hello"]


def test_an_input_transform_is_expanded_afterwards(tmp_path):
    session = _session(tmp_path, _InputHooks(transform="/t rewritten"))
    asyncio.run(session.prompt("anything"))
    assert _user_texts(session) == ["T: rewritten"]


def test_extension_messages_are_never_expanded(tmp_path):
    session = _session(tmp_path, _InputHooks())
    asyncio.run(session.send_user_message("/t hello"))
    assert _user_texts(session) == ["/t hello"]
