"""``Prompts`` on a folder or a store: rendered in this process, following changes, from many threads."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck import InvalidParams, LibraryError, McpError, Prompts, connect
from tests.support.application import MODELLED, SCOPED, in_threads, publish, wait_for
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES, prompt_folder


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return prompt_folder(tmp_path / "lib", {"greet.md": MODELLED, "payroll.md": SCOPED})


def test_a_render_carries_the_messages_the_model_settings_and_the_text(library: Path) -> None:
    with Prompts(str(library)) as prompts:
        rendered = prompts.render("greet", who="Ada")
        assert rendered.messages == [{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}]
        assert rendered.text() == "Hello, Ada!"
        assert rendered.model == {"name": "gpt-4.1-mini", "temperature": 0.2, "max_tokens": 200}
        assert (rendered.name, rendered.version, rendered.label, rendered.stale) == ("greet", None, None, False)
        assert rendered.source == str(library)
        listing = prompts.get("greet")
        assert listing.description == "Greets someone" and listing.model == rendered.model
        assert [(a["name"], a.get("required")) for a in listing.arguments] == [("who", True)]
        assert prompts.names() == ["greet", "payroll"]


def test_renders_from_many_threads_are_each_right(library: Path) -> None:
    with Prompts(str(library)) as prompts:
        def work(index: int) -> None:
            for turn in range(200):
                who = f"t{index}-{turn}"
                assert prompts.render("greet", who=who).text() == f"Hello, {who}!"

        in_threads(16, work)


def test_first_renders_of_a_store_from_many_threads_at_once(tmp_path: Path) -> None:
    """Each stored prompt is parsed from its file on first use: many threads asking for each at once all get it."""
    files = {f"p{i}.md": f"---\narguments:\n  - {{name: who, required: true}}\n---\nPrompt {i} for {{{{ who }}}}.\n"
             for i in range(20)}
    url = f"sqlite:///{tmp_path / 'store.db'}"
    publish(prompt_folder(tmp_path / "lib", files), url)
    with Prompts(url) as prompts:
        def work(index: int) -> None:
            for i in range(20):
                assert prompts.render(f"p{i}", who=str(index)).text() == f"Prompt {i} for {index}."

        in_threads(8, work)


def test_arender_from_coroutines(library: Path) -> None:
    async def many(prompts: Prompts) -> list[str]:
        done = await asyncio.gather(*(prompts.arender("greet", who=str(i)) for i in range(50)))
        return [rendered.text() for rendered in done]

    with Prompts(str(library)) as prompts:
        assert asyncio.run(many(prompts)) == [f"Hello, {i}!" for i in range(50)]


def test_a_sync_render_from_inside_a_coroutine(library: Path) -> None:
    """On a thread running an event loop the server's path gives an awaitable (templates go to the render
    threads); the sync render waits for it on a loop of its own rather than fail."""
    async def inside(prompts: Prompts) -> str:
        return prompts.render("greet", who="Ada").text()

    with Prompts(str(library)) as prompts:
        assert asyncio.run(inside(prompts)) == "Hello, Ada!"


def test_another_formats_model_settings(tmp_path: Path) -> None:
    dotprompt = ("---\nmodel: googleai/gemini-2.0-flash\nconfig:\n  temperature: 0.5\ninput:\n  schema:\n"
                 "    who: string\n---\nHello {{who}}!\n")
    with Prompts(str(prompt_folder(tmp_path / "lib", {"hi.prompt": dotprompt}))) as prompts:
        rendered = prompts.render("hi", who="Ada")
        assert rendered.text() == "Hello Ada!"
        assert rendered.model == {"model": "googleai/gemini-2.0-flash", "config": {"temperature": 0.5}}


def test_a_folder_follows_its_file_changes(library: Path) -> None:
    with Prompts(str(library)) as prompts:
        assert prompts.render("greet", who="Ada").text() == "Hello, Ada!"
        (library / "greet.md").write_text(MODELLED.replace("Hello", "Good morning"))
        (library / "fresh.md").write_text("Brand new.\n")
        wait_for(lambda: prompts.render("greet", who="Ada").text() == "Good morning, Ada!", "the edit")
        wait_for(lambda: "fresh" in prompts.names(), "the new file")
        assert prompts.render("fresh").text() == "Brand new."


def test_a_sqlite_label_follows_its_moves(library: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    publish(library, url)
    with Prompts(url) as prompts:
        first = prompts.render("greet", who="Ada")
        assert first.label == "production" and isinstance(first.version, int) and first.model is not None
        (library / "greet.md").write_text(MODELLED.replace("Hello", "Welcome"))
        publish(library, url)
        wait_for(lambda: prompts.render("greet", who="Ada").text() == "Welcome, Ada!", "the label move")
        moved = prompts.render("greet", who="Ada")
        assert isinstance(moved.version, int) and moved.version > first.version


def test_a_postgresql_label_keeps_its_last_good_copy_through_an_outage(library: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """As a replica does (tests/sources/store/test_replicas.py): once the label's listing is copied locally."""
    from tests.support.postgres import new_database, running_cluster

    caplog.set_level("INFO", "promptdeck.store")

    with running_cluster() as database:
        url = new_database(database.url)
        publish(library, url)
        with Prompts(url) as prompts:
            first = prompts.render("greet", who="Ada")
            assert first.text() == "Hello, Ada!" and isinstance(first.version, int)
            # A label move reaches this process by LISTEN/NOTIFY.
            (library / "greet.md").write_text(MODELLED.replace("Hello", "Hi"))
            publish(library, url)
            wait_for(lambda: prompts.render("greet", who="Ada").text() == "Hi, Ada!", "the label move")
            assert prompts.render("greet", who="Ada").version != first.version
            # Each position's listing is copied locally; the outage comes once the new one's is.
            wait_for(lambda: caplog.text.count("is copied locally") >= 2, "the listing to be copied")
            (library / "later.md").write_text("Published after the outage.\n")
            assert not prompts.render("greet", who="Ada").stale
            database.stop()
            # Rendered from the copy held in this process: the database is not needed per render. Once the
            # follower finds the store gone, the renders say they are of the last good copy.
            wait_for(lambda: prompts.render("greet", who="Al").stale, "a render during the outage to be stale")
            for who in ("Bea", "Cy"):
                during = prompts.render("greet", who=who)
                assert during.text() == f"Hi, {who}!" and during.stale and during.label == "production"
            assert prompts.names() == ["greet", "payroll"]
            database.start()
            publish(library, url)
            wait_for(lambda: "later" in prompts.names(), "the label to catch up after the outage", 40)
            after = prompts.render("later")
            assert after.text() == "Published after the outage." and not after.stale


def test_unknown_prompts_and_arguments_are_the_servers_invalid_params(library: Path) -> None:
    async def over_mcp(name: str, **arguments: str) -> McpError:
        async with connect([sys.executable, "-m", "promptdeck", "serve", "--no-watch", str(library)]) as client:
            with pytest.raises(McpError) as caught:
                await client.get_prompt(name, **arguments)
            return caught.value

    with Prompts(str(library)) as prompts:
        for name, arguments in (("gret", {"who": "x"}), ("greet", {"whom": "x"}), ("greet", {})):
            with pytest.raises(InvalidParams) as caught:
                prompts.render(name, **arguments)
            expected = asyncio.run(over_mcp(name, **arguments))
            assert (caught.value.code, caught.value.message, caught.value.data) == \
                (expected.code, expected.message, expected.data)
        assert "'gret'" in str(caught.value) or "greet" in str(caught.value)
        with pytest.raises(InvalidParams, match="whom"):
            prompts.render("greet", whom="x")
        with pytest.raises(InvalidParams, match="gret"):
            prompts.get("gret")


def test_a_token_sees_through_prompts_what_it_sees_over_mcp(library: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("hr:hr-token-0123456789abcdef prompts:hr\nstaff:staff-token-0123456789abcdef\n")

    async def over_mcp(url: str, token: str) -> list[str]:
        async with connect(url, token=token) as client:
            return sorted(p.name for p in await client.list_prompts())

    with http_server(str(library), "--no-watch", "--token-file", str(tokens)) as url:
        for token in ("hr-token-0123456789abcdef", "staff-token-0123456789abcdef"):
            with Prompts(str(library), token=token, tokens=str(tokens)) as prompts:
                assert prompts.names() == asyncio.run(over_mcp(url, token))
                if "payroll" not in prompts.names():
                    with pytest.raises(InvalidParams, match="payroll"):
                        prompts.render("payroll")
                else:
                    assert prompts.render("payroll").text() == "Payroll questions."
    with Prompts(str(library), token="staff-token-0123456789abcdef", tokens=str(tokens)) as staff:
        assert staff.names() == ["greet"]
    with pytest.raises(LibraryError, match="not one of those"):
        Prompts(str(library), token="nobody-0123456789abcdef", tokens=str(tokens))
    with pytest.raises(LibraryError, match="no tokens are configured"):
        Prompts(str(library), token="hr-token-0123456789abcdef")


def test_a_fallback_folder_with_problems_is_refused_with_them(library: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(library, broken)
    (broken / "bad.md").write_text("---\narguments: 7\n---\nx\n")
    (broken / "worse.md").write_text("---\ndescription: [unclosed\n---\n{{ oops\n")
    done = subprocess.run([sys.executable, "-m", "promptdeck", "check", str(broken)], capture_output=True,
                          text=True, timeout=60)
    problems = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("bad.md", "worse.md"))]
    assert len(problems) >= 2
    with pytest.raises(LibraryError) as caught:
        Prompts("http://127.0.0.1:9/mcp", fallback=str(broken))
    for problem in problems:
        assert problem in str(caught.value)
    with pytest.raises(LibraryError, match="is not a folder"):
        Prompts(str(tmp_path / "nowhere"))


def test_every_example_renders_in_process(tmp_path: Path) -> None:
    with Prompts(str(EXAMPLES)) as prompts:
        for name, arguments in EXAMPLE_ARGS.items():
            assert prompts.render(name, **arguments).messages


def test_a_folders_renders_are_counted_in_memory_under_the_applications_name(library: Path) -> None:
    with Prompts(str(library), app="billing\nforged", watch=False) as prompts:
        for _ in range(3):
            prompts.render("greet", who="Ann")
        shown = prompts.usage()
        [greet] = shown["prompts"]
        assert (greet["prompt"], greet["renders"]) == ("greet", 3)
        [row] = greet["hours"]
        assert (row["version"], row["label"], row["arm"], row["client"]) == (0, "", "", "billingforged")
        assert greet["last"] == row["hour"] and row["hour"] % 3600 == 0
        prompts.render("greet", who="Bo")
        assert prompts.usage()["prompts"][0]["renders"] == 4  # drained again, added up
        with pytest.raises(LibraryError, match="give hours, days or weeks"):
            prompts.usage(since="tomorrow")


def test_a_stores_renders_are_written_to_the_store_under_the_applications_name(library: Path,
                                                                              tmp_path: Path) -> None:
    from promptdeck.sources.store.connection import Connection
    from promptdeck.sources.store.usage import read

    url = f"sqlite:///{tmp_path / 'store.db'}"
    publish(library, url)
    with Prompts(url, app="billing") as prompts:
        prompts.render("greet", who="Ann")
        with pytest.raises(LibraryError, match="is in the store"):
            prompts.usage()
    with Connection(url) as db:  # closing wrote what was counted
        [(key, n)] = read(db, 0)
    assert (key.prompt, key.version, key.label, key.client, n) == ("greet", 1, "production", "billing", 1)
