"""Langfuse prompts fetched with ``--url`` from a stand-in server on 127.0.0.1 (tests/support/fake_langfuse.py),
its records made by Langfuse's SDK types."""

from __future__ import annotations

import asyncio

import pytest

from promptdeck.importers.fetch import checked_url, fetch
from promptdeck.importers.model import ImportRefused
from tests.support.fake_langfuse import PUBLIC_KEY, SECRET_KEY, fake_langfuse
from tests.support.imports import langfuse_records


def test_every_page_and_version_is_fetched_with_the_keys() -> None:
    with fake_langfuse(langfuse_records()) as (url, seen):
        greet, triage = asyncio.run(fetch(url + "/", PUBLIC_KEY, SECRET_KEY))
    assert [v.number for v in greet.versions] == ["1", "2"] and greet.versions[1].labels == ["production"]
    assert triage.name == "support/triage"
    assert len(seen) == 2 + 3 and len(set(seen)) == 1  # two list pages, three versions, one Basic header


def test_wrong_keys_are_one_error_that_holds_no_key() -> None:
    with fake_langfuse(langfuse_records()) as (url, _):
        with pytest.raises(ImportRefused) as refused:
            asyncio.run(fetch(url, PUBLIC_KEY, "sk-lf-wrong-secret"))
    assert str(refused.value) == f"{url}/api/public/v2/prompts: Langfuse answered 401 (check the keys)"


def test_an_answer_over_the_bound_or_not_json_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_langfuse(langfuse_records(), body=b"[" * 10) as (url, _):
        with pytest.raises(ImportRefused, match="not JSON"):
            asyncio.run(fetch(url, PUBLIC_KEY, SECRET_KEY))
    monkeypatch.setattr("promptdeck.importers.fetch.MAX_INPUT_BYTES", 1000)
    with fake_langfuse(langfuse_records(), body=b" " * 2000) as (url, _):
        with pytest.raises(ImportRefused, match="is over 1000 bytes"):
            asyncio.run(fetch(url, PUBLIC_KEY, SECRET_KEY))


def test_a_url_with_credentials_or_another_scheme_is_refused() -> None:
    with pytest.raises(ImportRefused, match="must not hold credentials"):
        checked_url("https://pk:sk@cloud.langfuse.com")
    with pytest.raises(ImportRefused, match="http\\(s\\) URL"):
        checked_url("file:///etc/passwd")


def test_a_redirect_to_another_origin_does_not_take_the_keys_along() -> None:
    with fake_langfuse(langfuse_records()) as (elsewhere, seen_there):
        with fake_langfuse([], redirect=elsewhere.replace("127.0.0.1", "localhost")) as (url, seen_here):
            with pytest.raises(ImportRefused, match="answered 401"):
                asyncio.run(fetch(url, PUBLIC_KEY, SECRET_KEY))
    assert seen_here and seen_here[0].startswith("Basic ") and seen_there == [""]


def test_the_whole_fetch_is_bounded_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("promptdeck.importers.fetch.MAX_SECONDS", 0.0)
    with fake_langfuse(langfuse_records()) as (url, _):
        with pytest.raises(ImportRefused, match="the fetch took longer than 0 s"):
            asyncio.run(fetch(url, PUBLIC_KEY, SECRET_KEY))
