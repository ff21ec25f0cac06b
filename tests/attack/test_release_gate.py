"""The release gate (``Governance.release``) under attack: every way a label's served text can change is tried on a
label protected with ``--require-tests`` at a version whose tests fail (and by a writer without the label's scope),
on SQLite and on a real PostgreSQL cluster; each is refused and nothing changes. A static check lists the store
methods that reach the gate and finds every write of a position or a rollout in the source, so a new path that
goes round the gate fails here. The store API's rollout (the path finding 4 of issue 38 found open) is tried
over HTTP against a real ``promptdeck serve --http``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from promptdeck.protocol.errors import HttpError
from promptdeck.server.web.store_governance import guard as principal_guard
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import TestsFailed
from promptdeck.sources.store.promotion import promote
from tests.support.http_server import http_server
from tests.support.release_paths import STORE, calls, functions, public_paths_to_the_gate
from tests.support.store_api import cli, get, post
from tests.support.stores import publish_texts

TESTED = ("---\narguments:\n  - name: who\ntests:\n  - description: greets by name\n    vars: {{who: Ada}}\n"
          "    assert:\n      - {{type: contains, value: {want} Ada}}\n---\n{text} {{{{ who }}}}!\n")
GOOD_GREET, BAD_GREET = TESTED.format(want="Hello", text="Hello"), TESTED.format(want="Hello", text="Hi")
GOOD_BYE, BAD_BYE = TESTED.format(want="Bye", text="Bye"), TESTED.format(want="Bye", text="Ciao")


def publish(store: Store, label: str | None, **files: str) -> None:
    """What ``promptdeck publish --skip-tests`` records: the prompts ``NAME.md`` with their listings."""
    publish_texts(store, label, {f"{name}.md": text for name, text in files.items()})


def prepared(url: str) -> None:
    """production: greet 1 (passes) and bye 1 (passes), reached from a first position whose greet (version 2)
    fails; bye 2 (fails) rolling out at 10 % since before the label required tests; staging holding greet 2.
    Then production is protected."""
    with Store(url, create=True) as store:
        publish(store, None, greet=GOOD_GREET, bye=GOOD_BYE)                # greet 1, bye 1
        publish(store, "production", greet=BAD_GREET, bye=GOOD_BYE)         # greet 2 fails: position 1
        store.label("greet", 1, "production", author="ana")                 # position 2: all pass
        publish(store, None, greet=GOOD_GREET, bye=BAD_BYE)                 # bye 2 fails
        store.governance.start_rollout("production", "bye", 2, 1000, author="ana")
        store.label("greet", 2, "staging", author="ana")                    # staging: greet 2 (fails) alone
        store.governance.protect("production", "release", require_tests=True, author="root")


#: Every public store method that can change what a label serves, each trying to serve a failing version.
PATHS: dict[str, Callable[[Store, Any], object]] = {
    "publish": lambda store, g: publish(store, "production", greet=BAD_GREET, bye=GOOD_BYE),
    "publish_file": lambda store, g: store.publish_file("greet.md", BAD_GREET.replace("Hi", "Hey").encode(), None,
                                                        author="w", message="", label="production", guard=g),
    "label": lambda store, g: store.label("greet", 2, "production", author="w", guard=g),
    "rollback": lambda store, g: store.rollback("production", author="w", guard=g),
    "start_rollout": lambda store, g: store.governance.start_rollout("production", "greet", 2, 10_000, author="w",
                                                                     guard=g),
    "start_rollout (share)": lambda store, g: store.governance.start_rollout("production", "bye", 2, 10_000, author="w",
                                                                             guard=g),
    "promote": lambda store, g: promote(store.governance, "staging", "production", author="w", guard=g),
    "promote (named)": lambda store, g: promote(store.governance, "staging", "production", ["greet"], author="w",
                                                guard=g),
    "end_rollout (promote)": lambda store, g: store.governance.end_rollout("production", "bye", promote=True,
                                                                           author="w", guard=g),
    "merge": lambda store, g: store.proposals.merge(store.proposals.open("production", {"greet.md": 2}, author="w").id,
                                                    author="w", guard=g),
}


def state(store: Store) -> tuple[Any, ...]:
    return (store.reads.position_id("production"), store.governance.live_rollouts("production"),
            store.db.rows("SELECT count(*) FROM rollout_events"))


def test_every_path_that_changes_what_a_label_serves_refuses_failing_tests(store_url: str) -> None:
    prepared(store_url)
    with Store(store_url) as store:
        before = state(store)
        for name, path in PATHS.items():
            with pytest.raises(TestsFailed) as refused:
                path(store, None)  # the administrator's path: no guard, the tests all the same
            assert refused.value.label == "production" and "greets by name" in str(refused.value.failures), name
            assert state(store) == before, name
        # What serves only passing versions passes: an abort (the label's own version) and a passing pointing.
        store.governance.end_rollout("production", "bye", promote=False, author="w")
        assert store.governance.live_rollouts("production") == []
        publish(store, None, greet=GOOD_GREET.replace("Hello {{", "Hello, {{").replace("Hello Ada", "Hello, Ada"),
                bye=GOOD_BYE)
        store.label("greet", 3, "production", author="w")


def test_every_path_holds_the_writer_to_the_labels_scope(store_url: str) -> None:
    prepared(store_url)
    writer = principal_guard(frozenset({"store:write"}))
    guarded: dict[str, Callable[[Store, Any], object]] = dict(PATHS)
    guarded["end_rollout (abort)"] = lambda store, g: store.governance.end_rollout("production", "bye", promote=False,
                                                                                   author="w", guard=g)
    with Store(store_url) as store:
        before = state(store)
        for name, path in guarded.items():
            if name == "publish":
                continue  # a whole library's publish is the command line's, which holds no principal
            with pytest.raises(HttpError) as refused:
                path(store, writer)
            assert refused.value.status == 403 and "needs the scope release" in str(refused.value), name
            assert state(store) == before, name


# -- the paths, listed from the source ----------------------------------------------------------------------

#: Where a position or a rollout is written: only the gate's own writers (``release`` calls them).
WRITES = ("INSERT INTO positions", "INSERT INTO position_files", "INTO rollouts", "UPDATE rollouts",
          "INTO rollout_events", "UPDATE rollout_events")
WRITERS = {"release", "_write_position", "_write_rollout", "_end", "_rollout_event"}


def test_nothing_but_the_gate_writes_a_position_or_a_rollout() -> None:
    """Anywhere in promptdeck (the store, the store API, the commands): a new path that writes a position or a
    rollout itself, or calls the gate's own writers, fails here."""
    every = functions(STORE.parents[1])
    assert len(every) > 1000  # the whole package was read
    for module, function in every:
        text = " ".join(node.value for node in ast.walk(function)
                        if isinstance(node, ast.Constant) and isinstance(node.value, str))
        writes = [w for w in WRITES if w in text]
        # reads.copy_listing writes a position's listing to a local copy (another database), never the store's.
        if writes and (module, function.name) != ("sources/store/reads.py", "copy_listing"):
            assert function.name in WRITERS, f"{module}:{function.name} writes {writes[0]!r} round the release gate"
    for module, function in every:
        if function.name not in WRITERS:
            reached = calls(function) & (WRITERS - {"release"})
            assert not reached, f"{module}:{function.name} calls {sorted(reached)} round the release gate"


def test_the_paths_listed_here_are_every_store_method_that_reaches_the_gate() -> None:
    assert public_paths_to_the_gate() == {name.split(" ")[0] for name in PATHS}, "a new path to the gate: add it"


# -- over HTTP -----------------------------------------------------------------------------------------------

TOKENS = "rel:release-token-0123456789 store:write release\nwes:writer-token-0123456789 store:write\n"
RELEASER = {"authorization": "Bearer release-token-0123456789"}
WRITER = {"authorization": "Bearer writer-token-0123456789"}


def test_the_store_apis_rollout_of_a_failing_version_is_refused(tmp_path: Path) -> None:
    """Finding 4: a 409 for the pointing, and a 200 for ``rollout … percent 100`` that served it to everyone."""
    url, folder = f"sqlite:///{tmp_path}/store.db", tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text(GOOD_GREET)
    cli("publish", str(folder), "--store", url, "--label", "production")
    (folder / "greet.md").write_text(BAD_GREET)
    cli("publish", str(folder), "--store", url, "--skip-tests")
    cli("protect", "production", "--scope", "release", "--require-tests", "--store", url)
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tokens)) as endpoint:
        base = endpoint.removesuffix("/mcp")
        # The overview says who may move the label: the page offers its moves only then.
        assert [label["move"] for label in get(base, "", RELEASER).json()["labels"]] == [True]
        assert [label["move"] for label in get(base, "", WRITER).json()["labels"]] == [False]
        pointed = post(base, "/label", RELEASER, {"prompt": "greet", "version": 2, "label": "production"})
        rolled = post(base, "/rollout", RELEASER, {"label": "production", "prompt": "greet", "version": 2,
                                                   "percent": 100})
        for refused in (pointed, rolled):
            assert refused.status_code == 409, refused.text
            assert "requires passing tests" in refused.json()["error"]
            assert refused.json()["failures"][0]["prompt"] == "greet"
    with Store(url) as store:
        assert store.governance.live_rollouts("production") == []
        assert store.db.rows("SELECT count(*) FROM rollouts") == [(0,)]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "rollout", "production", "greet@2", "--percent", "100",
                           "--store", url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "requires passing tests" in done.stderr, done.stderr
