"""``/api/store/bundle`` (server/web/store_bundle.py): the served label as one bundle, cut by the access rule to
the principal asking and naming it, unstamped and unsigned; an unknown label is the store's refusal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from promptdeck.server.security.principals import Principal
from promptdeck.server.web import store_bundle
from promptdeck.sources.store import bundle
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreMissing
from tests.support.application import publish


class Api:
    """What store_bundle asks of the store API: a store call run (here in this thread, on its own connection)."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def _run(self, principal: Principal, call: Callable[..., Any], *args: Any) -> Any:
        with Store(self.url) as store:
            return call(SimpleNamespace(store=store), *args)


def asked(url: str, principal: Principal, label: str = "production") -> bundle.Bundle:
    answer = asyncio.run(store_bundle.get(Api(url), principal, label))
    return bundle.checked(bytes(answer["bundle"]), "the answer")


@pytest.fixture
def url(tmp_path: Path) -> str:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text("---\ndescription: hi\n---\nHello.\n")
    (folder / "payroll.md").write_text("---\ndescription: HR\nscopes: [prompts:hr]\n---\nPayroll.\n")
    store = f"sqlite:///{tmp_path / 'p.db'}"
    publish(folder, store)
    return store


def test_the_bundle_holds_what_the_principal_may_see_and_names_it(url: str) -> None:
    made = asked(url, Principal("bob", frozenset({"prompts:it"})))
    assert set(made.contents()) == {"greet.md"} and made.label == "production" and made.position is not None
    assert made.cut == bundle.Cut("bob", ["prompts:it"]) and made.source == store_bundle.UNSTAMPED
    assert made.signature is None
    hr = asked(url, Principal("carol", frozenset({"prompts:hr"})))
    assert set(hr.contents()) == {"greet.md", "payroll.md"} and set(hr.versions) == {"greet.md", "payroll.md"}


def test_an_anonymous_principal_gets_what_has_no_scopes(url: str) -> None:
    made = asked(url, Principal("anonymous", frozenset(), authenticated=False))
    assert set(made.contents()) == {"greet.md"} and made.cut == bundle.Cut("anonymous", [])


def test_a_label_the_store_has_not_is_the_stores_refusal(url: str) -> None:
    with pytest.raises(StoreMissing):
        asked(url, Principal("bob", frozenset()), "staging")


def test_the_answer_embeds_the_bundle_as_it_was_made(url: str) -> None:
    answer = asyncio.run(store_bundle.get(Api(url), Principal("bob", frozenset()), "production"))
    assert isinstance(answer["bundle"], msgspec.Raw)
    assert msgspec.json.decode(msgspec.json.encode(answer))["bundle"]["label"] == "production"
