"""One tau process's authenticated request to an OAuth-protected server, through tau's connection
auth (stored tokens, refreshed when expired), for the cross-process refresh test.

    python refresh_client.py AUTH_JSON SERVER_URL [AUTH_SERVER_METADATA_URL]

Prints ``ready`` when about to send, then ``<status> <body>`` (or ``error <what>``).
"""

from __future__ import annotations

import asyncio
import sys

import httpx2

from tau.bundled.mcp.oauth import McpCredentialStore


class Connection:
    def __init__(self, url: str, metadata_url: str | None) -> None:
        self.entry_config: dict = {"url": url}
        if metadata_url:
            self.entry_config["oauth"] = {"authServerMetadataUrl": metadata_url}

    def sign_in_required(self) -> None:
        print("needs sign-in", flush=True)


async def main(path: str, url: str, metadata_url: str | None) -> None:
    auth = McpCredentialStore(path).auth_for("sso").connection_auth(Connection(url, metadata_url))
    print("ready", flush=True)
    try:
        async with httpx2.AsyncClient(auth=auth, timeout=120) as client:
            response = await client.get(url)
        print(response.status_code, response.text, flush=True)
    except Exception as error:
        print("error", type(error).__name__, error, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
