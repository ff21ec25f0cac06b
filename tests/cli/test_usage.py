"""``promptdeck usage`` (cli/usage.py): from a store as its administrator, and from a running server (a store's
or a folder's) as a token's principal (only the prompts it may read), as text and as JSON."""

from __future__ import annotations

import json
import time
from pathlib import Path

from promptdeck.prompts.usage import Key, hour_of
from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.usage import add
from tests.support.cli import pd
from tests.support.http_server import http_server
from tests.support.store_api import HR, READER, WRITER, make_store
from tests.support.usage import ALICE_AUTH, ALICE_TOKEN, BOB_AUTH, BOB_TOKEN, folder_server, render_as


def _counted(url: str) -> int:
    hour = hour_of(time.time())
    with Connection(url) as db:
        add(db, {Key("greet", hour, 1, "production", "", "billing"): 5,
                 Key("greet", hour, 2, "production", "rollout", "claude-code"): 2,
                 Key("salaries", hour, 1, "production", "", "hr-app"): 3,
                 Key("greet", hour - 90 * 86400, 1, "production", "", "old"): 7})
    return hour


def test_usage_from_the_store_as_text_and_json(tmp_path: Path, store_url: str) -> None:
    url = make_store(tmp_path, store_url)
    hour = _counted(url)
    text = pd("usage", "--store", url).stdout
    assert "greet: 7 renders since " in text and "salaries: 3 renders" in text, text
    assert "  version 1 production billing: 5" in text and "  version 2 production claude-code: 2" in text
    shown = json.loads(pd("usage", "greet", "--store", url, "--json", "--since", "7d").stdout)
    [greet] = shown["prompts"]
    assert (greet["prompt"], greet["renders"], greet["last"]) == ("greet", 7, hour)
    old = json.loads(pd("usage", "--store", url, "--json", "--since", "100d").stdout)
    assert {e["prompt"]: e["renders"] for e in old["prompts"]} == {"greet": 14, "salaries": 3}
    refused = pd("usage", "--store", url, "--since", "soon", check=False)
    assert refused.returncode == 2 and "since 'soon'" in refused.stderr
    both = pd("usage", "--store", url, "--server", "http://x", check=False)
    assert both.returncode == 2 and "one of them" in both.stderr


def test_usage_from_a_server_shows_only_what_the_token_may_read(tmp_path: Path) -> None:
    url = make_store(tmp_path)
    _counted(url)
    tokens = tmp_path / "tokens"
    tokens.write_text("\n".join((WRITER, READER, HR)) + "\n")
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens)) as endpoint:
        bob = pd("usage", "--server", endpoint, "--token", "reader-token-0123456789", "--json").stdout
        assert [e["prompt"] for e in json.loads(bob)["prompts"]] == ["greet"]
        carol = pd("usage", "--server", endpoint, "--token", "hr-token-0123456789").stdout
        assert "salaries: 3 renders" in carol
        hidden = pd("usage", "salaries", "--server", endpoint, "--token", "reader-token-0123456789", check=False)
        assert hidden.returncode == 1 and "answered 404" in hidden.stderr
        nobody = pd("usage", "--server", endpoint, check=False)
        assert nobody.returncode == 1 and "answered 401" in nobody.stderr


def test_usage_from_a_folder_server_is_what_it_counted_in_memory(tmp_path: Path) -> None:
    """``--server`` reads ``/api/usage``, so a folder-served library's counts are read the same way."""
    with folder_server(tmp_path) as base:
        for client in ("billing", "billing", "claude-code"):
            assert "result" in render_as(base, BOB_AUTH, "greet", client, {"who": "x"})
        render_as(base, ALICE_AUTH, "payroll", "hr-app")
        bob = json.loads(pd("usage", "--server", base, "--token", BOB_TOKEN, "--json").stdout)
        assert [(e["prompt"], e["renders"]) for e in bob["prompts"]] == [("greet", 3)]
        assert sorted((h["client"], h["renders"]) for h in bob["prompts"][0]["hours"]) == [("billing", 2),
                                                                                          ("claude-code", 1)]
        alice = pd("usage", "--server", f"{base}/mcp", "--token", ALICE_TOKEN).stdout
        assert "payroll: 1 render" in alice and "greet: 3 renders" in alice
        hidden = pd("usage", "payroll", "--server", base, "--token", BOB_TOKEN, check=False)
        assert hidden.returncode == 1 and "answered 404" in hidden.stderr and "payroll" not in hidden.stdout
