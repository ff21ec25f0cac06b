"""The catalog (prompts/catalog.py): sorted snapshots, opaque stable cursors, pre-encoded pages per revision."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.catalog import DEFAULT_PAGE_SIZE, Catalog, decode_cursor, encode_cursor
from promptdeck.prompts.spec import META_ARGUMENTS, META_TAGS, Prompt, RenderContext
from promptdeck.protocol.content import Message
from promptdeck.protocol.errors import InvalidParams
from promptdeck.protocol.jsonrpc import encode_json
from promptdeck.protocol.revisions import LATEST, REVISIONS, Revision

R1, R2, R3, R4 = (REVISIONS[v] for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"))
names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
URL_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def make(name: str, **kwargs: Any) -> Prompt:
    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        return []

    return Prompt(name, render, **kwargs)


def catalog_of(prompt_names: set[str] | list[str], page_size: int = DEFAULT_PAGE_SIZE) -> Catalog:
    return Catalog([make(n) for n in prompt_names], page_size=page_size)


def page(catalog: Catalog, cursor: object = None, rev: Revision = LATEST) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(catalog.page(rev, cursor))
    return decoded


def walk(catalog: Catalog, rev: Revision = LATEST) -> tuple[list[str], list[str]]:
    """(every name listed, every cursor handed out) walking all pages."""
    seen: list[str] = []
    cursors: list[str] = []
    cursor = None
    while True:
        result = page(catalog, cursor, rev)
        seen += [p["name"] for p in result["prompts"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return seen, cursors
        cursors.append(cursor)


# -- walking pages ------------------------------------------------------------------------------------


def test_walk_collects_every_name_once_in_order() -> None:
    catalog = catalog_of([f"p{i:02d}" for i in range(23)][::-1], page_size=5)
    seen, cursors = walk(catalog)
    assert seen == [f"p{i:02d}" for i in range(23)]
    assert len(cursors) == 4  # pages of 5, 5, 5, 5, 3


def test_exact_multiple_of_page_size_has_no_empty_last_page() -> None:
    catalog = catalog_of(["a", "b", "c", "d"], page_size=2)
    first = page(catalog)
    second = page(catalog, first["nextCursor"])
    assert [p["name"] for p in second["prompts"]] == ["c", "d"]
    assert "nextCursor" not in second


def test_single_page_has_no_cursor() -> None:
    result = page(catalog_of(["a", "b"]))
    assert result == {"prompts": [{"name": "a"}, {"name": "b"}]}


def test_empty_catalog_lists_nothing() -> None:
    catalog = Catalog()
    assert page(catalog) == {"prompts": []}
    assert len(catalog) == 0 and catalog.names == []


def test_names_sort_by_code_point() -> None:
    catalog = catalog_of(["b", "B", "a.b", "a-b", "a", "_x", "9"])
    assert walk(catalog)[0] == ["9", "B", "_x", "a", "a-b", "a.b", "b"]
    assert catalog.names == sorted(catalog.names)


def test_default_page_size() -> None:
    catalog = catalog_of([f"n{i:04d}" for i in range(DEFAULT_PAGE_SIZE + 1)])
    first = page(catalog)
    assert len(first["prompts"]) == DEFAULT_PAGE_SIZE == 100
    assert [p["name"] for p in page(catalog, first["nextCursor"])["prompts"]] == ["n0100"]


def test_page_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="page_size must be at least 1"):
        Catalog(page_size=0)


# -- cursors ------------------------------------------------------------------------------------------


def test_cursors_are_opaque_url_safe_tokens() -> None:
    catalog = catalog_of(["git.commit", "git.push", "zeta"], page_size=1)
    _, cursors = walk(catalog)
    assert len(cursors) == 2
    for cursor, name in zip(cursors, ["git.commit", "git.push"], strict=True):
        assert URL_SAFE.fullmatch(cursor), cursor
        assert name not in cursor and "=" not in cursor


def test_cursors_are_stable() -> None:
    a = catalog_of(["a", "b", "c"], page_size=1)
    b = catalog_of(["c", "b", "a"], page_size=1)
    assert walk(a)[1] == walk(a)[1] == walk(b)[1]
    assert encode_cursor("x") == encode_cursor("x")


def test_a_cursor_names_a_position_not_an_offset() -> None:
    old = catalog_of(["a", "b", "c", "d"], page_size=2)
    cursor = page(old)["nextCursor"]
    # Two prompts were added before the cursor and one after: the next page starts right after "b".
    new = catalog_of(["0", "1", "a", "b", "bb", "c", "d"], page_size=2)
    assert [p["name"] for p in page(new, cursor)["prompts"]] == ["bb", "c"]
    # The prompt the cursor names was deleted: the page still starts at the next name.
    gone = catalog_of(["a", "c", "d"], page_size=2)
    assert [p["name"] for p in page(gone, cursor)["prompts"]] == ["c", "d"]


def test_a_cursor_past_the_end_gives_an_empty_last_page() -> None:
    assert page(catalog_of(["a"]), encode_cursor("zzz")) == {"prompts": []}


def test_cursor_round_trip() -> None:
    for name in ("git.commit", "", "ünïcode", "a" * 128):
        assert decode_cursor(encode_cursor(name)) == name


@pytest.mark.parametrize("bad", [
    "", "not base64 at all!", "%%%%", "é", "bm90IG91cnM",  # base64 of "not ours"
    base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode(),  # not UTF-8
    base64.urlsafe_b64encode(b"x:git.commit").decode(),  # wrong prefix
    "A", "AB=", "a" * 2000,
    5, 0, 1.5, True, ["c"], {"c": 1}, b"bjpn",
])
def test_invalid_cursors_are_invalid_params(bad: object) -> None:
    catalog = catalog_of(["a", "b"], page_size=1)
    with pytest.raises(InvalidParams) as err:
        catalog.page(LATEST, bad)
    assert err.value.code == -32602
    assert err.value.message.startswith("invalid cursor ")
    assert len(err.value.message) < 100


def test_a_null_cursor_is_the_first_page() -> None:
    catalog = catalog_of(["a", "b"], page_size=1)
    assert catalog.start_of(None) == 0
    assert catalog.page(LATEST, None) == catalog.page(LATEST)


@given(st.text(max_size=40))
def test_random_text_cursors_give_a_page_or_invalid_params(cursor: str) -> None:
    catalog = catalog_of(["a", "b", "c"], page_size=1)
    try:
        result = page(catalog, cursor)
    except InvalidParams as exc:
        assert exc.code == -32602
        return
    # Only text that decodes like one of our cursors gets here: the page starts after the name it holds.
    after = decode_cursor(cursor)
    assert len(result["prompts"]) <= 1
    assert all(p["name"] > after for p in result["prompts"])


@given(st.binary(max_size=40).filter(lambda b: not b.startswith(b"n:")))
def test_base64_of_garbage_is_invalid_params(garbage: bytes) -> None:
    cursor = base64.urlsafe_b64encode(garbage).decode().rstrip("=")
    with pytest.raises(InvalidParams) as err:
        catalog_of(["a"]).page(LATEST, cursor)
    assert err.value.code == -32602


@given(st.one_of(st.integers(), st.floats(), st.booleans(), st.lists(st.text(max_size=3), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.binary(max_size=5)))
def test_non_string_cursors_are_invalid_params(cursor: object) -> None:
    with pytest.raises(InvalidParams) as err:
        catalog_of(["a"]).page(LATEST, cursor)
    assert err.value.code == -32602


# -- properties of walks ------------------------------------------------------------------------------


@given(st.sets(names, max_size=60), st.integers(1, 15))
def test_walking_all_pages_yields_sorted_names_exactly_once(all_names: set[str], size: int) -> None:
    catalog = catalog_of(all_names, page_size=size)
    seen, cursors = walk(catalog)
    assert seen == sorted(all_names)
    expected_pages = max(1, -(-len(all_names) // size))
    assert len(cursors) == expected_pages - 1


@given(st.sets(names, min_size=1, max_size=40), st.sets(names, max_size=20), st.integers(1, 7), st.data())
def test_edits_between_pages_neither_skip_nor_repeat(before: set[str], added: set[str], size: int,
                                                     data: st.DataObject) -> None:
    removed = data.draw(st.sets(st.sampled_from(sorted(before)), max_size=len(before)))
    after = (before - removed) | added
    old, new = catalog_of(before, size), catalog_of(after, size)
    first = page(old)
    seen = [p["name"] for p in first["prompts"]]
    cursor = first.get("nextCursor")
    while cursor is not None:  # the library changed after the first page
        result = page(new, cursor)
        seen += [p["name"] for p in result["prompts"]]
        cursor = result.get("nextCursor")
    assert len(seen) == len(set(seen))
    assert (before & after) <= set(seen)
    assert set(seen) <= before | after


@given(st.lists(st.sets(names, max_size=25), min_size=2, max_size=6), st.integers(1, 5))
def test_a_new_snapshot_before_every_page_never_repeats_or_skips(snapshots: list[set[str]], size: int) -> None:
    catalogs = [catalog_of(s, size) for s in snapshots]
    seen: list[str] = []
    cursor: str | None = None
    for i in range(10_000):
        result = page(catalogs[min(i, len(catalogs) - 1)], cursor)
        seen += [p["name"] for p in result["prompts"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert seen == sorted(set(seen)), "a walk only ever moves forward"
    assert set.intersection(*snapshots) <= set(seen)


# -- pre-encoded pages --------------------------------------------------------------------------------


@pytest.mark.parametrize("rev", [R1, R2, R3, R4], ids=lambda r: r.version)
def test_page_bytes_equal_the_encoding_of_page_result(rev: Revision) -> None:
    prompts = [make(f"p{i}", title=f"P{i}", description="d", arguments=(make_argument("a", default="x"),))
               for i in range(7)]
    catalog = Catalog(prompts, page_size=3)
    cursor = None
    for start in (0, 3, 6):
        raw = catalog.page(rev, cursor)
        assert raw == msgspec.json.encode(catalog.page_result(rev, start))
        cursor = json.loads(raw).get("nextCursor")
    assert cursor is None


def test_pages_are_encoded_once_per_revision_and_position() -> None:
    catalog = catalog_of(["a", "b", "c"], page_size=2)
    assert catalog.page(R3) is catalog.page(R3)
    cursor = page(catalog)["nextCursor"]
    assert catalog.page(R3, cursor) is catalog.page(R3, cursor)
    assert catalog.page(R1) is not catalog.page(R3)


# -- descriptors per revision -------------------------------------------------------------------------


def full_prompt() -> Prompt:
    return make("p", title="P", description="d", tags=frozenset({"ops", "code"}),
                icons=({"src": "https://example.com/i.png", "mimeType": "image/png"},),
                arguments=(make_argument("a", title="A", type="integer", default=1),
                           make_argument("b", description="B", required=True)))


def test_descriptor_before_2025_06_18_has_no_title_meta_or_icons() -> None:
    expected = {"name": "p", "description": "d", "arguments": [
        {"name": "a", "description": "(integer; default: 1)", "required": False},
        {"name": "b", "description": "B", "required": True}]}
    assert full_prompt().descriptor(R1) == expected
    assert full_prompt().descriptor(R2) == expected


def test_descriptor_2025_06_18_has_titles_and_meta_but_no_icons() -> None:
    d = full_prompt().descriptor(R3)
    assert d["title"] == "P" and "icons" not in d
    assert [a.get("title") for a in d["arguments"]] == ["A", None]
    assert d["_meta"] == {
        META_ARGUMENTS: {"type": "object",
                         "properties": {"a": {"type": "integer", "default": 1},
                                        "b": {"type": "string", "description": "B"}},
                         "required": ["b"]},
        META_TAGS: ["code", "ops"],
    }


def test_descriptor_2025_11_25_adds_icons() -> None:
    d = full_prompt().descriptor(R4)
    assert d["icons"] == [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    assert {k: v for k, v in d.items() if k != "icons"} == full_prompt().descriptor(R3)


def test_bare_prompt_has_only_its_name_on_every_revision() -> None:
    for rev in (R1, R2, R3, R4):
        assert make("bare").descriptor(rev) == {"name": "bare"}


def test_descriptor_pages_per_revision() -> None:
    catalog = Catalog([full_prompt()])
    assert "title" not in page(catalog, rev=R1)["prompts"][0]
    assert page(catalog, rev=R3)["prompts"][0]["title"] == "P"
    assert "icons" in page(catalog, rev=R4)["prompts"][0]


# -- lookups and signature ----------------------------------------------------------------------------


def test_lookups() -> None:
    catalog = catalog_of(["b", "a"])
    assert len(catalog) == 2 and "a" in catalog and "z" not in catalog and 5 not in catalog
    assert [p.name for p in catalog] == ["a", "b"]
    assert catalog.get("a") is catalog.require("a")
    assert catalog.get("z") is None


def test_require_unknown_prompt_is_invalid_params() -> None:
    with pytest.raises(InvalidParams) as err:
        catalog_of(["a"]).require("nope")
    assert err.value.code == -32602
    assert err.value.message == "unknown prompt 'nope'"
    assert err.value.data == {"prompt": "nope", "suggestions": []}
    for bad in (None, 5, ["a"]):
        with pytest.raises(InvalidParams, match='"name" must be a string'):
            catalog_of(["a"]).require(bad)


def test_an_unknown_prompt_suggests_close_names_the_asker_may_see() -> None:
    catalog = Catalog([make("git.commit"), make("code-review"), make("summarize"),
                       make("payroll-report", scopes=frozenset({"hr"}))])
    with pytest.raises(InvalidParams) as err:
        catalog.require("code-reveiw")
    assert err.value.message == "unknown prompt 'code-reveiw'; did you mean 'code-review'?"
    assert err.value.data == {"prompt": "code-reveiw", "suggestions": ["code-review"]}
    with pytest.raises(InvalidParams) as err:
        catalog.require("Commit")  # case aside, and the namespace left out
    assert err.value.data["suggestions"] == ["git.commit"]
    with pytest.raises(InvalidParams) as err:
        catalog.require("payroll-reprot")
    assert err.value.data["suggestions"] == ["payroll-report"]
    with pytest.raises(InvalidParams) as err:  # a principal without "hr" never hears of it
        catalog.view(frozenset()).require("payroll-reprot")
    assert err.value.message == "unknown prompt 'payroll-reprot'" and err.value.data["suggestions"] == []


def test_suggestions_stay_cheap_for_huge_catalogs() -> None:
    from promptdeck.prompts.catalog import SUGGEST_LIMIT, close_names

    names = [f"prompt-{i}" for i in range(SUGGEST_LIMIT + 1)]
    assert close_names("prompt-1x", names) == []
    assert close_names("prompt-1x", names[:100])[0] == "prompt-1"


def test_two_prompts_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="two prompts are named 'a': x.md and y.md"):
        Catalog([make("a", source="x.md"), make("a", source="y.md")])


def test_invalid_prompt_names_are_refused() -> None:
    for bad in ("", "has space", "slash/name", "x" * 129, ".dot-first", "new\n"):
        with pytest.raises(ValueError, match="must be 1-128 letters"):
            make(bad)


def test_signature_changes_with_what_a_listing_shows() -> None:
    base = Catalog([make("a", description="x"), make("b")])
    assert base.signature() == Catalog([make("b"), make("a", description="x")]).signature()
    assert base.signature() != Catalog([make("a", description="y"), make("b")]).signature()
    assert base.signature() != Catalog([make("a", description="x")]).signature()
    assert base.signature() != Catalog([make("a", description="x"), make("b", icons=({"src": "https://i"},))]
                                       ).signature()


def test_views_hide_prompts_whose_scopes_a_principal_lacks() -> None:
    catalog = Catalog([make("open"), make("pay", scopes=frozenset({"hr:payroll"})),
                       make("law", scopes=frozenset({"legal", "hr"}))], page_size=2)
    assert catalog.view(None) is catalog  # stdio: trusted with everything
    assert catalog.view(frozenset({"hr"})) is catalog  # "hr" reaches every restricted prompt here
    nobody = catalog.view(frozenset())
    assert nobody.names == ["open"] and "pay" not in nobody
    with pytest.raises(InvalidParams, match="unknown prompt 'pay'"):
        nobody.require("pay")
    assert catalog.view(frozenset({"hr:payroll"})).names == ["open", "pay"]
    assert catalog.view(frozenset({"legal", "other"})).names == ["law", "open"]
    # Principals that see the same prompts share one view, pages and all.
    assert catalog.view(frozenset({"legal"})) is catalog.view(frozenset({"legal", "unrelated"}))
    assert catalog.view(frozenset({"legal"})).page(LATEST) == encode_json({"prompts": [
        catalog.require(n).descriptor(LATEST) for n in ("law", "open")]})


def test_a_catalog_without_restrictions_is_its_own_view() -> None:
    catalog = Catalog([make("a"), make("b")])
    assert catalog.view(frozenset()) is catalog
