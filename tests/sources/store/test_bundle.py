"""A bundle's format (sources/store/bundle.py): made and read back, the label's files of a real store (SQLite and
PostgreSQL), the scope cut by the access rule, the digest and the Ed25519 signature."""

from __future__ import annotations

import base64
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from promptdeck.sources.store import bundle
from promptdeck.sources.store.bundle import BundleError
from promptdeck.sources.store.database import Store
from tests.support.stores import publish_texts

#: A library with a part of each kind, a scoped prompt, a scoped skill and an unscoped one.
FILES = {
    "greet.md": "---\ndescription: Greets\n---\n{% include '_parts/hello.md' %} {{ read('_material/facts.txt') }}\n",
    "_parts/hello.md": "Hello",
    "_material/facts.txt": "facts",
    "payroll.md": "---\ndescription: HR\nscopes: [prompts:hr]\n---\nPayroll {% include '_parts/hr.md' %}\n",
    "_parts/hr.md": "---\nscopes: [prompts:hr]\n---\n",
    "skills/open/SKILL.md": "---\nname: open\ndescription: Open to all. Use always.\n---\nOpen.\n",
    "skills/open/notes.md": "open notes",
    "skills/hr/SKILL.md": "---\nname: hr\ndescription: HR only. Use for pay.\nscopes: [prompts:hr]\n---\nHR.\n",
    "skills/hr/salaries.md": "secret salaries",
    "payroll.tests.yaml": "- vars: {}\n  assert: [{type: contains, value: secret salary band}]\n",
    "greet.tests.yaml": "- vars: {}\n  assert: [{type: contains, value: Hello}]\n",
}


def pem_pair() -> tuple[bytes, bytes]:
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public


def encoded() -> dict[str, bytes]:
    return {path: text.encode() for path, text in FILES.items()}


def test_a_bundle_reads_back_what_it_was_made_of(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    bundle.save(path, bundle.make(encoded(), source="sqlite:///s.db", label="production", position=3,
                                   versions={"greet.md": 2, "gone.md": 1}))
    read = bundle.read(path, source="sqlite:///s.db", label="production")
    assert read.contents() == encoded() and read.position == 3 and read.cut is None
    assert read.versions == {"greet.md": 2}  # only the versions of files it holds
    assert read.signature is None


def test_the_cut_keeps_what_the_scopes_may_see_by_the_access_rule() -> None:
    everyone = bundle.visible(encoded(), frozenset())
    # _parts/hr.md has no scopes of its own, but only the hidden payroll.md pulls it in: left out too.
    assert sorted(everyone) == ["_material/facts.txt", "_parts/hello.md", "greet.md", "greet.tests.yaml",
                                "skills/open/SKILL.md", "skills/open/notes.md"]  # payroll's tests are payroll's
    assert bundle.visible(encoded(), frozenset({"prompts"})) == encoded()  # scopes nest on ':'
    assert bundle.visible(encoded(), None) == encoded()  # trusted
    unreadable = {"odd.md": b"---\nscopes: 3\n---\nx"}
    assert bundle.visible(unreadable, None) == {}  # scopes that cannot be read: left out, as the gate refuses it


def test_parts_only_hidden_prompts_use_stay_when_a_visible_prompt_may_name_any_file() -> None:
    """A visible prompt naming a partial by an expression could include _parts/hr.md over MCP: it is kept."""
    dynamic = {**encoded(), "pick.md": b"---\ndescription: Picks\narguments: [{name: part}]\n---\n"
                                       b"{% include part %}\n"}
    assert "_parts/hr.md" in bundle.visible(dynamic, frozenset())
    shared = {**encoded(), "greet.md": encoded()["greet.md"] + b"{% include '_parts/hr.md' %}\n"}
    assert "_parts/hr.md" in bundle.visible(shared, frozenset())  # a visible prompt pulls it in as well


def test_a_cut_bundle_says_whom_it_was_cut_to(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    bundle.save(path, bundle.make(encoded(), source="s", label="l", cut=("bob", frozenset({"prompts:it"}))))
    read = bundle.read(path, source="s", label="l")
    assert read.cut is not None and (read.cut.principal, read.cut.scopes) == ("bob", ["prompts:it"])
    assert "payroll.md" not in read.contents() and "skills/hr/salaries.md" not in read.contents()


def test_a_signed_bundle_is_checked_against_the_public_key(tmp_path: Path) -> None:
    private, public = pem_pair()
    path = tmp_path / "b.json"
    bundle.save(path, bundle.make(encoded(), source="s", label="l", key=private))
    assert bundle.read(path, source="s", label="l", key=public).signature is not None
    other = pem_pair()[1]
    with pytest.raises(BundleError, match=f"bundle {path}: its signature does not match the key given"):
        bundle.read(path, source="s", label="l", key=other)
    with pytest.raises(BundleError, match="not an Ed25519 public key|not a PEM public key"):
        bundle.read(path, source="s", label="l", key=b"nonsense")
    with pytest.raises(BundleError, match="the signing key is not a PEM private key"):
        bundle.make(encoded(), source="s", label="l", key=public)


def test_a_digest_covers_what_the_bundle_says_besides_the_files(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    bundle.save(path, bundle.make(encoded(), source="s", label="l", position=1, versions={"greet.md": 1}))
    raw = msgspec.json.decode(path.read_bytes())
    raw["versions"]["greet.md"] = 9  # a newer-looking version, files untouched
    path.write_bytes(msgspec.json.encode(raw))
    with pytest.raises(BundleError, match="its contents do not match its digest"):
        bundle.read(path, source="s", label="l")
    raw = msgspec.json.decode(bundle.make(encoded(), source="s", label="l"))
    raw["files"][0]["data"] = base64.b64encode(b"changed").decode()
    path.write_bytes(msgspec.json.encode(raw))
    with pytest.raises(BundleError, match=r"_material/facts.txt does not match its digest \(tampered\)"):
        bundle.read(path, source="s", label="l")


def test_a_labels_files_come_from_the_store_with_their_position_and_versions(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        publish_texts(store, "production", FILES)
        publish_texts(store, "production", {**FILES, "greet.md": FILES["greet.md"] + "again\n"})
        position, versions, files = bundle.label_files(store.reads, "production")
        assert position == store.reads.require_position("production")
    assert files == {**encoded(), "greet.md": (FILES["greet.md"] + "again\n").encode()}
    assert versions["greet.md"] == 2 and versions["_parts/hello.md"] == 1
