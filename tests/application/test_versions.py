"""The version a render names is the one rendered: during a store's rollout, a server renders some requests from
the rollout's version while its listing still names the label's, and ``Rendered.version``, ``.label`` and
``.rollout`` come from the ``prompts/get`` result (``server.handlers.served_meta``), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

import pytest

from promptdeck import InvalidParams, Prompts
from promptdeck.application import tracing
from promptdeck.application.rendered import Rendered
from promptdeck.sources.store.database import Store
from tests.support.application import wait_for
from tests.support.cli import pd
from tests.support.http_server import http_server
from tests.support.publishing import greet_store

#: greet's text in each version of ``greet_store``'s store (version 3 takes another argument)
TEXTS = {1: "Hello Al!", 2: "Hi Al!"}
TOKEN = "token-of-the-app-0123456789"


def same_version_as_text(rendered: Rendered) -> bool:
    return TEXTS.get(rendered.version) == rendered.text()  # type: ignore[arg-type]


def test_a_remote_render_names_the_version_a_rollout_rendered_not_the_listings(store_url: str,
                                                                               tmp_path: Path) -> None:
    greet_store(tmp_path, store_url)
    with Store(store_url) as store:  # every render gets version 2 while the label stays on version 1
        rollout = store.governance.start_rollout("production", "greet", 2, 10_000, author="t").id
    # An authenticated application: its principal is its rollout key (an anonymous request's renders are not split).
    tokens = tmp_path / "tokens"
    tokens.write_text(f"app:{TOKEN}\n")
    with http_server("", "--store", store_url, "--token-file", str(tokens)) as url, \
            Prompts(url, token=TOKEN, cache=str(tmp_path / "cache")) as prompts:
        assert prompts.get("greet").version == 1  # the listing: the label's version
        rendered = prompts.render("greet", who="Al")
        assert (rendered.text(), rendered.version, rendered.label, rendered.rollout, rendered.stale) == \
            ("Hi Al!", 2, "production", rollout, False)
        # What a trace of the model call names: the version rendered, and the rollout that chose it.
        named = tracing.attributes(rendered)
        assert (named["promptdeck.prompt.version"], named["promptdeck.prompt.rollout"]) == (2, rollout)
        # The rollout's share cut to none: the label's own version, and no rollout named.
        with Store(store_url) as store:
            store.governance.start_rollout("production", "greet", 2, 0, author="t")
        render: Callable[[], Rendered] = lambda: prompts.render("greet", who="Al")  # noqa: E731
        wait_for(lambda: render().text() == "Hello Al!", "the server to follow the rollout's new share")
        back = render()
        assert (back.version, back.label, back.rollout) == (1, "production", None)
    # The server gone, the cache's copy of that render names the version it holds.
    cached = prompts_from_cache(url, tmp_path)
    assert cached.stale and same_version_as_text(cached) and cached.version == 1


def test_a_rollouts_render_names_its_own_versions_model_in_process_and_remotely(store_url: str,
                                                                                 tmp_path: Path) -> None:
    """The listing gives the label's model settings; a render of the rollout's version names that version's."""
    folder = tmp_path / "lib"
    folder.mkdir()
    for model, label in (("model-one", ["--label", "production"]), ("model-two", [])):
        (folder / "greet.md").write_text(f"---\nmodel:\n  model: {model}\narguments:\n  - name: who\n---\n"
                                         f"Hi {{{{ who }}}} from {model}\n")
        pd("publish", str(folder), "--store", store_url, *label)
    with Store(store_url) as store:  # every keyed render gets version 2 while the label stays on version 1
        store.governance.start_rollout("production", "greet", 2, 10_000, author="t")
    with http_server("", "--store", store_url) as url:
        for source in (store_url, url):
            with Prompts(source) as prompts:
                assert prompts.get("greet").model == {"model": "model-one"}, source  # the label's
                rendered = prompts.render("greet", who="Al", key="k")
                assert (rendered.version, rendered.text(), rendered.model) == \
                    (2, "Hi Al from model-two", {"model": "model-two"}), source


def prompts_from_cache(url: str, tmp_path: Path) -> Rendered:
    with Prompts(url, token=TOKEN, cache=str(tmp_path / "cache"), retries=0, timeout=2) as prompts:
        return prompts.render("greet", who="Al")


def test_a_store_rendered_in_process_without_a_key_names_the_labels_version(store_url: str,
                                                                            tmp_path: Path) -> None:
    """In process, a render given no rollout key (and no token) is not split, as a keyless anonymous request is
    not (docs/store.md#rollouts)."""
    greet_store(tmp_path, store_url)
    with Store(store_url) as store:
        store.governance.start_rollout("production", "greet", 2, 10_000, author="t")
    with Prompts(store_url) as prompts:
        rendered = prompts.render("greet", who="Al")
        assert same_version_as_text(rendered) and rendered.version == 1 and rendered.rollout is None
        assert rendered.label == "production" and not rendered.stale


def test_a_key_function_keys_each_render_and_a_key_given_wins(store_url: str, tmp_path: Path) -> None:
    greet_store(tmp_path, store_url)
    with Store(store_url) as store:
        store.governance.start_rollout("production", "greet", 2, 5_000, author="t")
    user: ContextVar[str | None] = ContextVar("user", default=None)  # who the application serves now
    with Prompts(store_url, key=user.get) as prompts:
        versions = {}
        for number in range(60):
            user.set(f"user-{number}")
            versions[f"user-{number}"] = prompts.render("greet", who="Al").version
        assert set(versions.values()) == {1, 2}
        user.set("user-0")
        for key, version in versions.items():
            rendered = prompts.render("greet", who="Al", key=key)  # the key given, not the function's
            assert rendered.version == version and same_version_as_text(rendered)
        user.set(None)
        assert prompts.render("greet", who="Al").version == 1
        # The server's rule, in its words: a key is 1 to 256 characters.
        with pytest.raises(InvalidParams, match='"promptdeck.dev/rollout-key" must be a string of 1 to 256'):
            prompts.render("greet", who="Al", key="")


def test_a_token_keeps_the_version_its_principal_gets_over_mcp(store_url: str, tmp_path: Path) -> None:
    """With a token and no key, a render in-process sticks to the version the server gives the token's principal
    (``Principal.rollout_key``), as a render through the server does."""
    greet_store(tmp_path, store_url)
    with Store(store_url) as store:
        store.governance.start_rollout("production", "greet", 2, 5_000, author="t")
    tokens = tmp_path / "tokens"
    names = [f"app{number}" for number in range(24)]
    tokens.write_text("".join(f"{name}:{name}-token-0123456789abcdef\n" for name in names))
    seen = set()
    with http_server("", "--store", store_url, "--token-file", str(tokens)) as url:
        for name in names:
            token = f"{name}-token-0123456789abcdef"
            with Prompts(store_url, token=token, tokens=str(tokens)) as local, Prompts(url, token=token) as remote:
                here, there = local.render("greet", who="Al"), remote.render("greet", who="Al")
                assert (here.version, here.rollout, here.messages) == (there.version, there.rollout, there.messages)
                seen.add(here.version)
        assert seen == {1, 2}
        with Prompts(url, token="app0-token-0123456789abcdef") as remote, \
                pytest.raises(InvalidParams, match='"promptdeck.dev/rollout-key" must be a string of 1 to 256'):
            remote.render("greet", who="Al", key="k" * 257)
