"""The render model, fed by a real session's event stream (faux provider), without a terminal."""

from __future__ import annotations

import asyncio
import re

from interactive_support import controlled, faux_session, screen_text

from tau.modes.interactive.model import AssistantBlock, ChatController, NoticeBlock, ToolBlock, UserBlock
from tau.modes.interactive.render import BlockRenderer

SGR_ONLY = re.compile(r"\x1b\[[0-9;]*m")


def test_streamed_answer_grows_then_commits(tmp_path):
    answer = "Hello there, this answer is long enough to stream in several deltas."
    session = faux_session(tmp_path, [{"text": answer}])
    controller = controlled(session)
    seen: list[str] = []
    session.subscribe(
        lambda e: seen.append(controller.blocks[-1].text) if e["type"] == "message_update" else None
    )
    asyncio.run(session.prompt("hi"))

    assert len(seen) > 2 and seen[-1] == answer
    assert all(answer.startswith(text) for text in seen)
    assert [type(b) for b in controller.take_committed()] == [UserBlock, AssistantBlock]
    assert controller.live_blocks() == []
    assert "Hello there" in screen_text(controller)


def test_tool_row_with_result_then_answer(tmp_path):
    session = faux_session(tmp_path, [{"bash": "echo hi"}, {"text": "done"}])
    controller = controlled(session)
    asyncio.run(session.prompt("run"))

    tool = next(b for b in controller.blocks if isinstance(b, ToolBlock))
    assert (tool.name, tool.status, tool.output.strip()) == ("bash", "done", "hi")
    text = screen_text(controller)
    assert "✓ $ echo hi" in text and "  hi" in text
    assert text.index("$ echo hi") < text.index("done")
    assert controller.footer.working is False


def test_unfinished_blocks_stay_live_in_order(tmp_path):
    controller = ChatController()
    controller.handle_event({"type": "message_start", "message": {"role": "user", "content": "go"}})
    controller.handle_event(
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {}}
    )
    controller.notice("later notice")
    assert [type(b) for b in controller.take_committed()] == [UserBlock]
    assert [type(b) for b in controller.live_blocks()] == [ToolBlock, NoticeBlock]
    controller.handle_event(
        {
            "type": "tool_execution_end",
            "toolCallId": "c1",
            "toolName": "bash",
            "result": {"content": []},
            "isError": False,
        }
    )
    assert [type(b) for b in controller.take_committed()] == [ToolBlock, NoticeBlock]


def test_escape_sequences_in_tool_output_never_reach_the_terminal(tmp_path):
    nasty = r"printf 'a\033[2J\033]0;pwned\007b\033[31mred\r\n\342\200\256evil'"
    session = faux_session(tmp_path, [{"bash": nasty}, {"text": "\x1b[2Jdone \x1b]8;;http://x\x1b\\link"}])
    controller = controlled(session)
    asyncio.run(session.prompt("run"))

    tool = next(b for b in controller.blocks if isinstance(b, ToolBlock))
    assert tool.output.strip() == "abred\nevil"
    rendered = BlockRenderer().render(controller.blocks, 80, color=True)
    assert SGR_ONLY.sub("", rendered).count("\x1b") == 0
    assert "\u202e" not in rendered and "\x07" not in rendered
    # the session file keeps what the tool and the model really produced
    assert "\\u001b[2J" in (tmp_path / "sessions").glob("*.jsonl").__next__().read_text()


def test_resumed_session_shows_the_same_blocks_as_the_live_run(tmp_path):
    session = faux_session(tmp_path, [{"bash": "echo one"}, {"text": "**two**"}])
    live = controlled(session)
    asyncio.run(session.prompt("go"))

    loaded = ChatController()
    loaded.load_messages(session.messages)
    assert screen_text(loaded) == screen_text(live)


def test_abort_of_a_running_bash_call(tmp_path):
    session = faux_session(tmp_path, [{"bash": "sleep 30"}, {"text": "never"}])
    controller = controlled(session)

    async def scenario() -> float:
        run = asyncio.ensure_future(session.prompt("sleep"))
        while not any(isinstance(b, ToolBlock) for b in controller.blocks):
            await asyncio.sleep(0.01)
        assert controller.footer.working and controller.live_blocks()
        loop = asyncio.get_running_loop()
        started = loop.time()
        await session.abort()
        await run
        return loop.time() - started

    elapsed = asyncio.run(scenario())
    assert elapsed < 10
    tool = next(b for b in controller.blocks if isinstance(b, ToolBlock))
    answer = [b for b in controller.blocks if isinstance(b, AssistantBlock)][-1]
    assert tool.status == "error" and answer.stop_reason == "aborted"
    assert "Aborted: This operation was aborted" in screen_text(controller)
    assert not controller.footer.working


def test_queue_updates_reach_the_footer():
    controller = ChatController()
    controller.handle_event({"type": "queue_update", "steering": ["a\x1b[2J"], "followUp": ["b"]})
    assert (controller.footer.steering, controller.footer.follow_up) == (["a"], ["b"])


def test_long_tool_output_is_collapsed_until_expanded():
    controller = ChatController()
    controller.handle_event(
        {"type": "tool_execution_start", "toolCallId": "c", "toolName": "read", "args": {"path": "f"}}
    )
    lines = "\n".join(f"line {i}" for i in range(30))
    controller.handle_event(
        {
            "type": "tool_execution_end",
            "toolCallId": "c",
            "toolName": "read",
            "result": {"content": [{"type": "text", "text": lines}]},
            "isError": False,
        }
    )
    collapsed = screen_text(controller)
    assert "line 7" in collapsed and "line 8" not in collapsed and "22 more lines" in collapsed
    controller.toggle_tools_expanded()
    assert "line 29" in screen_text(controller)


def test_a_long_streaming_answer_is_previewed_by_its_tail():
    from tau.modes.interactive.render import LIVE_TAIL_CHARS, live_tail

    text = "intro\n\n```python\n" + "x = 1\n\n" * 2000 + "```\n\nthe end"
    block = AssistantBlock(text=text)
    tail = live_tail(block)
    assert len(tail.text) <= LIVE_TAIL_CHARS + 4 and tail.text.endswith("the end")
    assert tail.text.startswith("```\n")  # still a code block, as in the full answer
    assert block.text == text and live_tail(AssistantBlock(text="short")).text == "short"


def test_thinking_streams_above_the_answer(tmp_path):
    session = faux_session(tmp_path, [{"thinking": "let me think about it", "text": "the answer"}])
    controller = controlled(session)
    asyncio.run(session.prompt("q"))
    block = next(b for b in controller.blocks if isinstance(b, AssistantBlock))
    assert (block.thinking, block.text) == ("let me think about it", "the answer")
    text = screen_text(controller)
    assert text.index("let me think") < text.index("the answer")
