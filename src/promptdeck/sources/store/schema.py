"""The store's tables, in SQL that SQLite and PostgreSQL both take, and their migrations."""

from __future__ import annotations

import logging
import re

from ..files.paths import SKILL_FOLDERS

log = logging.getLogger("promptdeck.store")

#: The schema this promptdeck writes; a store with a newer one is refused, an older one needs
#: ``promptdeck store upgrade``.
SCHEMA_VERSION = 11
#: The PostgreSQL channel a label move is announced on (its payload: the label's name).
CHANNEL = "promptdeck_labels"
#: The largest file a library may hold (prompt files have their own, smaller limit when parsed).
MAX_FILE_BYTES = 10 * 1024 * 1024
#: A label's name (``is_label``): 1-64 letters, digits, '_', '-' and '.', not starting with '-' or '.'.
_LABEL_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}\Z")

_SCHEMA = [
    "CREATE TABLE promptdeck_schema (version INTEGER NOT NULL)",
    "CREATE TABLE publishes (id {serial} PRIMARY KEY, author TEXT NOT NULL, message TEXT NOT NULL, "
    "created DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE blobs (digest TEXT PRIMARY KEY, data {blob} NOT NULL)",
    # digest NULL: the file was deleted in that version.
    "CREATE TABLE files (path TEXT NOT NULL, version INTEGER NOT NULL, publish INTEGER NOT NULL "
    "REFERENCES publishes(id), prompt TEXT, digest TEXT REFERENCES blobs(digest), PRIMARY KEY (path, version))",
    "CREATE TABLE positions (id {serial} PRIMARY KEY, label TEXT NOT NULL, author TEXT NOT NULL, "
    "reason TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX positions_by_label ON positions (label, id)",
    "CREATE TABLE position_files (position INTEGER NOT NULL REFERENCES positions(id), path TEXT NOT NULL, "
    "version INTEGER NOT NULL, PRIMARY KEY (position, path))",
]
#: What each schema version adds to the one before, applied in order by ``upgrade`` in one transaction.
_MIGRATIONS: dict[int, list[str]] = {
    1: _SCHEMA,
    # 2: requestState single use across replicas (``StateLedger``), and the key replicas sign states with.
    2: ["CREATE TABLE used_states (nonce TEXT PRIMARY KEY, principal TEXT NOT NULL, "
        "expires DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX used_states_by_principal ON used_states (principal, expires)",
        "CREATE TABLE state_key (key TEXT NOT NULL)"],
    # 3: each prompt file's listing entry and scopes, written at publish, so a server lists a label
    # without reading its files (``StoreSource``); NULL where an older promptdeck published.
    # A position's prompt names and scopes sit beside its files, indexed, so a server pages a label's
    # listing straight from the database (``StoredCatalog``).
    3: ["ALTER TABLE files ADD COLUMN listing TEXT",
        "ALTER TABLE files ADD COLUMN scopes TEXT",
        "ALTER TABLE position_files ADD COLUMN name TEXT{bytewise}",
        "ALTER TABLE position_files ADD COLUMN scopes TEXT",
        "UPDATE position_files SET name = (SELECT f.prompt FROM files f WHERE f.path = position_files.path "
        "AND f.version = position_files.version)",
        "CREATE INDEX position_files_by_name ON position_files (position, name)",
        # Whether every prompt file of the position has a listing (of which format), and the distinct
        # scope sets its prompts carry (a JSON list): what a server needs before its first page.
        "ALTER TABLE positions ADD COLUMN listing_format INTEGER",
        "ALTER TABLE positions ADD COLUMN scope_sets TEXT"],
    # 4: which of a position's files lie in a skill folder (``paths.SKILL_FOLDERS``; 1, else NULL), with an
    # index of those alone: a server finds a label's skills without reading its other rows (a scan of a
    # 1,000,000-prompt position took 0.3 to 3 s; neither database can range over a path prefix in byte
    # order through the path index, PostgreSQL's comparing paths by the database's locale).
    4: ["ALTER TABLE position_files ADD COLUMN skill INTEGER",
        "UPDATE position_files SET skill = 1 WHERE "
        + " OR ".join(f"substr(path, 1, {len(folder)}) = '{folder}'" for folder, _ in SKILL_FOLDERS),
        "CREATE INDEX position_files_skills ON position_files (position) WHERE skill IS NOT NULL"],
    # 5: webhooks (``events``, ``webhooks``, ``delivery``). The kinds of event are rows, so a later change
    # adds one with an INSERT; ``events`` is the outbox, written in the transaction of the change each
    # event describes; a delivery is one event for one webhook (its body holds only what that webhook may
    # see), claimed by one replica at a time under a lease; each attempt is a row ``webhook log`` shows.
    5: ["CREATE TABLE event_kinds (kind TEXT PRIMARY KEY)",
        "INSERT INTO event_kinds (kind) VALUES ('publish'), ('label'), ('rollback')",
        "CREATE TABLE webhooks (id {serial} PRIMARY KEY, url TEXT NOT NULL, secret TEXT NOT NULL, "
        "kinds TEXT NOT NULL, scopes TEXT NOT NULL, allow TEXT NOT NULL, timeout DOUBLE PRECISION NOT NULL, "
        "author TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, removed DOUBLE PRECISION)",
        "CREATE TABLE events (id {serial} PRIMARY KEY, kind TEXT NOT NULL REFERENCES event_kinds(kind), "
        "payload TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, uid TEXT NOT NULL)",
        "CREATE TABLE deliveries (id {serial} PRIMARY KEY, event INTEGER NOT NULL REFERENCES events(id), "
        "webhook INTEGER NOT NULL REFERENCES webhooks(id), body TEXT NOT NULL, status TEXT NOT NULL, "
        "attempts INTEGER NOT NULL, next_try DOUBLE PRECISION NOT NULL, lease TEXT, "
        "lease_until DOUBLE PRECISION, finished DOUBLE PRECISION, UNIQUE (event, webhook))",
        "CREATE INDEX deliveries_due ON deliveries (next_try) WHERE status = 'pending'",
        "CREATE INDEX deliveries_by_webhook ON deliveries (webhook, id)",
        "CREATE TABLE delivery_attempts (delivery INTEGER NOT NULL REFERENCES deliveries(id), "
        "attempt INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL, sender TEXT NOT NULL, code INTEGER, "
        "error TEXT, PRIMARY KEY (delivery, attempt))"],
    # 6: governance (``governance``, docs/store.md#governance). A position records why its label moved (the
    # mover's ``-m``) and the position the label left (NULL for older moves: the label's position before it);
    # a protected label names the scope a move through /api/store needs; a rollout sends a share of a label's
    # renders of one prompt to another version (``rollout_events``: its start, changes and end, the audit;
    # each is also a webhook event of the kind ``rollout``).
    6: ["ALTER TABLE positions ADD COLUMN message TEXT",
        "ALTER TABLE positions ADD COLUMN previous INTEGER",
        "CREATE TABLE protected_labels (label TEXT PRIMARY KEY, scope TEXT NOT NULL, require_tests INTEGER NOT NULL, "
        "author TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE rollouts (id {serial} PRIMARY KEY, label TEXT NOT NULL, path TEXT NOT NULL, "
        "prompt TEXT NOT NULL, base INTEGER NOT NULL, version INTEGER NOT NULL, basis_points INTEGER NOT NULL, "
        "author TEXT NOT NULL, message TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, "
        "ended DOUBLE PRECISION, outcome TEXT)",
        # At most one live rollout of a prompt file on a label.
        "CREATE UNIQUE INDEX rollouts_live ON rollouts (label, path) WHERE ended IS NULL",
        "CREATE TABLE rollout_events (id {serial} PRIMARY KEY, rollout INTEGER NOT NULL REFERENCES rollouts(id), "
        "kind TEXT NOT NULL, basis_points INTEGER NOT NULL, author TEXT NOT NULL, message TEXT NOT NULL, "
        "created DOUBLE PRECISION NOT NULL, position INTEGER)",
        "CREATE INDEX rollout_events_by_rollout ON rollout_events (rollout, id)",
        # a rollout's start, change of share and end are events webhooks may ask for (``governance``)
        "INSERT INTO event_kinds (kind) VALUES ('rollout')"],
    # 7: the kinds of event are declared in code (``event_kinds``), not rows: ``event_kinds`` goes, with the
    # reference ``events.kind`` had to it (each database's way of dropping one: ``_DIALECT_MIGRATIONS``), so
    # a new kind needs no migration. A webhook asking for every kind is ``*``, and is sent kinds added later:
    # one that asked for every kind schema 6 had (``webhook add`` without ``--event`` stored them all)
    # becomes ``*``. One that lists the three of schema 5 keeps them: it cannot be told from a choice of three.
    7: ["UPDATE webhooks SET kinds = '*' WHERE kinds = 'label publish rollback rollout'"],
    # 8: git and the store (``sync``, docs/store.md#git). A publish from a git work tree records its provenance:
    # the commit, the branch (NULL: detached) and whether the tree had uncommitted changes (NULL: not from git).
    # A label's base is where it stood when a folder was last published to it or pulled from it: a later
    # publish that finds the label moved since (a web save, another publish) is refused rather than undo it.
    8: ["ALTER TABLE publishes ADD COLUMN git_commit TEXT",
        "ALTER TABLE publishes ADD COLUMN git_branch TEXT",
        "ALTER TABLE publishes ADD COLUMN git_dirty INTEGER",
        "CREATE TABLE label_bases (label TEXT PRIMARY KEY, position INTEGER NOT NULL, author TEXT NOT NULL, "
        "created DOUBLE PRECISION NOT NULL)"],
    # 9: reviews (``proposals``, docs/store.md#reviews). A proposal is a set of versions (``proposal_files``)
    # aimed at a label and not yet served; ``proposal_reviews`` is its audit, append-only: each new set of
    # versions pushed (``push``), comment, approval and rejection, with the principal who made it and, for an
    # approval, the digest of exactly the versions approved (a push changes the digest, so older approvals no
    # longer count) and the scope the approver held. A protected label may require approvals of its moves.
    9: ["CREATE TABLE proposals (id {serial} PRIMARY KEY, label TEXT NOT NULL, author TEXT NOT NULL, "
        "message TEXT NOT NULL, state TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, "
        "closed DOUBLE PRECISION, position INTEGER)",
        "CREATE INDEX proposals_by_label ON proposals (label, state, id)",
        "CREATE TABLE proposal_files (proposal INTEGER NOT NULL REFERENCES proposals(id), path TEXT NOT NULL, "
        "version INTEGER NOT NULL, PRIMARY KEY (proposal, path))",
        "CREATE TABLE proposal_reviews (id {serial} PRIMARY KEY, proposal INTEGER NOT NULL REFERENCES proposals(id), "
        "kind TEXT NOT NULL, principal TEXT NOT NULL, message TEXT NOT NULL, digest TEXT NOT NULL, "
        "scope TEXT, created DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX proposal_reviews_by_proposal ON proposal_reviews (proposal, id)",
        "ALTER TABLE protected_labels ADD COLUMN approvals INTEGER NOT NULL DEFAULT 0"],
    # 10: copies (``copies``, docs/store.md#backup-and-restore). A webhook delivers only from the database it was
    # last enabled in: ``enabled_in`` is that database's identity (NULL: paused by ``webhook pause``). A backup
    # restored, a file copied or a database dumped and restored elsewhere has another identity, so its webhooks
    # wait for ``webhook resume``. The upgrade records the identity of the database it upgrades (``upgrade``).
    10: ["ALTER TABLE webhooks ADD COLUMN enabled_in TEXT"],
    # 11: usage (``usage``, docs/usage.md). Renders per prompt and hour (epoch seconds at its start), by version
    # rendered (0: none), label, rollout arm and client; ``renders`` is added to by every replica's upsert.
    11: ["CREATE TABLE prompt_usage (prompt TEXT{bytewise} NOT NULL, hour BIGINT NOT NULL, version INTEGER NOT NULL, "
         "label TEXT NOT NULL, arm TEXT NOT NULL, client TEXT NOT NULL, renders BIGINT NOT NULL, "
         "PRIMARY KEY (prompt, hour, version, label, arm, client))",
         "CREATE INDEX prompt_usage_by_hour ON prompt_usage (hour)"],
}
#: The statements of a schema version that differ between the databases, run after its ``_MIGRATIONS``.
_DIALECT_MIGRATIONS: dict[tuple[int, bool], list[str]] = {
    # PostgreSQL drops the foreign key with the table it names.
    (7, True): ["DROP TABLE event_kinds CASCADE"],
    # SQLite cannot drop a foreign key, and its table cannot be rebuilt by renaming inside a transaction with
    # foreign keys on (``deliveries`` would follow the rename). So: a copy, ``events`` made again without the
    # reference, and its rows put back; ``deliveries`` refers to them as before. Deferred, its reference to
    # ``events`` is checked at the commit, once every row is back.
    (7, False): ["PRAGMA defer_foreign_keys = ON",
                 "CREATE TABLE events_copy AS SELECT id, kind, payload, created, uid FROM events",
                 "DROP TABLE events",
                 "CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL, "
                 "created DOUBLE PRECISION NOT NULL, uid TEXT NOT NULL)",
                 "INSERT INTO events (id, kind, payload, created, uid) "
                 "SELECT id, kind, payload, created, uid FROM events_copy",
                 "DROP TABLE events_copy",
                 "DROP TABLE event_kinds"],
}
#: The shape of ``files.listing``: '{"v":FORMAT,"d":<Prompt.listing()>}'. A listing of another format
#: (another promptdeck's) is not used; the server reads the files instead.
LISTING_FORMAT = 1
LISTING_HEAD = f'{{"v":{LISTING_FORMAT},'


def migration(version: int, postgres: bool) -> list[str]:
    """The statements that bring a store of schema ``version - 1`` to ``version``, in its database's words."""
    serial = "BIGSERIAL" if postgres else "INTEGER"
    blob = "BYTEA" if postgres else "BLOB"
    # Names compare byte by byte in both databases (SQLite's default), as Python sorts them: pages
    # come out in the order cursors assume, whatever the PostgreSQL database's locale.
    bytewise = ' COLLATE "C"' if postgres else ""
    return [statement.format(serial=serial, blob=blob, bytewise=bytewise)
            for statement in _MIGRATIONS[version] + _DIALECT_MIGRATIONS.get((version, postgres), [])]
