"""The SDK clients' era and transport, as fixtures, and a handler that keeps resource notifications: shared by the
resources and skills interop tests beside it."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from tests.support.flag import Flag
from tests.support.sdk_http import REVISIONS as HTTP_REVISIONS
from tests.support.sdk_stdio import REVISIONS as STDIO_REVISIONS

from .sdk_modern import TRANSPORTS


@pytest.fixture(params=sorted(set(STDIO_REVISIONS) | set(HTTP_REVISIONS)))
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest, revision: str) -> str:
    if request.param == "http" and revision not in HTTP_REVISIONS:
        pytest.skip(f"{revision} has no Streamable HTTP")
    return str(request.param)


class Heard:
    """An SDK ``message_handler`` that keeps the resource notifications and flags each kind."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.updates = Flag()
        self.list_changed = Flag()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))
            self.updates.set()
        elif isinstance(message, types.ResourceListChangedNotification):
            self.list_changed.set()


@pytest.fixture(params=sorted(TRANSPORTS))
def modern_transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)
