"""Distinctive tokens: what a tool call can carry over from earlier output (issue 25)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.bundled.sol_common.evidence import distinctive_tokens, message_evidence_text, tool_call_tokens


def test_paths_identifiers_and_line_numbers_are_distinctive():
    tokens = distinctive_tokens("sed -n 412,437p src/calc.py && grep -n parse_header lib/util.js")
    assert tokens == {"412", "437", "src/calc.py", "lib/util.js", "parse_header"}


def test_common_words_and_small_numbers_are_not():
    assert distinctive_tokens("cat the file and run it 2 or 42 times, then echo done") == set()


def test_camel_case_digits_commits_and_file_names():
    tokens = distinctive_tokens("parseHeader utf8 a1b2c3d4 calc.py 3.14159 package-lock.json index.d.ts")
    assert tokens == {"parseHeader", "utf8", "a1b2c3d4", "calc.py", "3.14159", "package-lock.json", "index.d.ts"}


# Each rule below removed a kind of false miss counted in the real pi sessions of the fixtures
# (docs/savings.md, "Evidence misses"): a model writes these from its vocabulary or chooses them.


def test_plain_words_are_not_distinctive_however_long():
    """Counted as misses before: ``Remove unnecessary …`` in a commit message, ``undefined`` and
    ``instanceof`` in an edit, ``automatically`` in a README."""
    assert distinctive_tokens("unnecessary undefined instanceof automatically Documentation") == set()


def test_dotted_names_that_are_no_file_names_are_code_and_keep_their_identifiers():
    """``console.error``, ``Date.now``, ``chalk.yellow`` were file names by the old rule, and its
    8-letter extension cut ``this.sessionManager.shouldInitialize`` into ``anager.shouldIn``."""
    assert distinctive_tokens("console.error Date.now chalk.yellow m.id error.message") == set()
    tokens = distinctive_tokens("this.sessionManager.shouldInitialize assistantMsg.stopReason")
    assert tokens == {"sessionManager", "shouldInitialize", "assistantMsg", "stopReason"}


def test_round_numbers_are_chosen_not_read():
    """``grep -A 100 … | head -120`` and read limits of 200 are the model's choice, not evidence;
    a line number that is not round stays distinctive."""
    assert distinctive_tokens("grep -A 100 x | head -120; timeout 500; limit 4000") == set()
    assert distinctive_tokens("offset 412 limit 1204 port 8080") == {"412", "1204", "8080"}


def test_two_words_joined_by_a_slash_are_prose_but_rooted_or_dotted_ones_are_paths():
    """``Create/edit`` and ``error/aborted`` in a model's prose counted as paths."""
    assert distinctive_tokens("Create/edit error/aborted and/or") == set()
    assert distinctive_tokens("tool_use/tool_result") == {"tool_use", "tool_result"}
    tokens = distinctive_tokens("/usr/lib src/tau/ a/b.py src/tau/cli")
    assert tokens == {"usr/lib", "src/tau/", "a/b.py", "src/tau/cli"}


def test_tool_call_tokens_read_every_string_argument():
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "looking at parse_header"},
            {
                "type": "toolCall",
                "id": "c1",
                "name": "edit",
                "arguments": {"path": "src/calc.py", "edits": [{"oldText": "return 1234", "newText": "x"}]},
            },
        ],
    }
    assert {"src/calc.py", "1234"} <= tool_call_tokens(message)
    assert "parse_header" not in tool_call_tokens(message)
    assert "parse_header" in distinctive_tokens(message_evidence_text(message))


def _reference_tokens(text: str) -> set[str]:
    """The rules as first written (issue 25): every word of ``text`` read with the ``regex`` engine."""
    import regex

    from tau.bundled.sol_common import evidence

    word = regex.compile(evidence._WORD.pattern)
    path, ident = regex.compile(evidence._PATH.pattern), regex.compile(evidence._IDENT.pattern)
    number, hexa = regex.compile(evidence._NUMBER.pattern), regex.compile(evidence._HEX.pattern)
    file_name = regex.compile(evidence._FILE_NAME.pattern)
    found: set[str] = set()
    for chunk in word.findall(text):
        for match in path.finditer(chunk):
            if not evidence._prose_pair(match.group().rstrip("."), chunk, match.start()):
                found.add(match.group().rstrip("."))
        named = file_name.fullmatch(chunk.rstrip("."))
        if named is not None and named.group(1).lower() in evidence.FILE_EXTENSIONS:
            found.add(chunk.rstrip("."))
        found.update(w for w in ident.findall(chunk) if evidence._is_distinctive_identifier(w))
        found.update(n for n in number.findall(chunk) if evidence._is_distinctive_number(n))
        found.update(h for h in hexa.findall(chunk) if any(c.isdigit() for c in h) and any(c.isalpha() for c in h))
    found.discard("")
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"aZ_09./~- \n:é7fF3xé/", ".py", ".ts", "py", "100"]), max_size=40).map("".join))
def test_the_faster_reading_finds_exactly_the_tokens_of_the_rules(text):
    """Reading each distinct word once, with the standard library's engine, changes no token."""
    assert distinctive_tokens(text) == _reference_tokens(text)


def test_the_faster_reading_agrees_on_a_real_session(pi_fixtures):
    text = (pi_fixtures / "real" / "large-session.v3.jsonl").read_text(encoding="utf-8")[:200_000]
    assert distinctive_tokens(text) == _reference_tokens(text)
