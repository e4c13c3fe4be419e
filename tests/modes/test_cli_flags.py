"""Issue 32: tau's command line is parsed as pi 1.6 parses its own (``-nbt`` is one option, not
``-n bt``), and bad options stop the run in one line before any request."""

from __future__ import annotations

import pytest
from cli_run import faux, messages, records, session_files, tau

from tau.modes.cli_args import parse_args


def test_pi_short_options_are_words_of_their_own():
    args = parse_args(["-nbt", "-xt", "bash,write", "-nc", "-ne", "-na", "hello"])
    assert args.no_builtin_tools and args.no_context_files and args.no_extensions
    assert args.name is None  # not `-n bt`
    assert args.exclude_tools == ["bash", "write"]
    assert args.approve is False
    assert args.messages == ["hello"]
    assert parse_args(["-n", "bt"]).name == "bt"
    assert parse_args(["-nt"]).no_tools and not parse_args(["-nt"]).no_builtin_tools


def test_values_options_files_and_the_end_of_options():
    args = parse_args(["--tools", "-edit", "-p", "first", "@notes.md", "second", "--", "-dash", "@x.png"])
    assert args.tools == "-edit"
    assert args.print and args.messages == ["first", "second", "-dash"]
    assert args.file_args == ["notes.md", "x.png"]
    # -p does not take an option or a file as its prompt
    args = parse_args(["-p", "@a.txt", "-c"])
    assert args.print and args.continue_ and args.file_args == ["a.txt"] and args.messages == []
    args = parse_args(
        ["--append-system-prompt", "one", "--append-system-prompt", "two", "--list-models", "son"]
    )
    assert args.append_system_prompt == ["one", "two"]
    assert args.list_models == "son"
    assert parse_args(["--list-models", "-p"]).list_models == ""


def test_unknown_options_and_bad_values_are_diagnostics():
    args = parse_args(["-x", "--plan", "fast", "--dry", "-p", "--level=3", "hi"])
    assert args.diagnostics == [("error", "Unknown option: -x")]
    assert args.unknown_flags == {"plan": "fast", "dry": True, "level": "3"}
    assert args.messages == ["hi"]
    assert parse_args(["--mode", "xml"]).diagnostics == [
        ("error", 'Invalid mode "xml". Valid values: text, json, rpc')
    ]
    assert parse_args(["--mode", "-p"]).diagnostics == [("error", "--mode requires text, json, or rpc")]
    assert parse_args(["--name"]).diagnostics == [("error", "--name requires a value")]
    assert parse_args(["--thinking", "bogus"]).diagnostics == [
        ("error", 'Invalid thinking level "bogus". Valid values: off, minimal, low, medium, high, xhigh, max')
    ]


def test_nbt_is_no_builtin_tools_and_leaves_the_session_unnamed(project, tmp_path, isolated_agent_dir):
    done = tau(["-nbt", "-p", *faux(tmp_path, [{"bash": "echo hi"}, {"text": "done"}]), "go"], project)
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    assert not any(r.get("type") == "session_info" for r in records(path))  # was named "bt"
    result = next(m for m in messages(path) if m["role"] == "toolResult")
    assert result["isError"] and "bash" in result["content"][0]["text"]
    system = next(m for m in messages(path) if m["role"] == "system")
    declared = {tool["name"] for tool in system.get("toolsAdded", [])}
    assert not declared & {"read", "bash", "edit", "write"}
    assert "todo" in declared  # extension tools stay


def test_exclude_tools_disables_after_everything_else(project, tmp_path, isolated_agent_dir):
    done = tau(["-p", "-xt", "ba*", *faux(tmp_path, [{"bash": "echo hi"}, {"text": "done"}]), "go"], project)
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    system = next(m for m in messages(path) if m["role"] == "system")
    declared = {tool["name"] for tool in system.get("toolsAdded", [])}
    assert "bash" not in declared and {"read", "edit", "write"} <= declared


def test_an_unknown_option_is_one_line_and_a_hint(project, tmp_path, isolated_agent_dir):
    for option in ("-x", "--bogus"):
        done = tau(["-p", option, *faux(tmp_path, [{"text": "answered"}]), "hi"], project)
        assert done.returncode == 1, done
        assert done.stderr.splitlines() == [
            f"Error: Unknown option: {option}",
            "tau --help lists the options",
        ]
        assert done.stdout == ""
    assert session_files(isolated_agent_dir) == []


def test_an_unknown_option_comes_before_the_missing_prompt(project, tmp_path, isolated_agent_dir):
    """``--bogus hi`` makes "hi" the option's value (pi's parser), so no prompt is left: pi 1.6 says
    ``Error: Unknown option: --bogus`` (exit 1), and so does tau, not that the prompt is missing.
    Real pi 1.6 with standard input not a terminal: ``pi --bogus --other`` → ``Error: Unknown options:
    --bogus, --other``, exit 1."""
    for args, line in (
        (["--bogus", "hi"], "Error: Unknown option: --bogus"),
        (["--bogus", "--other"], "Error: Unknown options: --bogus, --other"),
    ):
        done = tau([*args, *faux(tmp_path, [{"text": "answered"}])], project)
        assert (done.returncode, done.stdout) == (1, ""), done
        assert done.stderr.splitlines() == [line, "tau --help lists the options"]
    assert session_files(isolated_agent_dir) == []


def test_an_extension_flag_is_not_unknown(project, tmp_path, isolated_agent_dir):
    extension = tmp_path / "plan.py"
    extension.write_text(
        "def extension(tau):\n"
        "    tau.register_flag('plan', type='boolean')\n"
        "    tau.register_flag('level', type='string')\n"
        "    async def start(event, ctx):\n"
        "        print('plan', tau.get_flag('plan'), 'level', tau.get_flag('level'), flush=True)\n"
        "    tau.on('session_start', start)\n"
    )
    done = tau(
        [
            "-p",
            "-ne",
            "-e",
            str(extension),
            "--plan",
            "--level",
            "high",
            *faux(tmp_path, [{"text": "ok"}]),
            "hi",
        ],
        project,
    )
    assert done.returncode == 0, done
    assert done.stdout.splitlines() == ["plan True level high", "ok"]
    done = tau(
        ["-p", "-ne", "-e", str(extension), "--level", *faux(tmp_path, [{"text": "ok"}]), "hi"], project
    )
    assert done.returncode == 1 and 'Extension flag "--level" requires a value' in done.stderr, done


def test_help_lists_the_flags_of_the_extensions_it_would_load(project, tmp_path, isolated_agent_dir):
    """pi 1.6 loads its extensions for ``--help`` and lists their flags; a broken one is reported on
    stderr and the help is printed all the same. Nothing is written, no session starts."""
    extension = tmp_path / "plan.py"
    extension.write_text(
        "def extension(tau):\n"
        "    tau.register_flag('plan', description='Start in plan mode')\n"
        "    tau.register_flag('level', type='string')\n"
        "    tau.on('session_start', lambda event, ctx: print('started', flush=True))\n"
    )
    user_extensions = isolated_agent_dir / "extensions"
    user_extensions.mkdir(parents=True)
    (user_extensions / "mine.py").write_text(
        "def extension(tau):\n    tau.register_flag('mine', description='From the user extensions dir')\n"
    )
    done = tau(["-e", str(extension), "--help"], project)
    assert done.returncode == 0 and done.stderr == "", done
    listed = done.stdout.split("\nExtension flags:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in listed] == ["--plan", "--level", "--mine"]
    assert listed[0].split(None, 1)[1] == "Start in plan mode"
    assert listed[1].split(None, 2)[1:] == ["VALUE", f"registered by {extension}"]
    assert "started" not in done.stdout and session_files(isolated_agent_dir) == []

    done = tau(["-ne", "-e", "missing.py", "--help"], project)
    assert done.returncode == 0 and done.stdout.startswith("tau: a coding agent"), done
    assert f"Extension path does not exist: {project / 'missing.py'}" in done.stderr
    assert "Extension flags:" not in done.stdout


def test_bad_thinking_level_stops_before_any_request(project, tmp_path, isolated_agent_dir):
    done = tau(["-p", "--thinking", "bogus", *faux(tmp_path, [{"text": "answered"}]), "hi"], project)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        'Error: Invalid thinking level "bogus". Valid values: off, minimal, low, medium, high, xhigh, max'
    ]
    assert done.stdout == "" and session_files(isolated_agent_dir) == []


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"], ["--mode", "rpc"]])
def test_a_missing_extension_file_fails_with_its_path(project, tmp_path, isolated_agent_dir, mode):
    done = tau(
        [
            *mode,
            "-e",
            "missing.py",
            *faux(tmp_path, [{"text": "answered"}]),
            *(["hi"] if "rpc" not in mode else []),
        ],
        project,
    )
    assert done.returncode == 1, done
    missing = project / "missing.py"
    assert f"Extension path does not exist: {missing}" in done.stderr
    assert done.stderr.splitlines()[-1] == 'Hint: start without extensions using "tau -ne".'
    assert done.stdout == ""
    assert session_files(isolated_agent_dir) == []


def test_theme_flags_say_nothing_outside_the_terminal_as_in_pi(project, tmp_path):
    # Real pi 1.6: `pi -p --theme t.json --no-themes --use-theme nope hi` answers and prints nothing
    # else (themes are the terminal's; a missing file or name is reported there).
    args = ["-p", "--theme", "t.json", "--no-themes", "--use-theme", "nope", "--tui-mode", "regular"]
    done = tau([*args, *faux(tmp_path, [{"text": "answered"}]), "hi"], project)
    assert done.returncode == 0, done
    assert done.stdout == "answered\n"
    assert done.stderr == ""


def test_skill_and_template_flags_reach_the_run(project, tmp_path):
    (project / "t.md").write_text("Template says $1")
    done = tau(
        [
            "-p",
            "--skill",
            "s.md",
            "-ns",
            "-np",
            "--prompt-template",
            "t.md",
            *faux(tmp_path, [{"text": "ok"}]),
            "/t hi",
        ],
        project,
    )
    assert done.returncode == 0, done
    assert done.stderr.splitlines() == [f"Warning: Skill {project / 's.md'}: skill path does not exist"]


def test_append_system_prompt_repeats(project, tmp_path, isolated_agent_dir):
    (project / "extra.md").write_text("From a file.")
    done = tau(
        [
            "-p",
            "--append-system-prompt",
            "First.",
            "--append-system-prompt",
            "extra.md",
            *faux(tmp_path, [{"text": "ok"}]),
            "hi",
        ],
        project,
    )
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    system = next(m for m in messages(path) if m["role"] == "system")
    assert system["sections"]["addendum"] == "<addendum>\nFirst.\n\nFrom a file.\n</addendum>"
