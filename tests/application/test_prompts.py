"""``Prompts`` itself (application/prompts.py): options that do not fit the source refused before anything is
opened, a token looked up in the server's token configuration, listings and their refusals, a store that is
away rendered from the fallback folder, and a closed ``Prompts`` saying so. (Rendering through each kind of
source is test_local.py's and test_remote.py's.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck import InvalidParams, LibraryError, Prompts
from promptdeck.application.rendered import PromptListing

GREET = "---\ndescription: Greets\narguments:\n  - {name: who, required: true}\nmodel: {name: m1}\n---\nHi {{ who }}\n"
SECRET = "---\nscopes: [hr]\n---\nPayroll\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    library = tmp_path / "lib"
    library.mkdir()
    (library / "greet.md").write_text(GREET)
    (library / "payroll.md").write_text(SECRET)
    return library


@pytest.mark.parametrize(("source", "options", "says"), [
    ("http://127.0.0.1:1/mcp", {"tokens": "t"}, "tokens= is for a folder or a store"),
    ("FOLDER", {"auth": object()}, "auth= is for an MCP server"),
    ("FOLDER", {"cache": "c"}, "cache= is for an MCP server"),
    ("FOLDER", {"fallback": "f"}, "fallback= is for a store or an MCP server; a folder is read from disk"),
    ("FOLDER", {"tokens": "t"}, "tokens= names who may ask; give the token= that asks too"),
])
def test_options_that_do_not_fit_the_source_are_refused(folder: Path, source: str, options: dict[str, object],
                                                        says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Prompts(str(folder) if source == "FOLDER" else source, watch=False, **options)  # type: ignore[arg-type]


def test_listings_names_and_an_unknown_name(folder: Path) -> None:
    with Prompts(str(folder), watch=False) as prompts:
        assert prompts.names() == ["greet", "payroll"]  # no token: trusted, as a local client
        listing = prompts.get("greet")
        assert isinstance(listing, PromptListing) and listing.model == {"name": "m1"}
        assert [a["name"] for a in listing.arguments] == ["who"]
        with pytest.raises(InvalidParams, match="greeet"):
            prompts.get("greeet")
        assert repr(prompts) == f"Prompts({str(folder)!r})"


def test_a_token_sees_what_its_scopes_allow(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("ann:ann-token-0123456789 hr\nbob:bob-token-0123456789\n")
    with Prompts(str(folder), token="bob-token-0123456789", tokens=str(tokens), watch=False) as prompts:
        assert prompts.names() == ["greet"]
        with pytest.raises(InvalidParams):
            prompts.render("payroll")
    with Prompts(str(folder), token="ann-token-0123456789", tokens=str(tokens), watch=False) as prompts:
        assert prompts.names() == ["greet", "payroll"]
    with pytest.raises(LibraryError, match=f"the token is not one of those in {tokens}"):
        Prompts(str(folder), token="nobody-0123456789", tokens=str(tokens), watch=False)
    monkeypatch.delenv("PROMPTDECK_TOKENS", raising=False)
    with pytest.raises(LibraryError, match="a token was given, but no tokens are configured"):
        Prompts(str(folder), token="ann-token-0123456789", watch=False)


def test_a_store_that_is_away_renders_from_the_fallback(folder: Path, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    away = f"postgresql://nobody@127.0.0.1:{1}/nothing?connect_timeout=1"
    with Prompts(away, fallback=str(folder), watch=False) as prompts:
        rendered = prompts.render("greet", who="ann")
        assert rendered.stale and rendered.text() == "Hi ann" and rendered.source == str(folder)
        assert prompts.names() == ["greet", "payroll"]
    assert "rendering from the fallback folder" in caplog.text


def test_a_fallback_with_problems_is_refused_with_them(folder: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bad.md").write_text("{% if %}\n")
    with pytest.raises(LibraryError, match=r"the fallback folder .* has 1 problem \(promptdeck check .*\):\nbad.md:1"):
        Prompts("sqlite:///" + str(tmp_path / "s.db"), fallback=str(broken), watch=False)


def test_a_closed_prompts_says_so(folder: Path) -> None:
    prompts = Prompts(str(folder), watch=False)
    prompts.close()
    with pytest.raises(LibraryError, match=r"Prompts\(.*\) is closed"):
        prompts.names()
    prompts.close()  # twice is fine
