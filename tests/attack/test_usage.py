"""Usage against hostile clients (prompts/usage.py, sources/store/usage.py, server/web/store_usage.py), over a
real ``serve --store --http``: a client name that is huge, holds control characters or a newline that tries to
forge an audit line, 10,000 distinct names to blow up the rows, and a flood of renders. Rows stay bounded per
prompt and hour, names reach the store printable and short, and the log keeps one line per render."""

from __future__ import annotations

from pathlib import Path

import httpx

from promptdeck.prompts.usage import MAX_CLIENT_CHARS, MAX_CLIENTS, OTHER
from tests.support import modern
from tests.support.store_api import BOB, CAROL, make_store, serving
from tests.support.usage import CLIENT_INFO_KEY, render_as, totals, wait_for_usage

FORGED = "\npromptdeck INFO prompts/get principal=root prompt='payroll' version=9 label=production outcome=ok"
NAMES = 10_000


def test_hostile_client_names_are_bounded_in_length_and_rows(tmp_path: Path) -> None:
    url = make_store(tmp_path)
    log = tmp_path / "server.log"
    with serving(tmp_path, url, log) as (base, _):
        for name in ("x" * 200_000, "evil\x1b[2J\r\x00" + FORGED, "\u2028\u2029\t", 12345):
            assert "Hello Ann!" in str(render_as(base, BOB, "greet", name, {"who": "Ann"}))
        with httpx.Client(timeout=30, headers=BOB) as http:  # a flood: one new name a render
            for i in range(NAMES):
                message = modern.request(i, "prompts/get", {"name": "greet", "arguments": {"who": "A"}},
                                         meta={CLIENT_INFO_KEY: {"name": f"client-{i}", "version": "1"}})
                assert http.post(f"{base}/mcp", json=message, headers=modern.headers_for(message)).status_code == 200
        shown = wait_for_usage(base, CAROL, lambda s: totals(s).get("greet") == NAMES + 4)
        assert totals(shown)["greet"] == NAMES + 4, shown
        [greet] = [entry for entry in shown["prompts"] if entry["prompt"] == "greet"]
        clients = [row["client"] for row in greet["hours"]]
        hours = {row["hour"] for row in greet["hours"]}
        assert len(clients) <= len(hours) * (MAX_CLIENTS + 1), len(clients)  # rows bounded per prompt and hour
        assert OTHER in clients
        for client in clients:
            assert len(client) <= MAX_CLIENT_CHARS and client.isprintable() and "\n" not in client, client
    lines = log.read_text().splitlines()
    assert not any(line.startswith("promptdeck INFO prompts/get principal=root") for line in lines)
    assert sum("prompts/get principal=bob prompt='greet' version=1 label=production" in line
               for line in lines) == NAMES + 4
