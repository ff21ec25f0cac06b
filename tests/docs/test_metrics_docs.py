"""docs/http.md's metrics of a served store match the code: its sample scrape follows the text format, and names
every series of ``store_metrics.SERIES`` with the type and help the server writes, each in the table too."""

from __future__ import annotations

import re
from pathlib import Path

from promptdeck.server.security.store_metrics import SERIES
from tests.support.prometheus_text import parse

PAGE = Path(__file__).parents[2] / "docs" / "http.md"


def test_the_sample_scrape_parses_and_names_every_series_as_written() -> None:
    section = PAGE.read_text().split("### Metrics of a served store", 1)[1].split("\n## ", 1)[0]
    sample = re.search(r"```\n(.*?)```", section, re.S)
    assert sample is not None
    text = sample.group(1)
    parse(text)
    for name, kind, help_text in SERIES:
        assert f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n" in text, name
        assert f"| `{name}" in section, name
