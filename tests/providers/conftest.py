"""What the provider tests share: every example prompt, rendered."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.protocol.revisions import LATEST
from promptdeck.server.app import PromptServer
from promptdeck.server.local import LocalClient
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES


@pytest.fixture(scope="package")
def rendered() -> dict[str, dict[str, Any]]:
    """Every example prompt's prompts/get result, through the server's own request path."""
    server = PromptServer()
    server.add_folder(EXAMPLES)
    client = LocalClient(server, LATEST.version)
    names = [p["name"] for p in client.request("prompts/list")["result"]["prompts"]]
    assert set(names) == set(EXAMPLE_ARGS)
    return {name: client.request("prompts/get", {"name": name, "arguments": EXAMPLE_ARGS[name]})["result"]
            for name in names}
