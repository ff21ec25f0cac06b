"""The client the official conformance suite's OAuth scenarios drive (tests/interop/test_conformance_oauth.py):

    python -m tests.support.conformance_oauth_client URL

promptdeck's ``connect(URL, auth=OAuth(...))``, signing in with the test "browser" (which follows the
authorization URL as a person approving it would), then a ``tools/list`` and, when the server offers a tool,
a call of it: the suite's servers serve tools, and some scenarios (a scope step-up) only ask for more when a
tool is called. The scenario's context (``MCP_CONFORMANCE_CONTEXT``: a pre-registered client's id and
secret) becomes ``OAuth``'s options, as a user would pass ``--client-id`` and ``--client-secret-file``.
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


async def run(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    options: dict[str, Any] = {}
    if isinstance(context.get("client_id"), str):
        options["client_id"] = context["client_id"]
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
