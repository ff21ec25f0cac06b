"""``promptdeck bundle`` (cli/bundle.py) as a process: from a store (SQLite and PostgreSQL) and from a folder, signed
with a key, cut to a token's principal, and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from promptdeck import Prompts
from promptdeck.sources.store import bundle
from promptdeck.sources.store.urls import shown_url
from tests.support.cli import library, pd
from tests.support.http_server import free_port, http_server
from tests.support.libraries import EXAMPLE_ARGS


def signing_key(tmp_path: Path) -> tuple[Path, bytes]:
    """A new Ed25519 key: the file of its private half, and its public half (PEM)."""
    key = Ed25519PrivateKey.generate()
    private = tmp_path / "key.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return private, key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)


def test_a_stores_label_bundled_holds_its_files_and_position(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    out = tmp_path / "prompts.bundle"
    done = pd("bundle", "--store", store_url, "--label", "production", "-o", str(out))
    made = bundle.read(out, source=shown_url(store_url), label="production")
    assert made.position is not None and f"bundled label production (position {made.position})" in done.stdout
    assert "skills/changelog/SKILL.md" in made.contents() and "_material/service.py" in made.contents()
    assert set(made.versions) == set(made.contents()) and made.cut is None


def test_a_folder_bundled_for_a_store_and_signed(tmp_path: Path) -> None:
    private, public = signing_key(tmp_path)
    out = tmp_path / "prompts.bundle"
    store = f"sqlite:///{tmp_path / 'later.db'}"
    done = pd("bundle", str(library(tmp_path)), "--for", store, "--label", "production", "-o", str(out), "--key",
              str(private))
    assert done.stdout.rstrip().endswith(", signed")
    made = bundle.read(out, source=store, label="production", key=public)
    assert made.position is None and made.versions == {}
    # The store does not exist yet: the application starts from the bundle, renders as the folder does.
    with Prompts(store, bundle=str(out), bundle_key=public.decode(), watch=False) as prompts:
        assert prompts.names() == sorted(EXAMPLE_ARGS)
        assert prompts.render("summarize", text="x").stale


def test_a_token_cuts_the_bundle_to_its_principal(tmp_path: Path) -> None:
    folder = library(tmp_path)
    (folder / "payroll.md").write_text("---\ndescription: HR\nscopes: [prompts:hr]\n---\nPayroll.\n")
    tokens = tmp_path / "tokens"
    tokens.write_text("bob:bob-token-0123456789 prompts:it\n")
    out = tmp_path / "b"
    done = pd("bundle", str(folder), "--for", "http://example.test/mcp", "--label", "production", "-o", str(out),
              "--token", "bob-token-0123456789", "--token-file", str(tokens))
    assert done.stdout.rstrip().endswith("cut to bob")
    made = bundle.read(out, source="http://example.test/mcp", label="production")
    assert "payroll.md" not in made.contents() and "summarize.md" in made.contents()
    assert made.cut is not None and made.cut.scopes == ["prompts:it"]


def test_a_server_bundles_the_label_it_serves_cut_to_the_token_it_is_asked_with(store_url: str,
                                                                                tmp_path: Path) -> None:
    folder = library(tmp_path)
    (folder / "payroll.md").write_text("---\ndescription: HR\nscopes: [prompts:hr]\n---\nPayroll.\n")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    tokens = tmp_path / "tokens"
    tokens.write_text("bob:bob-token-0123456789 prompts:it\n")
    private, public = signing_key(tmp_path)
    out = tmp_path / "prompts.bundle"
    port = free_port()
    with http_server("", "--store", store_url, "--token-file", str(tokens), port=port) as url:
        done = pd("bundle", "--server", url, "--token", "bob-token-0123456789", "-o", str(out), "--key", str(private))
        with Prompts(url, token="bob-token-0123456789") as prompts:
            listed = prompts.names()
        refused = pd("bundle", "--server", url, "--token", "bob-token-0123456789", "--label", "staging", "-o",
                     str(tmp_path / "other"), check=False)
        unknown = pd("bundle", "--server", url, "--token", "nobody-0123456789", "-o", str(tmp_path / "other"),
                     check=False)
    assert "bundled label production (position " in done.stdout and done.stdout.rstrip().endswith("signed, cut to bob")
    made = bundle.read(out, source=url, label="production", key=public)
    assert made.cut is not None and (made.cut.principal, made.cut.scopes) == ("bob", ["prompts:it"])
    assert "payroll.md" not in made.contents() and made.position is not None and made.versions
    assert refused.returncode == 2 and "serves label production, not staging" in refused.stderr
    assert unknown.returncode == 1 and "answered 401" in unknown.stderr
    assert not (tmp_path / "other").exists()
    # The server gone, the application starts from the bundle the server made.
    with Prompts(url, bundle=str(out), bundle_key=public.decode(), token="bob-token-0123456789", timeout=2,
                 retries=0) as prompts:
        rendered = prompts.render("summarize", text="x")
        assert rendered.stale and rendered.source == str(out)
        assert prompts.names() == listed and "payroll" not in listed  # what bob lists over MCP


@pytest.mark.parametrize(("arguments", "says"), [
    ((), "give one of --store URL, --server URL or a FOLDER to bundle"),
    (("FOLDER", "--store", "sqlite:///x.db"), "give one of --store URL, --server URL or a FOLDER to bundle"),
    (("--store", "sqlite:///x.db", "--server", "http://127.0.0.1:1/mcp"), "give one of --store URL, --server URL"),
    (("--server", "http://127.0.0.1:1/mcp", "--for", "x"), "--server's bundle stands for --server's URL"),
    (("--server", "http://127.0.0.1:1/mcp", "--token-file", "TOKENS"), "the server looks --token up in its own"),
    (("--server", "ftp://127.0.0.1:1/mcp",), "is no http:// or https:// URL"),
    (("--server", "http://127.0.0.1:1/mcp",), "cannot reach http://127.0.0.1:1"),
    (("FOLDER",), "a bundle of a FOLDER needs --for URL"),
    (("FOLDER", "--for", "s", "--token", "t"), "--token needs the tokens to look it up in"),
    (("FOLDER", "--for", "s", "--token", "nobody-0123456789", "--token-file", "TOKENS"), "the token is not one of "),
    (("--store", "sqlite:///MISSING.db"), "no store at"),
    (("--store", "http://127.0.0.1:1/mcp"), "http://127.0.0.1:1/mcp is a server, not a store: bundle the label it "
                                            "serves with --server http://127.0.0.1:1/mcp"),
])
def test_what_bundle_refuses(tmp_path: Path, arguments: tuple[str, ...], says: str,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMPTDECK_TOKENS", raising=False)
    tokens = tmp_path / "tokens"
    tokens.write_text("bob:bob-token-0123456789\n")
    given = [a.replace("FOLDER", str(tmp_path)).replace("TOKENS", str(tokens)).replace("MISSING", str(tmp_path / "m"))
             for a in arguments]
    done = pd("bundle", *given, "--label", "production", "-o", str(tmp_path / "out"), check=False)
    assert done.returncode != 0 and says in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
