"""The client the official conformance suite's OAuth scenarios drive (tests/interop/test_conformance_oauth.py):

    python -m tests.support.conformance_oauth_client URL

promptdeck's ``connect(URL, auth=OAuth(...))``, signing in with the test "browser" (which follows the
authorization URL as a person approving it would), then a ``tools/list`` and, when the server offers a tool,
a call of it: the suite's servers serve tools, and some scenarios (a scope step-up) only ask for more when a
tool is called. The scenario's context (``MCP_CONFORMANCE_CONTEXT``: a pre-registered client's id and
secret) becomes ``OAuth``'s options, as a user would pass ``--client-id`` and ``--client-secret-file``.

Without one, it is an application that publishes a Client ID Metadata Document: ``OAuth(client_id=URL)``
with the URL the suite's own example client uses (its servers read no document), so the scenarios see both
that document used where the authorization server advertises them and dynamic registration where not.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from typing import Any

from promptdeck.client import OAuth, connect
from tests.support.oauth_browser import sign_in

#: The application's Client ID Metadata Document, as the suite's scenarios expect it.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def run(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    client_id = context.get("client_id")
    options: dict[str, Any] = {"client_id": client_id if isinstance(client_id, str) else CLIENT_METADATA_URL}
    if isinstance(context.get("client_secret"), str):
        options["client_secret"] = context["client_secret"]
    if "client-credentials" in scenario:
        options["client_credentials"] = True
    with tempfile.TemporaryDirectory() as home:
        auth = OAuth(open_url=sign_in, store=os.path.join(home, "tokens.json"), **options)
        async with connect(url, auth=auth, timeout=20) as client:
            listed = await client.request("tools/list")
            tools = listed.get("tools") or []
            if tools:
                await client.request("tools/call", {"name": tools[0]["name"], "arguments": {}})


if __name__ == "__main__":
    asyncio.run(run(sys.argv[-1]))
