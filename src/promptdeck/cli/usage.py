"""``promptdeck usage [NAME]``: renders per prompt, from the store (``--store``: every prompt, as the store's
administrator) or from a running server (``--server``: ``/api/usage``, a store's or a folder's counts, as the
token's principal, so only the prompts it may read). ``--since`` (default 30d) and ``--json`` (the API's
answer, as is)."""

from __future__ import annotations

import json
import time
from typing import Any

import click

from .common import fail, open_store, utc_time
from .terminal import echo

#: The most of an ``/api/usage`` answer read: a year of hourly rows for a large library, not a disk's worth.
MAX_ANSWER_BYTES = 256 * 1024 * 1024


@click.command()
@click.argument("prompt", required=False, metavar="[NAME]")
@click.option("--store", "url", default=None, envvar="PROMPTDECK_STORE", metavar="URL",
              help="Read the store at URL (default: $PROMPTDECK_STORE).")
@click.option("--server", default=None, metavar="URL", help="Ask a running serve --http (its /api/usage) instead.")
@click.option("--token", envvar="PROMPTDECK_TOKEN", metavar="TOKEN", default=None,
              help="The bearer token for --server (default: $PROMPTDECK_TOKEN).")
@click.option("--since", default="30d", show_default=True, metavar="WHEN",
              help="From when: 24h, 7d, 2w back, or epoch seconds.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def usage(prompt: str | None, url: str | None, server: str | None, token: str | None, since: str,
          as_json: bool) -> None:
    """Renders per prompt, by version, label and client, counted hour by hour."""
    if (url is None) == (server is None):
        fail("usage reads --store URL or --server URL (one of them)", 2)
    if server is not None:
        shown = _from_server(server, token, prompt, since)
    else:
        assert url is not None
        shown = _from_store(url, prompt, since)
    if as_json:
        echo(json.dumps(shown, indent=2))
        return
    if not shown["prompts"]:
        echo(f"no renders counted since {utc_time(shown['since'])}")
    for entry in shown["prompts"]:
        last = "never" if entry["last"] is None else utc_time(entry["last"])
        echo(f"{entry['prompt']}: {entry['renders']} renders since {utc_time(shown['since'])} (last: {last})")
        by: dict[tuple[int, str, str], int] = {}
        for row in entry["hours"]:
            key = (row["version"], row["label"], row["client"])
            by[key] = by.get(key, 0) + row["renders"]
        for (version, label, client), n in sorted(by.items(), key=lambda item: -item[1]):
            echo(f"  version {version or '-'} {label or '-'} {client}: {n}")


def _from_store(url: str, prompt: str | None, since: str) -> dict[str, Any]:
    from ..prompts.usage import since_seconds
    from ..protocol.errors import PromptdeckError
    from ..server.web.store_usage import answer

    try:
        start = since_seconds(since, time.time())
    except ValueError as exc:
        fail(str(exc), 2)
    with open_store(url) as opened:
        try:
            return answer(opened, start, lambda _: True, prompt)
        except PromptdeckError as exc:
            fail(str(exc))


def _from_server(server: str, token: str | None, prompt: str | None, since: str) -> dict[str, Any]:
    from .server_api import get

    query = {"since": since} if prompt is None else {"since": since, "prompt": prompt}
    shown: dict[str, Any] = get(server, "/api/usage", query, token, MAX_ANSWER_BYTES)
    return shown
