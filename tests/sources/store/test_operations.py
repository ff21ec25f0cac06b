"""``sources.store.operations``: the store read for /metrics at most once per cache period (a scrape rate cannot
load the database), a store that went away read as unreachable, the replica lag of a label moved past the
position served, the webhook backlog, and the histogram's cumulative buckets."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.operations import Histogram, Probe, Reading
from tests.support.publishing import GREET, publish


def test_a_reading_is_cached_and_a_store_gone_is_unreachable(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text(GREET.format("Hello"))
    url = f"sqlite:///{tmp_path}/s.db"
    first = publish(url, folder)
    with Store(url) as store:
        served = store.reads.require_position("production")
    assert first is not None
    cached = Probe(url, "production", cache_seconds=3600)
    assert cached.read(served) == Reading(True, 0.0, 0, 0)
    (folder / "greet.md").write_text(GREET.format("Hi"))
    publish(url, folder)
    fresh = Probe(url, "production", cache_seconds=0)
    lag = fresh.read(served).lag_seconds
    assert lag is not None and 0 <= lag < 600  # a position newer than the one served
    assert fresh.read(served + 1).lag_seconds == 0
    (tmp_path / "s.db").rename(tmp_path / "moved.db")
    assert fresh.read(served) == Reading(False)
    assert cached.read(served) == Reading(True, 0.0, 0, 0)  # read once within its period, whatever the scrapes


def test_the_histogram_counts_cumulatively_up_to_inf() -> None:
    histogram = Histogram((0.1, 1.0))
    for seconds in (0.05, 0.1, 0.5, 7.0):
        histogram.observe(seconds)
    assert histogram.cumulative() == [("0.1", 2), ("1.0", 3), ("+Inf", 4)]
    assert (histogram.count, round(histogram.sum, 2)) == (4, 7.65)
