"""Distinctive tokens: what a tool call can carry over from earlier output (issue 25)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.bundled.sol_common.evidence import distinctive_tokens, message_evidence_text, tool_call_tokens


def test_paths_identifiers_and_line_numbers_are_distinctive():
    tokens = distinctive_tokens("sed -n 412,430p src/calc.py && grep -n parse_header lib/util.js")
    assert tokens == {"412", "430", "src/calc.py", "lib/util.js", "parse_header"}


def test_common_words_and_small_numbers_are_not():
    assert distinctive_tokens("cat the file and run it 2 or 42 times, then echo done") == set()


def test_camel_case_digits_long_words_commits_and_file_names():
    tokens = distinctive_tokens("parseHeader utf8 tokenizer a1b2c3d4 calc.py 3.14159")
    assert {"parseHeader", "utf8", "tokenizer", "a1b2c3d4", "calc.py", "3.14159"} <= tokens


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
    found: set[str] = set()
    for chunk in word.findall(text):
        found.update(p.rstrip(".") for p in path.findall(chunk))
        found.update(w for w in ident.findall(chunk) if evidence._is_distinctive_identifier(w))
        found.update(n for n in number.findall(chunk) if evidence._is_distinctive_number(n))
        found.update(h for h in hexa.findall(chunk) if any(c.isdigit() for c in h) and any(c.isalpha() for c in h))
    found.discard("")
    return found


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ_09./~- \n:é7fF3xé/")), max_size=80))
def test_the_faster_reading_finds_exactly_the_tokens_of_the_rules(text):
    """Reading each distinct word once, with the standard library's engine, changes no token."""
    assert distinctive_tokens(text) == _reference_tokens(text)


def test_the_faster_reading_agrees_on_a_real_session(pi_fixtures):
    text = (pi_fixtures / "real" / "large-session.v3.jsonl").read_text(encoding="utf-8")[:200_000]
    assert distinctive_tokens(text) == _reference_tokens(text)
