"""Stale-context packing and batched swaps, through the extension's ``context`` handler and ``obs_recall``.

Requests go through the host's editable copies (``ContextCopies``), so message objects keep their
identity from one request to the next, as in a session.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from obspack_fakes import FakeCtx, FakeSessionManager, FakeTau, text_of

import tau.bundled.obspack as obspack
from tau.bundled.obspack.observation import arguments_observation, text_observation
from tau.common import jsjson
from tau.extension import ToolError
from tau.extension.context_copies import ContextCopies

PLACEHOLDER = "[tool result packed: "


def run(coro):
    return asyncio.run(coro)


class Session:
    """A conversation the test grows call by call, and its requests through the extension."""

    def __init__(self, tmp_path, settings: dict | None = None) -> None:
        self.tau = FakeTau({"sol": settings or {}})
        obspack.extension(self.tau)
        self.ctx = FakeCtx(FakeSessionManager(str(tmp_path), "session-a"), mode="json")
        run(self.tau.emit("session_start", self.ctx, reason="startup"))
        self.messages: list[dict] = [
            {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 0}
        ]
        self.copies = ContextCopies()
        self.calls = 0

    def call(self, name: str, arguments: dict, output: str, *, error: bool = False) -> dict:
        self.calls += 1
        call_id = f"c{self.calls}"
        call = {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
        self.messages.append(
            {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 0}
        )
        result = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": output}],
            "isError": error,
            "timestamp": 0,
        }
        self.messages.append(result)
        return result

    def request(self) -> list[dict]:
        given = self.copies.copy(self.messages)
        answers = run(self.tau.emit("context", self.ctx, messages=given))
        assert all(answer is None for answer in answers)
        return given

    def shown(self, original: dict, given: list[dict]) -> dict:
        return given[self.messages.index(original)]

    def recall_all(self, obs_id: str) -> bytes:
        data, offset = b"", 0
        while True:
            result = run(self.tau.call("obs_recall", {"id": obs_id, "offset": offset}, self.ctx))
            data += text_of(result.to_json()).split("\n", 2)[2].encode()
            if result.details["eof"]:
                return data
            offset = result.details["nextOffset"]


def log(name: str, lines: int = 80) -> str:
    return "\n".join(f"{name} line {n}: " + "x" * 40 for n in range(lines)) + "\nCommand exited with code 1"


def test_the_newest_output_of_a_command_or_path_is_never_packed_before_it_is_old(tmp_path):
    session = Session(tmp_path, {"swapBatching": False})
    first_run = session.call("bash", {"command": "pytest"}, log("run 1"), error=True)
    first_read = session.call("read", {"path": "a.py"}, log("a.py v1")[:-27])
    session.call(
        "edit",
        {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]},
        "Successfully replaced 1 block(s).",
    )
    second_run = session.call("bash", {"command": "pytest"}, log("run 2"), error=True)
    second_read = session.call("read", {"path": "a.py"}, log("a.py v2")[:-27])
    for _ in range(3):  # three more turns: fewer than staleAfterTurns (4) since the newest outputs
        given = session.request()
        assert not text_of(session.shown(second_run, given)).startswith(PLACEHOLDER)
        assert not text_of(session.shown(second_read, given)).startswith(PLACEHOLDER)
        # what a later call of the same command or path superseded goes at once, whatever its age
        assert text_of(session.shown(first_run, given)).startswith(f"{PLACEHOLDER}superseded")
        assert text_of(session.shown(first_read, given)).startswith(f"{PLACEHOLDER}superseded")
        session.call("bash", {"command": f"ls dir{session.calls}"}, "a\nb")
    packed = text_of(session.shown(first_run, session.request()))
    obs_id = text_observation(first_run).id
    assert packed.split("\n") == [
        f'[tool result packed: superseded by a later call on the same command or path; obs_recall {{"id":"{obs_id}"}} returns it]',
        f"bash · {len(log('run 1'))} bytes · 81 lines · Command exited with code 1",
        "first: run 1 line 0: " + "x" * 40,
        "last: Command exited with code 1",
    ]


def test_every_packed_kind_is_recalled_byte_for_byte(tmp_path):
    # no economic floor: every kind is packed, small edit arguments included
    session = Session(tmp_path, {"swapBatching": False, "staleRefetchChance": 0})
    large = session.call("bash", {"command": "cat big.log"}, "big line\n" * 2000)
    failing = session.call("bash", {"command": "make"}, log("build 1"), error=True)
    read = session.call("read", {"path": "b.py"}, log("b.py")[:-27])
    old = session.call("bash", {"command": "git log"}, log("commit")[:-27])
    edit_args = {"path": "b.py", "edits": [{"oldText": "x" * 300, "newText": "y" * 300}]}
    session.call("edit", edit_args, "Successfully replaced 1 block(s) in b.py.")
    session.call("bash", {"command": "make"}, log("build 2"), error=True)
    session.call("read", {"path": "b.py"}, "short")
    for n in range(7):
        session.call("bash", {"command": f"echo {n}"}, str(n))
    given = session.request()
    expected = {}
    for message in (large, failing, read, old):
        shown = text_of(session.shown(message, given))
        assert shown.startswith(("[large tool result replaced", PLACEHOLDER)), shown[:80]
        observation = text_observation(message)
        expected[observation.id] = observation.data
        assert observation.id in shown
    edit_message = session.messages[session.messages.index(read) + 3]
    shown_call = session.shown(edit_message, given)["content"][0]
    assert shown_call["arguments"]["path"] == "b.py" and "packed" in shown_call["arguments"]
    args_observation = arguments_observation(edit_message["content"][0])
    assert args_observation.id in shown_call["arguments"]["packed"]
    expected[args_observation.id] = jsjson.dumps(edit_args)
    for obs_id, data in expected.items():
        assert session.recall_all(obs_id) == data


def test_a_changed_object_is_refused(tmp_path):
    session = Session(tmp_path, {"swapBatching": False})
    message = session.call("bash", {"command": "cat big.log"}, "big line\n" * 2000)
    for _ in range(3):
        session.request()
        session.call("bash", {"command": f"echo {session.calls}"}, "ok")
    obs_id = text_observation(message).id
    content_hash = text_observation(message).content_hash
    path = tmp_path / "sol" / "session-a" / "observation-pack" / "objects" / f"{content_hash}.txt"
    data = bytearray(path.read_bytes())
    data[5] ^= 1  # same size, one bit changed
    path.write_bytes(bytes(data))
    with pytest.raises(ToolError, match=f"Observation {obs_id} failed its integrity check"):
        run(session.tau.call("obs_recall", {"id": obs_id}, session.ctx))
    # a fresh extension (no remembered hash) checks against the result on the branch
    again = Session(tmp_path)
    again.ctx.session_manager.entries = [
        {"type": "message", "id": "m1", "parentId": None, "message": message}
    ]
    again.ctx.session_manager.leaf = "m1"
    with pytest.raises(ToolError, match="failed its integrity check"):
        run(again.tau.call("obs_recall", {"id": obs_id}, again.ctx))


def test_due_swaps_wait_and_are_applied_together_in_one_request(tmp_path):
    session = Session(tmp_path)  # batching on
    results, history, due = [], [], []
    for n in range(40):
        results.append(session.call("bash", {"command": f"cat file{n}"}, log(f"file {n}")[:-27]))
        given = session.request()  # one request per call, as a run makes them: the cache stays warm
        history.append(sum(text_of(session.shown(m, given)).startswith(PLACEHOLDER) for m in results))
        due.append(max(0, n + 1 - 4))  # results whose call is four or more turns old
    first = next(i for i, count in enumerate(history) if count)
    # Results were old from the 5th request on, but waited for a batch of swaps that pays...
    assert first > 7 and due[first - 1] >= 2 and history[first - 1] == 0
    # ...and then went together, in one request; a swap once sent stays sent.
    assert history[first] == due[first] >= 3
    assert all(later >= history[first] for later in history[first:])


def test_swaps_go_one_by_one_without_batching(tmp_path):
    session = Session(tmp_path, {"swapBatching": False})
    results = [session.call("bash", {"command": f"cat file{n}"}, log(f"file {n}")[:-27]) for n in range(3)]
    counts = []
    for n in range(8):
        given = session.request()
        counts.append(sum(text_of(session.shown(m, given)).startswith(PLACEHOLDER) for m in results))
        session.call("bash", {"command": f"cat more{n}"}, "x")
    assert counts == [0, 0, 1, 2, 3, 3, 3, 3]


def test_stale_packing_can_be_switched_off(tmp_path):
    session = Session(tmp_path, {"stalePacking": False})
    first = session.call("bash", {"command": "pytest"}, log("run 1"), error=True)
    session.call("bash", {"command": "pytest"}, log("run 2"), error=True)
    for n in range(10):
        session.call("bash", {"command": f"echo {n}"}, "x")
    assert text_of(session.shown(first, session.request())) == log("run 1")
    ledger = tmp_path / "sol" / "session-a" / "observation-pack" / "ledger.jsonl"
    assert not ledger.exists() or all(
        json.loads(line)["event"] != "placeholder" for line in ledger.read_text().splitlines()
    )


def test_archive_work_per_request_is_bounded(tmp_path):
    """A resumed session with a long history archives it over several requests, not all at once."""
    session = Session(tmp_path)
    for n in range(40):
        session.call("bash", {"command": f"cat big{n}.log"}, f"big {n}\n" * 2000)
    objects = tmp_path / "sol" / "session-a" / "observation-pack" / "objects"
    session.request()
    assert len(list(objects.iterdir())) == 32
    given = session.request()
    assert len(list(objects.iterdir())) == 40
    results = given[2::2]
    assert all(text_of(m).startswith(("[large tool result replaced", PLACEHOLDER)) for m in results[:38])


def test_identical_outputs_are_one_archive_object_and_every_recall_is_exact(tmp_path):
    """Issue 33, item 8: byte-identical results (a command run again and again) were one archive
    object each; objects are addressed by their content, and every placeholder's id still recalls
    the exact bytes."""
    session = Session(tmp_path, {"swapBatching": False})
    output = "\n".join(f"PASSED tests/test_{n:03d}.py::test_case" for n in range(120)) + "\n"
    assert 4_000 < len(output.encode()) < 10 * 1024
    results = []
    for _ in range(30):
        results.append(session.call("bash", {"command": "make test"}, output))
        session.request()
    given = session.request()
    packed = [text_of(session.shown(m, given)) for m in results[:-1]]
    assert all(text.startswith(PLACEHOLDER) for text in packed)  # superseded by the next run
    ids = {text_observation(m).id for m in results[:-1]}
    assert len(ids) == 29  # one observation per result (tool call ids differ)
    objects = tmp_path / "sol" / "session-a" / "observation-pack" / "objects"
    assert [p.name for p in objects.iterdir()] == [f"{text_observation(results[0]).content_hash}.txt"]
    for obs_id in ids:
        assert session.recall_all(obs_id) == output.encode()
