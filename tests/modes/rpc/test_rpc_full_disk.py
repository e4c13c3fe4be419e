"""RPC mode on a session file that cannot be written (issue 16): it stays up, answers the failed
prompt with an error, refuses new prompts until the file can be written, then carries on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from faux_ext import script as faux_ext_script
from rpc_client import RpcClient

from full_disk import FullDisk


def test_a_full_disk_fails_the_prompt_keeps_the_mode_up_and_refuses_prompts_until_there_is_room(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    disk = FullDisk(monkeypatch, 2)  # the tool call cannot be saved

    async def main() -> None:
        async with await RpcClient.start(script=faux_ext_script()) as client:
            client.send(id="p", type="prompt", message="bash: echo hi")
            started = await client.response("p")
            assert started["data"] == {"disposition": "started"}
            failed = await client.wait_for(lambda r: r.get("id") == "p" and r.get("success") is False)
            assert failed["command"] == "prompt"
            path = client.runtime.session.session_file
            assert failed["error"].startswith(f"cannot write session file {path!r}: No space left on device.")
            assert "The session is no longer being saved" in failed["error"]
            closing = [r["type"] for r in client.records if r["type"] in ("turn_end", "agent_end")]
            assert closing[-2:] == ["turn_end", "agent_end"]

            state = await client.request(type="get_state")
            assert state["success"] is True and state["data"]["isStreaming"] is False
            start = len(client.records)
            refused = await client.request(id="r", type="prompt", message="again")
            assert refused["success"] is False
            assert refused["error"].startswith(
                f"cannot run the prompt: session file {path!r} still cannot be"
            )
            assert "agent_start" not in client.types(start)

            disk.full = False
            start = len(client.records)
            client.send(id="ok", type="prompt", message="again")
            await client.settled(start)
            assert (await client.response("ok"))["success"] is True
            kept = client.runtime.session.session_manager.get_entries()
            lines = Path(path).read_text().splitlines()[1:]
            assert [json.loads(line) for line in lines] == kept

    asyncio.run(main())
