"""Signed session ids (``session_ids``): what they say, and every way one is refused."""

from __future__ import annotations

import base64
import json
import time

from promptdeck.server.http.session_ids import (
    MAX_CLIENT_NAME,
    MAX_ID_LENGTH,
    Claims,
    SessionIds,
    session_key,
)

KEY = b"k" * 32
NOW = 1_800_000_000.0


def ids(key: bytes = KEY, lifetime: float = 3600) -> SessionIds:
    return SessionIds(key, shared=True, lifetime=lifetime)


def test_an_id_says_what_its_initialize_negotiated() -> None:
    minted, said = ids().for_initialize("alice", {"protocolVersion": "2025-06-18", "clientInfo": {"name": "Claude"},
                                                  "capabilities": {"elicitation": {}}})
    claims = ids().check(minted, "alice")
    assert claims == said and claims[:3] == ("2025-06-18", True, "Claude")
    assert abs(claims.issued - time.time()) < 60
    # What the server would negotiate for a revision it does not know, no elicitation before 2025-06-18,
    # a client that gave no name: as the handshake itself makes of them.
    odd, _ = ids().for_initialize("alice", {"protocolVersion": "1999-01-01", "clientInfo": "x"})
    claims = ids().check(odd, "alice")
    assert isinstance(claims, Claims) and claims.revision == "2025-11-25" and not claims.elicits and claims.client == ""
    old = ids().check(ids().for_initialize("alice", {"protocolVersion": "2025-03-26",
                                                     "capabilities": {"elicitation": {}}})[0], "alice")
    assert isinstance(old, Claims) and not old.elicits


def test_ids_are_distinct_visible_ascii_and_name_no_principal() -> None:
    minted = {ids().mint("alice", "2025-11-25", False, "c" * 500) for _ in range(100)}
    assert len(minted) == 100
    for session_id in minted:
        assert all(0x21 <= ord(ch) <= 0x7E for ch in session_id) and len(session_id) < MAX_ID_LENGTH
        payload = base64.urlsafe_b64decode(session_id.split(".")[0] + "==")
        assert b"alice" not in payload
        assert len(json.loads(payload)[3]) == MAX_CLIENT_NAME


def test_another_principal_a_forgery_another_key_and_age_are_refused() -> None:
    minted = ids().mint("alice", "2025-11-25", False, "c", now=NOW)
    assert isinstance(ids().check(minted, "alice", now=NOW + 60), Claims)
    assert ids().check(minted, "bob", now=NOW) == "it belongs to another principal"
    assert "signature" in str(ids(b"o" * 32).check(minted, "alice", now=NOW))
    body, mac = minted.split(".")
    tampered = json.loads(base64.urlsafe_b64decode(body + "=="))
    tampered[4] += 10_000  # a younger issue time, to live longer
    forged = base64.urlsafe_b64encode(json.dumps(tampered).encode()).rstrip(b"=").decode() + "." + mac
    assert "signature" in str(ids().check(forged, "alice", now=NOW))
    assert "expired" in str(ids(lifetime=100).check(minted, "alice", now=NOW + 101))
    assert "future" in str(ids().check(ids().mint("alice", "2025-11-25", False, "", now=NOW + 3600), "alice", now=NOW))
    for junk in ("", "abc", "a.b.c", "!!!.???", "x" * (MAX_ID_LENGTH + 1), "e30.AAAA"):
        assert isinstance(ids().check(junk, "alice"), str), junk


def test_the_key_is_the_environment_s_else_the_store_s_else_this_process_s() -> None:
    assert session_key(b"e" * 32, b"s" * 32) == (b"e" * 32, True)
    assert session_key(None, b"s" * 32) == (b"s" * 32, True)
    own, shared = session_key(None, None)
    assert len(own) == 32 and not shared and session_key(None, None)[0] != own


def test_an_id_issued_for_one_label_is_not_genuine_for_another() -> None:
    """``/mcp`` (production) and ``/mcp/staging`` of one store share its key, yet neither takes up the other's
    sessions; replicas serving the same label do."""
    key = b"k" * 32
    production = SessionIds(key, shared=True, lifetime=3600, serves="production")
    staging = SessionIds(key, shared=True, lifetime=3600, serves="staging")
    replica = SessionIds(key, shared=True, lifetime=3600, serves="production")
    issued = production.mint("alice", "2025-06-18", False, "cli")
    assert isinstance(replica.check(issued, "alice"), Claims)
    assert staging.check(issued, "alice") == "its signature does not match (forged, or signed with another key)"
