"""``promptdeck bundle``: a label's files in one file, for an application to start from (docs/application.md#bundles).

The bundle's format, its checks and the scope cut are ``sources.store.bundle``'s; this module reads the label
(from a store, or from the folder it is published from), finds the principal a ``--token`` names, and writes.
"""

from __future__ import annotations

import click
import msgspec

from ..protocol.errors import PromptdeckError
from .common import fail, open_store, valid_label
from .terminal import echo, shown


@click.command("bundle")
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@click.option("--store", "url", default=None, metavar="URL", help="The store to read LABEL from (sqlite:///path.db, "
              "postgresql://…); without it, FOLDER is read as `publish` reads it.")
@click.option("--server", default=None, metavar="URL", help="A running `serve --store --http` to fetch the label it "
              "serves from (its /api/store/bundle), cut by the server to what --token's principal may see; the "
              "bundle stands for URL, the MCP endpoint the application opens.")
@click.option("--label", default=None, metavar="LABEL", help="The label the bundle holds (with --server: the one "
              "it serves, checked if given).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="The bundle file to write (replaced whole).")
@click.option("--for", "for_source", default=None, metavar="URL", help="The source the application opens, when "
              "it is not --store's URL: the MCP server serving the label, or (with FOLDER) the store it is "
              "published to. A bundle is taken only for the source and label it names.")
@click.option("--token", default=None, help="Cut the bundle to what this token's principal may see, as it would "
              "over MCP (looked up in --token-file; with --server, sent to it as the bearer token, default "
              "$PROMPTDECK_TOKEN).")
@click.option("--token-file", "tokens", default=None, type=click.Path(dir_okay=False),
              help="The tokens `serve --token-file` reads (default: $PROMPTDECK_TOKENS).")
@click.option("--key", default=None, type=click.Path(dir_okay=False, exists=True), metavar="PEM",
              help="An Ed25519 private key (PEM) to sign the bundle with.")
def bundle(folder: str | None, url: str | None, server: str | None, label: str | None, output: str,
           for_source: str | None, token: str | None, tokens: str | None, key: str | None) -> None:
    """Write LABEL's prompts, their parts and skills into one file an application starts from.

    From --store, the label's files at its position, with each file's version; from FOLDER, the files
    `publish` would send (no position). With --token, only what that principal may see, and the bundle
    says so. With --key, signed: `Prompts(source, bundle=FILE, bundle_key=PUBLIC_PEM)` refuses a bundle
    whose signature does not match.
    """
    from ..sources.store import bundle as bundles

    if sum(given is not None for given in (folder, url, server)) != 1:
        fail("give one of --store URL, --server URL or a FOLDER to bundle", 2)
    if server is not None:
        if for_source is not None:
            fail("--server's bundle stands for --server's URL: leave --for out", 2)
        _from_server(server, label, output, token, tokens, key)
        return
    if label is None:
        fail("give the --label to bundle", 2)
    valid_label(label)
    if url is not None and url.startswith(("http://", "https://")):
        # MCP gives a client rendered prompts, never their files: a server's library cannot be read back from it.
        fail(f"{url} is a server, not a store: bundle the label it serves with --server {url}", 2)
    if folder is not None and for_source is None:
        fail("a bundle of a FOLDER needs --for URL: the store or server the application opens", 2)
    cut = _principal(token, tokens)
    signing = _key(key)
    try:
        if url is not None:
            with open_store(url) as opened:
                position, versions, files = bundles.label_files(opened.reads, label)
            source = for_source or url
        else:
            from ..sources.files.paths import folder_prefix
            from ..sources.store.folder import read_library

            assert folder is not None and for_source is not None
            position, versions = None, {}
            files = read_library(folder, folder_prefix(folder, None))
            source = for_source
        data = bundles.make(files, source=_shown_source(source), label=label, position=position,
                            versions=versions, cut=cut, key=signing)
        bundles.save(output, data)
    except PromptdeckError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    made = bundles.read(output, source=_shown_source(source), label=label)
    at = f" (position {position})" if position is not None else ""
    echo(f"bundled label {label}{at} of {shown(made.source)}: {len(made.files)} files, {len(data)} bytes, in "
         f"{shown(output)}" + (", signed" if signing is not None else "")
         + (f", cut to {shown(cut[0])}" if cut is not None else ""))


class _Answer(msgspec.Struct):
    """``/api/store/bundle``'s answer: the bundle, left as the server wrote it for ``bundle.checked``."""

    bundle: msgspec.Raw


def _from_server(server: str, label: str | None, output: str, token: str | None, tokens: str | None,
                 key: str | None) -> None:
    """The label ``server`` serves, as its ``/api/store/bundle`` cuts it for ``token``, checked file by file,
    stamped with ``server`` as its source, signed with ``key``, and written."""
    import os

    from ..sources.store import bundle as bundles
    from ..sources.store.model import is_label
    from .server_api import base_of, get_bytes

    if tokens is not None:
        fail("--token-file is for a store or a FOLDER: the server looks --token up in its own", 2)
    if label is not None:
        valid_label(label)
    token = token if token is not None else os.environ.get("PROMPTDECK_TOKEN")
    signing = _key(key)
    body = get_bytes(server, "/api/store/bundle", {}, token, bundles.MAX_BUNDLE_BYTES + 1024)
    try:
        raw = msgspec.json.decode(body, type=_Answer).bundle
    except msgspec.DecodeError:
        fail(f"{base_of(server)} answered /api/store/bundle without a bundle: is it a promptdeck serve --store?")
    try:
        made = bundles.checked(bytes(raw), f"from {base_of(server)}")
        if not is_label(made.label):  # what the server says is printed and kept: a label, not a line of its own
            fail(f"{base_of(server)} answered a bundle of no valid label ({shown(made.label)})")
        if label is not None and made.label != label:
            fail(f"{base_of(server)} serves label {made.label}, not {label}", 2)
        data = bundles.restamp(made, source=server, key=signing)
        bundles.save(output, data)
    except PromptdeckError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    at = f" (position {made.position})" if made.position is not None else ""
    cut = f", cut to {shown(made.cut.principal)}" if made.cut is not None else ""
    echo(f"bundled label {made.label}{at} of {shown(server)}: {len(made.files)} files, {len(data)} bytes, in "
         f"{shown(output)}" + (", signed" if signing is not None else "") + cut)


def _shown_source(source: str) -> str:
    """A store URL as bundles name it (``urls.shown_url``: no password); a server's URL as it is."""
    from ..application.local import is_store_url
    from ..sources.store.urls import shown_url

    return shown_url(source) if is_store_url(source) else source


def _principal(token: str | None, tokens: str | None) -> tuple[str, frozenset[str]] | None:
    if token is None:
        if tokens is not None:
            fail("--token-file names who may ask; give the --token that asks too", 2)
        return None
    from ..server.security.tokens import BearerTokens

    try:
        known = BearerTokens.load(tokens)
    except PromptdeckError as exc:
        fail(str(exc))
    if known is None:
        fail("--token needs the tokens to look it up in: --token-file FILE, or $PROMPTDECK_TOKENS", 2)
    principal = known.principal(f"Bearer {token}")
    if principal is None:
        fail(f"the token is not one of those in {tokens or '$PROMPTDECK_TOKENS'}", 2)
    return principal.name, principal.scopes or frozenset()


def _key(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as opened:
            return opened.read(64 * 1024)
    except OSError as exc:
        fail(f"cannot read the key {path}: {exc.strerror}")
