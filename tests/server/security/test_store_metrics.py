"""``server.security.store_metrics``: label values escaped so that no value ends its quotes or its line, and a
server without a store source has no store series (nothing read, nothing shown)."""

from __future__ import annotations

from pathlib import Path

from promptdeck.server.security.store_metrics import StoreMetrics, label_value, labels
from promptdeck.sources.files.source import FileSource
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
