"""The catalog: sorted snapshots, opaque stable cursors, pages per revision."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.catalog import Catalog, decode_cursor, encode_cursor
from promptdeck.prompts.content import Message
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.errors import InvalidParams
from promptdeck.protocol.revisions import REVISIONS

names = st.from_regex(r"[a-z][a-z0-9.\-]{0,12}", fullmatch=True)


def make(name: str, **kwargs: Any) -> Prompt:
    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        return []

    return Prompt(name, render, **kwargs)


def walk(catalog: Catalog, revision: str = "2025-11-25") -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        page = json.loads(catalog.page(REVISIONS[revision], cursor))
        seen += [p["name"] for p in page["prompts"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            return seen


@given(st.sets(names, max_size=60), st.integers(1, 15))
def test_walk_sees_every_name_once_in_order(all_names: set[str], size: int) -> None:
    catalog = Catalog([make(n) for n in all_names], page_size=size)
    assert walk(catalog) == sorted(all_names)


@given(st.sets(names, min_size=1, max_size=40), st.sets(names, max_size=20), st.integers(1, 7), st.data())
def test_edits_between_pages_neither_skip_nor_repeat(before: set[str], added: set[str], size: int,
                                                     data: st.DataObject) -> None:
    removed = data.draw(st.sets(st.sampled_from(sorted(before)), max_size=len(before)))
    after = (before - removed) | added
    old, new = Catalog([make(n) for n in before], page_size=size), Catalog([make(n) for n in after], page_size=size)
    first = json.loads(old.page(REVISIONS["2025-11-25"]))
    seen = [p["name"] for p in first["prompts"]]
    cursor = first.get("nextCursor")
    while cursor is not None:  # the library changed after the first page
        page = json.loads(new.page(REVISIONS["2025-11-25"], cursor))
        seen += [p["name"] for p in page["prompts"]]
        cursor = page.get("nextCursor")
    assert len(seen) == len(set(seen))
    assert (before & after) <= set(seen)


@pytest.mark.parametrize("bad", ["", "not base64 at all!", encode_cursor("x")[:-1] + "%", 5, None, ["c"],
                                 "bm90IG91cnM"])
def test_invalid_cursors_are_invalid_params(bad: object) -> None:
    catalog = Catalog([make("a")])
    if bad is None:
        assert catalog.start_of(bad) == 0
        return
    with pytest.raises(InvalidParams) as err:
        catalog.page(REVISIONS["2025-11-25"], bad)
    assert err.value.code == -32602


@given(st.text(max_size=30))
def test_random_cursors_never_crash(cursor: str) -> None:
    try:
        decode_cursor(cursor)
    except InvalidParams:
        pass


def test_cursor_round_trip_and_cached_bytes() -> None:
    assert decode_cursor(encode_cursor("git.commit")) == "git.commit"
    catalog = Catalog([make(f"p{i:02d}") for i in range(5)], page_size=2)
    rev = REVISIONS["2025-06-18"]
    assert catalog.page(rev) is catalog.page(rev)
    assert json.loads(catalog.page(rev)) == catalog.page_result(rev, 0)


def test_descriptors_per_revision() -> None:
    prompt = make("p", title="P", description="d", tags=frozenset({"ops"}),
                  icons=({"src": "https://example.com/i.png"},),
                  arguments=(make_argument("a", title="A", type="integer", default=1),))
    old = prompt.descriptor(REVISIONS["2024-11-05"])
    assert old == {"name": "p", "description": "d",
                   "arguments": [{"name": "a", "description": "(integer; default: 1)", "required": False}]}
    assert prompt.descriptor(REVISIONS["2025-03-26"]) == old
    r3 = prompt.descriptor(REVISIONS["2025-06-18"])
    assert r3["title"] == "P" and r3["arguments"][0]["title"] == "A" and "icons" not in r3
    assert r3["_meta"]["promptdeck.dev/arguments"]["properties"]["a"] == {"type": "integer", "default": 1}
    assert r3["_meta"]["promptdeck.dev/tags"] == ["ops"]
    assert prompt.descriptor(REVISIONS["2025-11-25"])["icons"] == [{"src": "https://example.com/i.png"}]


def test_require_names_the_unknown_prompt() -> None:
    with pytest.raises(InvalidParams, match="unknown prompt 'nope'"):
        Catalog([make("a")]).require("nope")
    with pytest.raises(ValueError, match="two prompts are named"):
        Catalog([make("a"), make("a")])
