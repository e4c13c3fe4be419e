"""RPC ``set_steering_mode``, ``set_follow_up_mode``, ``set_auto_compaction``, ``set_auto_retry`` are
saved to the user ``settings.json``, as pi saves them."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from faux_ext import script as faux_ext_script
from rpc_client import RpcClient


def scenario(test):
    def wrapper(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)

        async def main():
            async with await RpcClient.start(script=faux_ext_script()) as client:
                await test(client)

        asyncio.run(main())

    wrapper.__name__ = test.__name__
    return wrapper


@scenario
async def test_queue_modes_and_toggles_are_saved_to_the_user_settings(client):
    await client.request(type="set_steering_mode", mode="all")
    await client.request(type="set_follow_up_mode", mode="all")
    await client.request(type="set_auto_compaction", enabled=False)
    await client.request(type="set_auto_retry", enabled=False)
    user = Path(os.environ["TAU_AGENT_DIR"]) / "settings.json"
    saved = json.loads(user.read_text())
    assert (saved["steeringMode"], saved["followUpMode"]) == ("all", "all")
    assert saved["compaction"]["enabled"] is False and saved["retry"]["enabled"] is False
    state = (await client.request(type="get_state"))["data"]
    assert (state["steeringMode"], state["autoCompactionEnabled"]) == ("all", False)
