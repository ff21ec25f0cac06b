"""Properties of 2026-07-28 ``requestState`` (``server/request_state.py``): signed, bound, expiring, single-use.

The state travels through the client, so everything about it is attacker-controlled: any change to
the string, any other caller or request, any other server key, a late or a second use must be
refused. The clock is injected through ``now``; each test checks that a refusal is for the reason
at hand, and that the untouched state is still accepted afterwards where that matters.
"""

from __future__ import annotations

import base64
import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptdeck.protocol.errors import InvalidParams, LibraryError
from promptdeck.server import request_state
from promptdeck.server.request_state import STATE_KEY_ENV, TTL_SECONDS, RequestStates, request_digest

KEY = b"k" * 32
NOW = 1_800_000_000.0
DIGEST = request_digest("prompts/get", "brief", {"topic": "caching"})
#: the urlsafe base64 alphabet, in value order
ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"

principals = st.text(max_size=40)
names = st.text(min_size=1, max_size=30)
arguments = st.none() | st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=4)
moments = st.floats(min_value=0, max_value=4e9, allow_nan=False, allow_infinity=False)
keys = st.binary(min_size=32, max_size=64)


def refused(states: RequestStates, state: object, why: str, *, principal: str = "alice", digest: str = DIGEST,
            now: float = NOW) -> None:
    """``redeem`` refuses ``state`` with -32602, saying ``why``."""
    with pytest.raises(InvalidParams) as caught:
        states.redeem(state, principal, digest, now)
    assert why in caught.value.message
    assert caught.value.code == -32602


def issued(principal: str = "alice", digest: str = DIGEST, now: float = NOW) -> tuple[RequestStates, str]:
    states = RequestStates(KEY)
    return states, states.issue(principal, digest, now)


# -- a fresh state ---------------------------------------------------------------------------------


@given(principals, names, arguments, moments, st.floats(min_value=0, max_value=TTL_SECONDS - 0.01))
def test_a_fresh_state_round_trips_once(principal: str, name: str, given_args: dict[str, str] | None,
                                        now: float, later: float) -> None:
    states = RequestStates(KEY)
    digest = request_digest("prompts/get", name, given_args)
    state = states.issue(principal, digest, now)
    states.redeem(state, principal, digest, now + later)  # accepted: no exception
    refused(states, state, "already used", principal=principal, digest=digest, now=now + later)


@given(st.integers(min_value=2, max_value=20))
def test_every_state_is_new(count: int) -> None:
    states = RequestStates(KEY)
    issued_states = {states.issue("alice", DIGEST, NOW) for _ in range(count)}
    assert len(issued_states) == count  # a nonce each, even for the same request at the same moment
    for state in issued_states:
        states.redeem(state, "alice", DIGEST, NOW)


# -- tampering -----------------------------------------------------------------------------------


@given(st.data())
def test_any_bit_flips_are_refused(data: st.DataObject) -> None:
    states, state = issued()
    raw = bytearray(state.encode("ascii"))
    flips = data.draw(st.sets(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1, max_size=8))
    for index, bit in flips:
        raw[index] ^= 1 << bit
    refused(states, raw.decode("latin-1"), "not one this server issued")
    states.redeem(state, "alice", DIGEST, NOW)  # the untouched state is still good


@given(st.data())
def test_truncations_are_refused(data: st.DataObject) -> None:
    states, state = issued()
    start = data.draw(st.integers(0, len(state)))
    end = data.draw(st.integers(start, len(state)))
    cut = state[start:end]
    if cut == state:
        return
    refused(states, cut, "not one this server issued")
    states.redeem(state, "alice", DIGEST, NOW)


def spare_bit_variants(part: str) -> list[str]:
    """Other spellings of the same bytes: base64's last character carries bits the decoder ignores."""
    spare = {2: 4, 3: 2}.get(len(part) % 4, 0)
    value = ALPHABET.index(part[-1])
    base = value & ~((1 << spare) - 1)
    return [part[:-1] + ALPHABET[base | low] for low in range(1 << spare) if base | low != value]


def unb64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def reencodings(state: str) -> list[str]:
    """Strings that decode to the very bytes of ``state``, or carry its payload spelled otherwise."""
    body, mac = state.split(".")
    payload = json.loads(unb64(body))
    respelled = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    out = [
        body + "=" * (-len(body) % 4 or 4) + "." + mac,  # padding
        body + "." + mac + "=",
        body + "." + mac + "\n",
        body[:5] + " " + body[5:] + "." + mac,  # characters the decoder skips
        body + "." + mac[:7] + "*" + mac[7:],
        body.replace("-", "+").replace("_", "/") + "." + mac.replace("-", "+").replace("_", "/"),
        respelled + "." + mac,  # the same payload, serialized with spaces
        base64.b64encode(unb64(body)).decode() + "." + mac,  # the standard alphabet, padded
    ]
    out += [body + "." + variant for variant in spare_bit_variants(mac)]
    out += [variant + "." + mac for variant in spare_bit_variants(body)]
    return [variant for variant in out if variant != state]


@settings(max_examples=30)
@given(principals, st.sampled_from(range(12)))
def test_other_spellings_of_a_state_are_refused(principal: str, pick: int) -> None:
    states, state = issued(principal)
    variants = reencodings(state)
    variant = variants[pick % len(variants)]
    refused(states, variant, "not one this server issued", principal=principal)
    states.redeem(state, principal, DIGEST, NOW)


def test_the_mac_always_has_spare_bits_to_try() -> None:
    # The re-encoding property relies on it: a 32-byte HMAC is 43 characters, two bits to spare.
    _, state = issued()
    assert len(spare_bit_variants(state.split(".")[1])) == 3


@given(st.one_of(st.none(), st.integers(), st.lists(st.text()), st.dictionaries(st.text(), st.text()),
                 st.text(max_size=200), st.just("a." * 3000)))
def test_anything_else_is_refused(junk: Any) -> None:
    states, _ = issued()
    refused(states, junk, "not one this server issued")


@given(keys)
def test_another_servers_key_is_refused(other_key: bytes) -> None:
    if other_key == KEY:
        return
    _, state = issued()
    refused(RequestStates(other_key), state, "not one this server issued")


def test_replicas_sharing_the_key_accept_each_others_states_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_KEY_ENV, "a-shared-key-of-at-least-32-characters")
    one, two = RequestStates(), RequestStates()
    state = one.issue("alice", DIGEST, NOW)
    two.redeem(state, "alice", DIGEST, NOW)
    refused(two, state, "already used")
    monkeypatch.setenv(STATE_KEY_ENV, "too-short")
    with pytest.raises(LibraryError, match=STATE_KEY_ENV):
        RequestStates()


# -- binding -------------------------------------------------------------------------------------


@given(principals, principals)
def test_another_principal_is_refused(principal: str, other: str) -> None:
    if other == principal:
        return
    states, state = issued(principal)
    refused(states, state, "belongs to another request", principal=other)
    states.redeem(state, principal, DIGEST, NOW)


@given(names, arguments, names, arguments, st.sampled_from(["prompts/get", "resources/read", "tools/call"]))
def test_another_request_is_refused(name: str, given_args: dict[str, str] | None, other_name: str,
                                    other_args: dict[str, str] | None, other_method: str) -> None:
    digest = request_digest("prompts/get", name, given_args)
    other = request_digest(other_method, other_name, other_args)
    if (other_method, other_name, other_args or {}) == ("prompts/get", name, given_args or {}):
        assert other == digest  # the same request: the same digest
        return
    states, state = issued(digest=digest)
    refused(states, state, "belongs to another request", digest=other)
    states.redeem(state, "alice", digest, NOW)


def test_the_digest_does_not_depend_on_argument_order() -> None:
    assert request_digest("prompts/get", "p", {"a": "1", "b": "2"}) == request_digest("prompts/get", "p",
                                                                                       {"b": "2", "a": "1"})


# -- expiry and replay -----------------------------------------------------------------------------


@given(moments, st.floats(min_value=1, max_value=1e5), st.floats(min_value=0.002, max_value=1e7))
def test_expired_states_are_refused(now: float, ttl: float, late: float) -> None:
    states = RequestStates(KEY, ttl_seconds=ttl)
    state = states.issue("alice", DIGEST, now)
    refused(states, state, "expired", now=now + ttl + late)
    states.redeem(state, "alice", DIGEST, now + ttl - 0.002)  # just in time


@given(st.lists(st.floats(min_value=0, max_value=TTL_SECONDS - 1), min_size=1, max_size=5))
def test_a_used_state_is_refused_whenever_it_comes_back(retries: list[float]) -> None:
    states, state = issued()
    states.redeem(state, "alice", DIGEST, NOW)
    for later in retries:
        refused(states, state, "already used", now=NOW + later)


def test_a_full_share_forgets_its_oldest_half_and_never_allows_a_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_state, "MAX_PER_PRINCIPAL", 4)
    states = RequestStates(KEY, ttl_seconds=10)
    used = [states.issue("alice", DIGEST, NOW + n) for n in range(4)]  # expiring at NOW+10 … NOW+13
    for state in used:
        states.redeem(state, "alice", DIGEST, NOW + 4)
    waiting = [states.issue("alice", DIGEST, NOW + 4) for _ in range(2)]
    states.redeem(waiting[0], "alice", DIGEST, NOW + 4)  # alice's share was full: her two oldest are forgotten
    for state in used[:2]:
        refused(states, state, "no longer accepted", now=NOW + 4)  # forgotten, yet still not accepted twice
    for state in used[2:] + waiting[:1]:
        refused(states, state, "already used", now=NOW + 4)
    states.redeem(waiting[1], "alice", DIGEST, NOW + 4)  # newer than what was forgotten: accepted
    # Expired states are forgotten without raising the floor.
    late = states.issue("alice", DIGEST, NOW + 30)
    states.redeem(late, "alice", DIGEST, NOW + 30)


def test_a_full_memory_sheds_the_biggest_holder_not_the_newcomer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_state, "MAX_REMEMBERED", 6)
    states = RequestStates(KEY, ttl_seconds=10)
    hoard = [states.issue("mallory", DIGEST, NOW + n / 10) for n in range(5)]
    for state in hoard:
        states.redeem(state, "mallory", DIGEST, NOW + 1)
    states.redeem(states.issue("bob", DIGEST, NOW + 1), "bob", DIGEST, NOW + 1)
    carol = states.issue("carol", DIGEST, NOW + 1)
    states.redeem(carol, "carol", DIGEST, NOW + 1)  # the total was full: mallory lost her oldest half
    refused(states, carol, "already used", principal="carol", now=NOW + 1)
    for state in hoard[:2]:
        refused(states, state, "no longer accepted", principal="mallory", now=NOW + 1)
    for state in hoard[2:]:
        refused(states, state, "already used", principal="mallory", now=NOW + 1)
