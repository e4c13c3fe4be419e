"""The extension UI sub-protocol (pi-host §8.4): ``extension_ui_request`` out, ``extension_ui_response`` in."""

from __future__ import annotations

import asyncio

from faux_ext import script as faux_ext_script
from rpc_client import RpcClient

from tau.llm.stream import AbortSignal
from tau.modes.rpc.ui import RpcUI

ANSWERS: dict[str, object] = {}


def dialogs_extension(tau):
    async def ask(args, ctx):
        ANSWERS["select"] = await ctx.ui.select("Pick", ["a", "b"])
        ANSWERS["confirm"] = await ctx.ui.confirm("Sure?", "Really do it")
        ANSWERS["input"] = await ctx.ui.input("Name", "your name")
        ANSWERS["editor"] = await ctx.ui.editor("Edit", "draft")
        ANSWERS["custom"] = await ctx.ui.custom(object())
        ANSWERS["has_ui"] = ctx.has_ui

    async def quick(args, ctx):
        ANSWERS["timed"] = await ctx.ui.select("Fast", ["x"], timeout=0.05)

    def tell(args, ctx):
        ctx.ui.notify("hello there", "warning")
        ctx.ui.notify("plain")
        ctx.ui.set_status("build", "running")
        ctx.ui.set_status("build")
        ctx.ui.set_widget("w", ["line 1", "line 2"], placement="belowEditor")
        ctx.ui.set_widget("w", lambda *a: None)  # a component factory: terminal only, not sent
        ctx.ui.set_widget("w", None)
        ctx.ui.set_title("tau rpc")
        ctx.ui.set_editor_text("prefilled")
        ctx.ui.paste_to_editor("pasted")

    def fail(args, ctx):
        raise RuntimeError("command went wrong")

    tau.register_command("ask", "Ask the user things", ask)
    tau.register_command("quick", "A dialog that times out", quick)
    tau.register_command("tell", "Fire-and-forget UI calls", tell)
    tau.register_command("fail", "Fails", fail)
    tau.register_command("bye", "Ends tau", lambda args, ctx: ctx.shutdown())


async def _client() -> RpcClient:
    return await RpcClient.start(script=faux_ext_script(), extensions=[dialogs_extension])


def ui_requests(client: RpcClient) -> list[dict]:
    return [r for r in client.records if r.get("type") == "extension_ui_request"]


def run(test):
    def wrapper(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        ANSWERS.clear()

        async def main():
            async with await _client() as client:
                await test(client)

        asyncio.run(main())

    wrapper.__name__, wrapper.__doc__ = test.__name__, test.__doc__
    return wrapper


@run
async def test_dialogs_wait_for_the_client(client):
    client.send(id="p", type="prompt", message="/ask")
    select = await client.event("extension_ui_request")
    assert list(select) == ["type", "id", "method", "title", "options"]
    assert (select["method"], select["title"], select["options"]) == ("select", "Pick", ["a", "b"])
    client.send(type="extension_ui_response", id=select["id"], value="b")
    confirm = await client.wait_for(lambda r: r.get("method") == "confirm")
    assert (confirm["title"], confirm["message"]) == ("Sure?", "Really do it")
    client.send(type="extension_ui_response", id=confirm["id"], confirmed=True)
    asked = await client.wait_for(lambda r: r.get("method") == "input")
    assert asked["placeholder"] == "your name"
    client.send(type="extension_ui_response", id=asked["id"], cancelled=True)
    editor = await client.wait_for(lambda r: r.get("method") == "editor")
    assert editor["prefill"] == "draft"
    client.send(type="extension_ui_response", id="not-a-pending-id", value="ignored")
    client.send(type="extension_ui_response", id=editor["id"], value="edited text")
    response = await client.response("p")
    assert response["data"] == {"disposition": "handled"}
    assert ANSWERS == {
        "select": "b",
        "confirm": True,
        "input": None,
        "editor": "edited text",
        "custom": None,
        "has_ui": True,
    }
    assert "agent_start" not in client.types()


@run
async def test_a_dialog_timeout_is_resolved_by_tau(client):
    response = await client.request(id="q", type="prompt", message="/quick")
    assert response["data"] == {"disposition": "handled"}
    (request,) = ui_requests(client)
    assert request["timeout"] == 50  # milliseconds on the wire, as pi
    assert ANSWERS == {"timed": None}


@run
async def test_fire_and_forget_requests(client):
    await client.request(id="t", type="prompt", message="/tell")
    requests = [{k: v for k, v in r.items() if k not in ("type", "id")} for r in ui_requests(client)]
    assert requests == [
        {"method": "notify", "message": "hello there", "notifyType": "warning"},
        {"method": "notify", "message": "plain"},
        {"method": "setStatus", "statusKey": "build", "statusText": "running"},
        {"method": "setStatus", "statusKey": "build"},
        {
            "method": "setWidget",
            "widgetKey": "w",
            "widgetLines": ["line 1", "line 2"],
            "widgetPlacement": "belowEditor",
        },
        {"method": "setWidget", "widgetKey": "w"},
        {"method": "setTitle", "title": "tau rpc"},
        {"method": "set_editor_text", "text": "prefilled"},
        {"method": "set_editor_text", "text": "pasted"},
    ]
    ids = [r["id"] for r in ui_requests(client)]
    assert len(set(ids)) == len(ids)


@run
async def test_commands_are_listed_and_cannot_be_queued(client):
    listed = (await client.request(type="get_commands"))["data"]["commands"]
    names = [c["name"] for c in listed]
    assert names == ["ask", "quick", "tell", "fail", "bye"]
    assert listed[0]["description"] == "Ask the user things" and listed[0]["source"] == "extension"
    assert listed[0]["sourceInfo"] == {
        "path": "<inline:dialogs_extension>",
        "source": "inline",
        "scope": "temporary",
        "origin": "top-level",
    }
    refused = await client.request(type="steer", message="/tell now")
    assert refused["success"] is False
    assert refused["error"] == (
        'Extension command "/tell" cannot be queued. Use prompt() or execute the command when not streaming.'
    )


@run
async def test_a_failing_command_is_reported_as_an_extension_error(client):
    response = await client.request(id="f", type="prompt", message="/fail")
    assert response["data"] == {"disposition": "handled"}
    error = await client.event("extension_error")
    assert error == {
        "type": "extension_error",
        "extensionPath": "command:fail",
        "event": "command",
        "error": "command went wrong",
    }


@run
async def test_ctx_shutdown_ends_the_mode_once_idle(client):
    response = await client.request(id="b", type="prompt", message="/bye")
    assert response["data"] == {"disposition": "handled"}
    assert await asyncio.wait_for(client._task, 60) == 0


def test_aborted_signal_resolves_a_dialog_with_its_default():
    written: list[dict] = []

    async def main():
        ui = RpcUI(written.append)
        signal = AbortSignal()
        signal.abort()
        assert await ui.confirm("t", "m", signal=signal) is False
        assert written == []  # already aborted: nothing is asked
        live = AbortSignal()
        pending = asyncio.ensure_future(ui.select("t", ["a"], signal=live))
        await asyncio.sleep(0)
        assert ui.pending_count == 1
        live.abort()
        assert await pending is None
        assert ui.pending_count == 0
        closing = asyncio.ensure_future(ui.input("t"))
        await asyncio.sleep(0)
        ui.cancel_all()
        assert await closing is None

    asyncio.run(main())
    assert [r["method"] for r in written] == ["select", "input"]


def test_theme_switching_fails_and_terminal_calls_are_no_ops():
    ui = RpcUI(lambda record: None)
    assert ui.set_theme("dark") == {"success": False, "error": "Theme switching not supported in RPC mode"}
    assert ui.get_editor_text() == "" and ui.get_tools_expanded() is False
    ui.set_working_message("busy")
    ui.set_footer(None)
    ui.on_terminal_input(lambda data: None)()
