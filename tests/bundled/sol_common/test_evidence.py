"""Distinctive tokens: what a tool call can carry over from earlier output (issue 25)."""

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
