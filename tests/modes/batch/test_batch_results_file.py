"""``results.jsonl`` reads back every line it wrote: a result whose text holds U+2028 or U+0085 (which
JSON leaves unescaped) is one line, so a rerun skips the task instead of running it again."""

from __future__ import annotations

from tau.modes.batch.results import ResultStore


def test_a_result_with_unicode_line_separators_reads_back_as_one_line(tmp_path, capsys):
    store = ResultStore(tmp_path, ["t1", "t2"])
    store.record({"id": "t1", "status": "ok", "final_text": "first\u2028second\u0085third\u2029end"})
    store.record({"id": "t2", "status": "error", "exit_reason": "boom"})
    again = ResultStore(tmp_path, ["t1", "t2"])
    assert again.finished("t1") and not again.finished("t2")
    assert again.results["t1"]["final_text"] == "first\u2028second\u0085third\u2029end"
    assert capsys.readouterr().err == ""  # no line dropped as "not JSON"
