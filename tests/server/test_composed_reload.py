"""Hot reload of a composed prompt's users: a real ``promptdeck serve`` over stdio, watching its folder, and a
client that edits a partial and a composed prompt between two ``prompts/get`` (issue 31)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.libraries import COMPOSED_ARGS, composed_library
from tests.support.modern import DEADLINE, StdioPeer, initialize, legacy


def _text(result: dict[str, Any]) -> str:
    return "\n".join(m["content"].get("text", "") for m in result["messages"])


def _until(ask: Callable[[], str], wanted: str) -> str:
    """Ask until the answer holds ``wanted`` (the watcher sees a change within a few hundred ms)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        got = ask()
        if wanted in got or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def test_edits_to_a_partial_and_a_composed_prompt_show_in_their_users(tmp_path: Path) -> None:
    folder = composed_library(tmp_path)
    ids = iter(range(2, 10_000))
    with StdioPeer(folder) as peer:
        assert "result" in peer.call(initialize(1))
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        def get(name: str, arguments: dict[str, str]) -> Callable[[], str]:
            def ask() -> str:
                answer = peer.call(legacy(next(ids), "prompts/get", {"name": name, "arguments": arguments}))
                return _text(answer["result"]) if "result" in answer else f"error {answer['error']}"
            return ask

        review, rules = get("review", COMPOSED_ARGS), get("rules", {"tone": "blunt"})
        assert "Be blunt, and keep it short." in review()
        time.sleep(0.6)  # the watcher is watching (it catches up after its first half second)

        # a partial that rules includes, and review composes rules: both show the edit
        (folder / "_partials/tone.md").write_text("Be {{ tone }}; one sentence.\n", encoding="utf-8")
        assert "Be blunt; one sentence." in _until(review, "one sentence")
        assert "Be blunt; one sentence." in rules()

        # a composed prompt's own edit shows in the prompt composing it
        text = (folder / "rules.md").read_text(encoding="utf-8").replace("House rules.", "Our rules.")
        (folder / "rules.md").write_text(text, encoding="utf-8")
        assert _until(review, "Our rules.").startswith("Our rules.\nBe blunt; one sentence.")

        # a partial that breaks is a problem of the prompt including it, logged at its line, though no prompt
        # file changed; review, which only composes rules, compiles as before
        (folder / "_partials/tone.md").write_text("Be {{ tone \n", encoding="utf-8")
        deadline = time.monotonic() + DEADLINE
        while "rules.md" not in peer.stderr and time.monotonic() < deadline:
            time.sleep(0.1)
        logged = peer.stderr
        assert "rules.md:9: include '_partials/tone.md': partial '_partials/tone.md' line 1" in logged, logged
        assert "review.md" not in logged

        # fixed again: the users render the fixed partial, and no listing changed, so no list_changed came
        (folder / "_partials/tone.md").write_text("Be {{ tone }}, fixed.\n", encoding="utf-8")
        assert "Be blunt, fixed." in _until(review, "fixed")
        assert peer.poll(lambda m: m.get("method") == "notifications/prompts/list_changed", 0.3) is None

        # a listing that changes (rules' description) is announced
        text = (folder / "rules.md").read_text(encoding="utf-8").replace("The house rules", "Rules of the house")
        (folder / "rules.md").write_text(text, encoding="utf-8")
        assert peer.take(lambda m: m.get("method") == "notifications/prompts/list_changed")
