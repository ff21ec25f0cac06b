"""A label's files in one file an application ships with it (``promptdeck bundle``, docs/application.md#bundles).

A bundle holds every file of a label at one position (its prompts, the parts they read: partials, material
files, composed prompts, and its skills' files) with what says where it came from: the source it stands for
(a store URL without its password, or the URL of a server), the label, the label's position and each file's
version. Each file carries its SHA-256, and the bundle one digest over all of that (``_manifest``); with a key
(``--key``), an Ed25519 signature over the digest as well.

Ed25519 through ``cryptography`` rather than an HMAC: the application checking a bundle holds only the public
key, so a leaked application cannot make bundles its fellows would take; ``cryptography`` is already what
PyJWT[crypto] brings (the ``oauth`` extra), and is imported only when a key is given.

Made with a principal (``promptdeck bundle --token``), a bundle holds only what that principal may see: each
file is kept or left out by ``visible``, which decides by the one access rule (``prompts.access.may_see``) on
the scopes the file itself carries (``files.library.file_scopes``: a prompt file's front matter; a skill's
files, its ``SKILL.md``'s; a prompt's tests file, its prompt's), as the catalog and the read gate do. A
visible prompt may read only parts everyone who sees it may see (``access.covers``), so nothing it renders
is cut. Files without scopes of their own
(partials, material) are everyone's by that rule, but one that only hidden prompts pull in (by the
composition graph, ``prompts.graph``, and the files their role lines send) is left out too, unless a prompt
the principal sees may name files at render time (a target named by an expression, a ``path`` argument), as
over MCP it could then reach any of them (``_hidden_parts``). The bundle records the principal it was cut to
(``Bundle.cut``).

Reading (``read``) trusts nothing in the file: one regular file, opened without following a link, at most
``MAX_BUNDLE_BYTES``; strict decoding (an unknown field is refused); every path a library path
(``model.is_safe_path``), every file within the store's limit and matching its digest, the whole matching the
bundle's digest and, when a key is given, its signature; and the source and label the caller expects. Any of
these failing is one ``BundleError`` naming the file and what is wrong.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from ...prompts.access import may_see
from ...protocol.errors import LibraryError
from ..files.library import file_scopes
from ..files.paths import is_prompt_path, skill_folder_of
from ..files.tests import sidecar_of
from .model import is_safe_path
from .private import replace_whole
from .reads import Reads
from .schema import MAX_FILE_BYTES

FORMAT = "promptdeck-bundle/1"
#: The largest bundle read (and written): a library's worth of files, not a disk's.
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
#: The most files a bundle may hold.
MAX_FILES = 200_000


class BundleError(LibraryError):
    """A bundle that cannot be made, or is refused: tampered, foreign, truncated, too large."""


class Cut(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The principal a bundle was cut to: only what it may see is in the bundle."""

    principal: str
    scopes: list[str]


class File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    path: str
    sha256: str
    data: bytes  # base64 in the JSON


class Bundle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A bundle as its file holds it."""

    format: str
    source: str
    label: str
    #: the label's position in the store (None: made from a folder)
    position: int | None
    #: each file's version at that position (empty: made from a folder)
    versions: dict[str, int]
    made: float
    cut: Cut | None
    files: list[File]
    digest: str
    signature: str | None = None

    def contents(self) -> dict[str, bytes]:
        return {file.path: file.data for file in self.files}


def _manifest(source: str, label: str, position: int | None, versions: Mapping[str, int], made: float,
              cut: Cut | None, files: list[tuple[str, str]]) -> str:
    """The SHA-256 of everything a bundle says, each file by its digest: what a signature covers."""
    said = {"format": FORMAT, "source": source, "label": label, "position": position,
            "versions": dict(sorted(versions.items())), "made": made,
            "cut": None if cut is None else {"principal": cut.principal, "scopes": sorted(cut.scopes)},
            "files": sorted(files)}
    return hashlib.sha256(json.dumps(said, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def visible(files: Mapping[str, bytes], held: frozenset[str] | None) -> dict[str, bytes]:
    """The files of ``files`` a principal holding ``held`` may see (None: trusted, all of them), by the access
    rule on each file's own scopes; a file of a skill by its ``SKILL.md``'s. A file whose scopes cannot be read
    is left out, as the read gate refuses it."""
    out: dict[str, bytes] = {}
    # A prompt's tests beside it (``NAME.tests.yaml``) are its own, seen as it is.
    beside = {sidecar_of(path): path for path in files if is_prompt_path(path)}
    for path, data in files.items():
        skill = skill_folder_of(path)
        owner = f"{skill[0]}{skill[1]}/SKILL.md" if skill is not None else beside.get(path)
        if owner is not None and owner in files:
            scopes = file_scopes(owner, files[owner])
        else:
            scopes = file_scopes(path, data)
        if scopes is not None and may_see(held, scopes):
            out[path] = data
    if held is not None and len(out) < len(files):
        for path in _hidden_parts(files, held):
            out.pop(path, None)
    return out


def _hidden_parts(files: Mapping[str, bytes], held: frozenset[str]) -> set[str]:
    """The files that only prompts hidden from ``held`` pull in or send, when no prompt it sees may name a file
    at render time: the library compiled in a private folder, and its composition graph read."""
    from ...prompts.graph import Graph
    from ..files.source import FileSource
    from .pull import apply, plan

    with tempfile.TemporaryDirectory(prefix="promptdeck-bundle-") as folder:
        apply(folder, plan(folder, dict(files), {}))
        source = FileSource(folder, skills=False)
        source.load(compile_all=True)
        prompts = source.prompts()
        graph = Graph(prompts)
        needed: set[str] = set()
        hidden: set[str] = set()
        for prompt in prompts:
            parsed = prompt.parsed()
            reach = parsed.reach
            reached = set(graph.parts(prompt.name)[0]) | (set(reach.files) if reach is not None else set())
            if not may_see(held, prompt.scopes):
                hidden |= reached
            elif parsed.uses.dynamic or (reach is not None and reach.paths):
                return set()  # it may name any file at render time: every file of no scopes is its reader's
            else:
                needed |= reached
    return hidden - needed


def label_files(reads: Reads, label: str) -> tuple[int, dict[str, int], dict[str, bytes]]:
    """``label``'s position, each file's version there, and the files' bytes; ``BundleError`` when a file
    cannot be bundled (too large, or not a library path)."""
    position = reads.require_position(label)
    files: dict[str, bytes] = {}
    while page := reads.contents(position, after=max(files, default=""), limit=1000):
        files.update((path, data) for path, _, data in page)
    versions = reads.versions_at(position)
    unread = sorted(set(versions) - set(files))
    if unread:
        raise BundleError(f"the store's {unread[0]!r} of label {label} cannot be bundled (not a library path, or "
                          "larger than a library file may be)")
    return position, versions, files


def make(files: Mapping[str, bytes], *, source: str, label: str, position: int | None = None,
         versions: Mapping[str, int] | None = None, cut: tuple[str, frozenset[str]] | None = None,
         key: bytes | None = None) -> bytes:
    """The bytes of a bundle of ``files``. ``cut``: (principal, scopes) it is made for, and only what those
    scopes may see is kept (``visible``). ``key``: a PEM Ed25519 private key to sign it with."""
    cut_to = None if cut is None else Cut(cut[0], sorted(cut[1]))
    kept = visible(files, None if cut is None else cut[1])
    if len(kept) > MAX_FILES:
        raise BundleError(f"a bundle holds at most {MAX_FILES} files; label {label} has {len(kept)}")
    entries = [File(path, hashlib.sha256(data).hexdigest(), data) for path, data in sorted(kept.items())]
    held_versions = {path: version for path, version in (versions or {}).items() if path in kept}
    made = round(time.time(), 3)
    digest = _manifest(source, label, position, held_versions, made, cut_to, [(f.path, f.sha256) for f in entries])
    signature = _signature(digest, key)
    data = msgspec.json.encode(Bundle(FORMAT, source, label, position, held_versions, made, cut_to, entries, digest,
                                      signature))
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleError(f"the bundle of label {label} would take {len(data)} bytes; at most {MAX_BUNDLE_BYTES}")
    return data


def save(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a bundle whole: a reader sees the old file or the new one, never half of one."""
    replace_whole(path, data, ".promptdeck-bundle.")


def read(path: str | os.PathLike[str], *, source: str, label: str, key: bytes | None = None,
         max_bytes: int = MAX_BUNDLE_BYTES) -> Bundle:
    """The bundle in the file ``path``, checked whole (module docstring) against the ``source`` and ``label`` it
    must stand for and, with ``key`` (a PEM Ed25519 public key), its signature. ``BundleError`` otherwise."""
    bundle = checked(_read_bounded(path, max_bytes), str(path), key)
    if (bundle.source, bundle.label) != (source, label):
        raise BundleError(f"bundle {path} is of label {bundle.label} of {bundle.source}, not of label {label} of "
                          f"{source}")
    return bundle


def checked(raw: bytes, path: str, key: bytes | None = None) -> Bundle:
    """The bundle in ``raw`` (read from ``path``, as errors name it), every file checked against its digest and
    the whole against the bundle's, and its signature with ``key``; ``BundleError`` otherwise."""
    try:
        bundle = msgspec.json.decode(raw, type=Bundle)
    except msgspec.DecodeError as exc:
        truncated = "truncated" in str(exc).lower() or "end of" in str(exc).lower()
        raise BundleError(f"bundle {path}: {'truncated' if truncated else 'not a bundle'} ({exc})") from None
    if bundle.format != FORMAT:
        raise BundleError(f"bundle {path}: format {bundle.format!r}, not {FORMAT!r}")
    if len(bundle.files) > MAX_FILES:
        raise BundleError(f"bundle {path}: {len(bundle.files)} files, more than {MAX_FILES}")
    seen: set[str] = set()
    for file in bundle.files:
        if not is_safe_path(file.path) or file.path in seen:
            raise BundleError(f"bundle {path}: {file.path!r} is not a library path, or is there twice")
        seen.add(file.path)
        if len(file.data) > MAX_FILE_BYTES:
            raise BundleError(f"bundle {path}: {file.path} is larger than a library file may be")
        if hashlib.sha256(file.data).hexdigest() != file.sha256:
            raise BundleError(f"bundle {path}: {file.path} does not match its digest (tampered)")
    digest = _manifest(bundle.source, bundle.label, bundle.position, bundle.versions, bundle.made, bundle.cut,
                       [(f.path, f.sha256) for f in bundle.files])
    if digest != bundle.digest:
        raise BundleError(f"bundle {path}: its contents do not match its digest (tampered)")
    if key is not None:
        _verify(path, bundle, key)
    return bundle


def restamp(bundle: Bundle, *, source: str, key: bytes | None = None) -> bytes:
    """The bytes of ``bundle`` (checked) standing for ``source`` instead, its digest made again and, with ``key``,
    signed: a server's bundle (``/api/store/bundle``) named for the URL its application opens."""
    digest = _manifest(source, bundle.label, bundle.position, bundle.versions, bundle.made, bundle.cut,
                       [(f.path, f.sha256) for f in bundle.files])
    signature = _signature(digest, key)
    return msgspec.json.encode(msgspec.structs.replace(bundle, source=source, digest=digest, signature=signature))


def _read_bounded(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, opened without following a link, refused above ``max_bytes``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise BundleError(f"bundle {path}: cannot be opened ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as opened:
        status = os.fstat(opened.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise BundleError(f"bundle {path}: not a regular file")
        if status.st_size > max_bytes:
            raise BundleError(f"bundle {path}: {status.st_size} bytes, more than the {max_bytes} a bundle may take")
        raw = opened.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise BundleError(f"bundle {path}: more than the {max_bytes} bytes a bundle may take")
    return raw


def _verify(path: str, bundle: Bundle, key: bytes) -> None:
    public = _public_key(key)
    from cryptography.exceptions import InvalidSignature

    if bundle.signature is None:
        raise BundleError(f"bundle {path}: not signed, and a key to check its signature was given")
    try:
        public.verify(base64.b64decode(bundle.signature, validate=True), bundle.digest.encode())
    except (InvalidSignature, ValueError):
        raise BundleError(f"bundle {path}: its signature does not match the key given (tampered, or signed by "
                          "another key)") from None


def _signature(digest: str, key: bytes | None) -> str | None:
    """The Ed25519 signature of ``digest`` with the PEM private ``key`` (base64), or None without a key."""
    return None if key is None else base64.b64encode(_private_key(key).sign(digest.encode())).decode()


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        from ...extras import needs

        raise BundleError(needs("signing or checking a bundle", "oauth")) from None
    return serialization


def _private_key(pem: bytes) -> Any:
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise BundleError(f"the signing key is not a PEM private key without a password ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BundleError("the signing key is not an Ed25519 key")
    return key


def _public_key(pem: bytes) -> Any:
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise BundleError(f"the bundle key is not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BundleError("the bundle key is not an Ed25519 public key")
    return key


__all__ = ["Bundle", "BundleError", "Cut", "label_files", "make", "read", "save", "visible"]
