"""requestState single use in a PostgreSQL store (sources/store/ledger.py): a nonce accepted once across every
ledger of the store, a bounded count per principal, expired rows swept, the shared signing key, and a store
that cannot be read refusing rather than accepting."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.ledger import StateLedger
from promptdeck.sources.store.model import StoreError
from tests.support.http_server import free_port
from tests.support.postgres import new_database

NOW = 1_000_000.0


@pytest.fixture
def url(postgres: str) -> str:
    """A fresh store with its schema and state key."""
    made = new_database(postgres)
    Store(made, create=True).close()
    return made


@pytest.fixture
def ledger(url: str) -> Iterator[StateLedger]:
    opened = StateLedger(url, per_principal=2)
    yield opened
    opened.close()


def test_a_nonce_is_accepted_once_across_the_stores_ledgers(url: str, ledger: StateLedger) -> None:
    other = StateLedger(url, per_principal=2)  # another replica of the same store
    try:
        assert ledger.use("n1", "ann", NOW + 60, NOW) is None
        assert other.use("n1", "ann", NOW + 60, NOW) == "was already used"
        assert ledger.use("n1", "bob", NOW + 60, NOW) == "was already used"  # whoever presents it
    finally:
        other.close()


def test_a_principal_past_its_bound_is_refused_until_its_states_expire(ledger: StateLedger) -> None:
    assert ledger.use("a", "ann", NOW + 60, NOW) is None
    assert ledger.use("b", "ann", NOW + 60, NOW) is None
    refused = ledger.use("c", "ann", NOW + 60, NOW)
    assert refused is not None and "too many were redeemed" in refused
    assert ledger.use("c", "bob", NOW + 60, NOW) is None  # ann's count is ann's alone
    assert ledger.use("d", "ann", NOW + 120, NOW + 61) is None  # ann's first two have expired


def test_expired_rows_are_swept_as_redemptions_go_on(url: str, ledger: StateLedger) -> None:
    assert ledger.use("old", "ann", NOW - 1, NOW - 10) is None
    ledger._uses = 255  # the next use is the 256th, which sweeps
    assert ledger.use("new", "ann", NOW + 60, NOW) is None
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT nonce FROM used_states ORDER BY nonce").fetchall()
    assert rows == [("new",)]


def test_every_ledger_of_a_store_signs_with_its_one_key(url: str, ledger: StateLedger) -> None:
    with psycopg.connect(url) as conn:
        stored = conn.execute("SELECT key FROM state_key").fetchone()
    assert stored is not None and ledger.key() == str(stored[0]).encode()
    other = StateLedger(url, per_principal=2)
    try:
        assert other.key() == ledger.key()
    finally:
        other.close()
    with psycopg.connect(url, autocommit=True) as conn:  # read once, then kept
        conn.execute("DELETE FROM state_key")
    assert ledger.key() == str(stored[0]).encode()


def test_a_store_without_a_key_is_refused_naming_the_command(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM state_key")
    ledger = StateLedger(url, per_principal=2)
    try:
        with pytest.raises(StoreError, match=r"has no state key: run `promptdeck store upgrade`"):
            ledger.key()
    finally:
        ledger.close()


def test_an_unreachable_store_refuses_the_state_and_hides_its_password() -> None:
    gone = StateLedger(f"postgresql://ann:hunter2@127.0.0.1:{free_port()}/none", per_principal=2)
    why = gone.use("n", "ann", NOW + 60, NOW)
    assert why is not None and "cannot be checked now (the store is unreachable)" in why
    with pytest.raises(StoreError, match=r"cannot read the state key of the store postgresql://ann:\*\*\*@") as err:
        gone.key()
    assert "hunter2" not in str(err.value)
    gone.close()


def test_a_closed_connection_is_opened_again(ledger: StateLedger) -> None:
    assert ledger.use("a", "ann", NOW + 60, NOW) is None
    ledger._conn.close()  # closed under it: the next use opens another, and the rows are still there
    assert ledger.use("b", "bob", NOW + 60, NOW) is None
    assert ledger.use("a", "bob", NOW + 60, NOW) == "was already used"
