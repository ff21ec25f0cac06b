"""``server.security.store_metrics``: label values escaped so that no value ends its quotes or its line, and a
server without a store source has no store series (nothing read, nothing shown); the prompts a series names are
capped, and one hidden from the scraper (or whose scopes are not known) is not named."""

from __future__ import annotations

from pathlib import Path

from promptdeck.server.security.store_metrics import MAX_PROMPTS, StoreMetrics, label_value, labels
from promptdeck.sources.files.source import FileSource
from promptdeck.sources.store.source import StoreSource
from tests.support.prometheus_text import LABEL_PAIR, unescape


def test_a_label_value_cannot_end_its_quotes_or_its_line() -> None:
    hostile = 'a"} 1\nforged_total 9\\'
    written = labels(prompt=hostile)
    assert "\n" not in written and written == '{prompt="a\\"} 1\\nforged_total 9\\\\"}'
    assert [(k, unescape(v)) for k, v in LABEL_PAIR.findall(written)] == [("prompt", hostile)]
    assert label_value("plain") == "plain"


def test_a_folder_server_has_no_store_series(tmp_path: Path) -> None:
    (tmp_path / "greet.md").write_text("Hello\n")
    assert StoreMetrics([FileSource(str(tmp_path))]).render(frozenset()) == []


def test_prompts_named_are_capped_and_those_hidden_from_the_scraper_are_not_named(tmp_path: Path) -> None:
    source = StoreSource(f"sqlite:///{tmp_path}/none.db", "production")  # never loaded: the store is not there
    for n in range(MAX_PROMPTS + 50):
        source.splits.renders[(f"p{n:03}", "label")] = 1
        source.splits.scopes[f"p{n:03}"] = frozenset({"hr"}) if n == 0 else frozenset()
    source.splits.renders[("unrecorded", "label")] = 1  # scopes not known: never named
    guest = StoreMetrics([source]).render(frozenset())
    hr = StoreMetrics([source]).render(frozenset({"hr"}))
    assert 'promptdeck_store_reachable{label="production"} 0' in guest
    rendered = [line for line in guest if line.startswith("promptdeck_rollout_renders_total{")]
    assert len(rendered) == MAX_PROMPTS and not any('"p000"' in line or "unrecorded" in line for line in guest)
    assert 'promptdeck_rollout_renders_total{label="production",prompt="p000",arm="label"} 1' in hr
