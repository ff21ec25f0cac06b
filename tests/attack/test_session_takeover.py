"""Session ids that any replica takes up (issue 41) are not credentials: another principal's, a forged, an expired
or an ended one gets 404 from every replica, with a log line saying why; sessions taken up count against the caps.
Real ``serve --store`` replicas of one SQLite store, with two principals."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from promptdeck.sources.store.database import Store
from tests.support.http_rpc import rpc, start_session
from tests.support.http_server import http_server
from tests.support.stores import publish_texts

pytestmark = pytest.mark.slow

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdefgh"}


def auth(who: str) -> dict[str, str]:
    return {"authorization": f"Bearer {TOKENS[who]}"}


@contextmanager
def replicas(tmp: Path, *options: str, store: bool = True) -> Iterator[tuple[list[str], list[Path]]]:
    """Two replicas (of one store, or two folder servers of one library), their endpoints and logs."""
    tokens = tmp / "tokens"
    tokens.write_text("".join(f"{name}:{token}\n" for name, token in TOKENS.items()))
    url = f"sqlite:///{tmp / 'store.db'}"
    library = tmp / "library"
    library.mkdir()
    (library / "greet.md").write_text("Hello!\n")
    with Store(url, create=True) as made:
        publish_texts(made, "production", {"greet.md": "Hello!\n"})
    target = ("", "--store", url, "--label", "production") if store else (str(library), "--no-watch")
    logs = [tmp / "a.log", tmp / "b.log"]
    with ExitStack() as stack:
        urls = [stack.enter_context(http_server(target[0], *target[1:], "--json-response", "-v", "--token-file",
                                                str(tokens), *options, log=log)) for log in logs]
        yield urls, logs
    for log in logs:
        assert "Traceback" not in log.read_text()


def ping(client: httpx.Client, url: str, session: dict[str, str], who: str | None = None) -> int:
    headers = {**session, **(auth(who) if who else {})}
    return client.post(url, json=rpc("ping"), headers=headers).status_code


def test_another_principal_s_session_is_404_on_every_replica(tmp_path: Path) -> None:
    with replicas(tmp_path) as ([a, b], [_, log_b]), httpx.Client(timeout=30) as client:
        alice = start_session(client, a, headers=auth("alice"))
        assert ping(client, a, alice, "bob") == 404  # on the replica that holds it
        assert ping(client, b, alice, "bob") == 404  # and on one that would take it up
        assert client.get(b, headers={**alice, **auth("bob"), "accept": "text/event-stream"}).status_code == 404
        assert client.delete(b, headers={**alice, **auth("bob")}).status_code == 404
        assert "belongs to another principal" in log_b.read_text()
        assert "sessions are answered by every replica that shares this key (the store's)" in log_b.read_text()
        # Bob's attempts took nothing: alice's session lives on both replicas.
        assert ping(client, b, alice) == 200 and ping(client, a, alice) == 200


def test_forged_and_tampered_ids_are_404_with_a_log_line(tmp_path: Path) -> None:
    with replicas(tmp_path) as ([a, b], [_, log_b]), httpx.Client(timeout=30) as client:
        alice = start_session(client, a, headers=auth("alice"))
        body, mac = alice["mcp-session-id"].split(".")
        claims = json.loads(base64.urlsafe_b64decode(body + "=="))
        claims[1] = "2025-03-26"  # another revision: batches, say
        tampered = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode() + "." + mac
        for forged in (tampered, "made-up-session-id-0123456789abcdefghij", body + "." + mac[::-1], body):
            assert ping(client, b, {**alice, "mcp-session-id": forged}) == 404, forged
        text = log_b.read_text()
        assert "signature does not match" in text and "not a session id of this server" in text
        assert "taken up" not in text


def test_an_expired_id_is_404_on_every_replica(tmp_path: Path) -> None:
    with replicas(tmp_path, "--session-lifetime", "2") as ([a, b], [log_a, log_b]), \
            httpx.Client(timeout=30) as client:
        alice = start_session(client, a, headers=auth("alice"))
        issued = time.time()
        deadline = issued + 3.5  # ids carry whole seconds
        while time.time() < deadline:
            time.sleep(0.2)
        assert ping(client, b, alice) == 404  # replayed after its lifetime: not taken up
        assert ping(client, a, alice) == 404  # and the replica that held it ends it too
        assert "it expired" in log_b.read_text()
        assert "reached its lifetime" in log_a.read_text()


def test_a_deleted_session_is_not_taken_up_again_by_the_replica_that_ended_it(tmp_path: Path) -> None:
    with replicas(tmp_path) as ([a, b], [_, log_b]), httpx.Client(timeout=30) as client:
        alice = start_session(client, a, headers=auth("alice"))
        assert ping(client, b, alice) == 200
        assert client.delete(b, headers=alice).status_code == 200
        assert ping(client, b, alice) == 404
        assert "a session that ended here" in log_b.read_text()


def test_sessions_taken_up_count_against_the_caps(tmp_path: Path) -> None:
    with replicas(tmp_path, "--max-sessions", "100", "2") as ([a, b], [_, log_b]), httpx.Client(timeout=30) as client:
        begun_on_a = [start_session(client, a, headers=auth("alice")) for _ in range(2)]
        for _ in range(2):
            start_session(client, b, headers=auth("alice"))  # alice's share of b is full
        refused = client.post(b, json=rpc("ping"), headers=begun_on_a[0])
        assert refused.status_code == 429, refused.text
        assert "at a session cap" in log_b.read_text()
        # Bob's share is his own: he takes up his session on b while alice cannot.
        bob = start_session(client, a, headers=auth("bob"))
        assert ping(client, b, bob) == 200


def test_a_folder_server_takes_up_no_session_of_another_process(tmp_path: Path) -> None:
    """Without a store each process signs with a key of its own: nothing changes for a folder library."""
    with replicas(tmp_path, store=False) as ([a, b], [_, log_b]), httpx.Client(timeout=30) as client:
        alice = start_session(client, a, headers=auth("alice"))
        assert ping(client, b, alice) == 404 and ping(client, a, alice) == 200
        assert "signature does not match" in log_b.read_text()
        assert "answered by every replica" not in log_b.read_text()
        assert client.delete(a, headers=alice).status_code == 200
        assert ping(client, a, alice) == 404
