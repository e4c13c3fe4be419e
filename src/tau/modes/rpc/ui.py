"""``ctx.ui`` in RPC mode: dialogs become ``extension_ui_request`` records (pi-host §8.4).

Dialogs (``select``, ``confirm``, ``input``, ``editor``) write a request with a fresh id and wait for
the client's ``{"type": "extension_ui_response", "id", "value" | "confirmed" | "cancelled"}``. A
``timeout`` (seconds in tau's API; pi's milliseconds on the wire) or an aborted ``signal`` resolves
the dialog with its default (``None`` / ``False``) without the client. Fire-and-forget calls
(``notify``, ``set_status``, ``set_widget``, ``set_title``, ``set_editor_text``) write a request
and return. TUI-only calls are no-ops and ``custom()`` returns ``None``, as in pi.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from tau.extension.ui import NoUI, stderr_notice

__all__ = ["RpcUI"]

Output = Callable[[dict[str, Any]], None]


def _without_none(record: dict[str, Any]) -> dict[str, Any]:
    """Drop the keys pi leaves ``undefined`` (``JSON.stringify`` omits them)."""
    return {key: value for key, value in record.items() if value is not None}


def _wire_timeout(timeout: float | None) -> int | float | None:
    if not timeout or timeout <= 0:
        return None
    ms = timeout * 1000
    return int(ms) if float(ms).is_integer() else ms


def _value(response: dict[str, Any]) -> Any:
    if response.get("cancelled"):
        return None
    return response.get("value")


def _confirmed(response: dict[str, Any]) -> bool:
    if response.get("cancelled"):
        return False
    return bool(response.get("confirmed", False))


class RpcUI(NoUI):
    """An :class:`~tau.extension.ui.ExtensionUI` that talks to the RPC client.

    Args:
        output: Writes one record to stdout (the RPC mode's writer).
        new_id: Makes request ids (default: random UUIDs, as pi).
    """

    def __init__(self, output: Output, new_id: Callable[[], str] | None = None) -> None:
        self._output = output
        self._new_id = new_id or (lambda: str(uuid.uuid4()))
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._closed = False

    # -- the client's answers ----------------------------------------------------------------

    def handle_response(self, response: dict[str, Any]) -> bool:
        """Resolve the dialog ``response["id"]`` answers; ``False`` when none is waiting (ignored)."""
        future = self._pending.pop(str(response.get("id")), None)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        """No client can answer any more (end of input): open and later dialogs get their defaults."""
        self._closed = True
        self.cancel_all()

    def cancel_all(self) -> None:
        """Resolve every open dialog as cancelled."""
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_result({"cancelled": True})

    async def _dialog(
        self,
        request: dict[str, Any],
        default: Any,
        parse: Callable[[dict[str, Any]], Any],
        options: dict[str, Any],
    ) -> Any:
        signal = options.get("signal")
        if self._closed or (signal is not None and signal.aborted):
            return default
        request_id = self._new_id()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future

        def cancel() -> None:
            if not future.done():
                future.set_result({"cancelled": True})

        remove = signal.add_callback(cancel) if signal else None
        timeout = options.get("timeout")
        self._output(_without_none({"type": "extension_ui_request", "id": request_id, **request}))
        try:
            response = await asyncio.wait_for(future, timeout) if timeout and timeout > 0 else await future
        except TimeoutError:
            return default
        finally:
            self._pending.pop(request_id, None)
            if remove is not None:
                remove()
        if signal is not None and signal.aborted:
            return default
        return parse(response)

    # -- dialogs -----------------------------------------------------------------------------

    async def select(
        self, title: str, options: list[str], *, timeout: float | None = None, **extra: Any
    ) -> str | None:
        request = {
            "method": "select",
            "title": title,
            "options": list(options),
            "timeout": _wire_timeout(timeout),
        }
        return await self._dialog(request, None, _value, {"timeout": timeout, **extra})

    async def confirm(self, title: str, message: str, *, timeout: float | None = None, **extra: Any) -> bool:
        request = {"method": "confirm", "title": title, "message": message, "timeout": _wire_timeout(timeout)}
        return await self._dialog(request, False, _confirmed, {"timeout": timeout, **extra})

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None, **extra: Any
    ) -> str | None:
        request = {
            "method": "input",
            "title": title,
            "placeholder": placeholder,
            "timeout": _wire_timeout(timeout),
        }
        return await self._dialog(request, None, _value, {"timeout": timeout, **extra})

    async def editor(self, title: str, prefill: str | None = None, **extra: Any) -> str | None:
        # pi's editor dialog has no timeout or signal: it waits for the client.
        return await self._dialog({"method": "editor", "title": title, "prefill": prefill}, None, _value, {})

    async def custom(self, component: Any, **options: Any) -> Any:
        return None

    # -- fire and forget ---------------------------------------------------------------------

    def _fire(self, request: dict[str, Any]) -> None:
        self._output(_without_none({"type": "extension_ui_request", "id": self._new_id(), **request}))

    def notify(self, message: str, type: str | None = None) -> None:
        self._fire({"method": "notify", "message": message, "notifyType": type})

    def notice(self, message: str) -> None:
        stderr_notice(message)  # stdout is the protocol; pi's RPC has no request for it

    def set_status(self, key: str, text: str | None = None) -> None:
        self._fire({"method": "setStatus", "statusKey": key, "statusText": text})

    def set_widget(self, key: str, lines: Any, *, placement: str | None = None) -> None:
        if lines is not None and not isinstance(lines, (list, tuple)):
            return  # component factories need a terminal; pi ignores them in RPC mode
        self._fire(
            {
                "method": "setWidget",
                "widgetKey": key,
                "widgetLines": list(lines) if lines is not None else None,
                "widgetPlacement": placement,
            }
        )

    def set_title(self, title: str) -> None:
        self._fire({"method": "setTitle", "title": title})

    def set_editor_text(self, text: str) -> None:
        self._fire({"method": "set_editor_text", "text": text})

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)

    def get_editor_text(self) -> str:
        return ""  # the client owns the editor; a synchronous call cannot ask it

    def set_theme(self, theme: Any) -> dict[str, Any]:
        return {"success": False, "error": "Theme switching not supported in RPC mode"}
