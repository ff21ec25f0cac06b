"""Who a server tells of list changes, by kind: its open legacy sessions and 2026-07-28 subscriptions."""

from __future__ import annotations

from promptdeck.server.app import PromptServer
from promptdeck.server.legacy import LegacySession
from promptdeck.server.modern import Subscription


def sessions(server: PromptServer) -> list[LegacySession]:
    return [listener for listener in server.listeners if isinstance(listener, LegacySession)]


def subscriptions(server: PromptServer) -> list[Subscription]:
    return [listener for listener in server.listeners if isinstance(listener, Subscription)]
