"""/metrics of ``serve --store URL --http`` (docs/http.md#metrics), scraped over real HTTP from a real server on
SQLite and on the throwaway PostgreSQL cluster: a publish moves the last change seen, a webhook whose receiver
fails shows in the backlog and the attempt latency, a rollout's share and renders per arm are counted, and a
PostgreSQL store that stops is shown unreachable (and reachable again when it is back). Every scrape is checked
against the text format's rules (tests/support/prometheus_text.py); a folder's server shows no store series."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.governance import bucket
from tests.support import modern
from tests.support.cli import pd
from tests.support.http_server import http_server
from tests.support.postgres import new_database, running_cluster
from tests.support.prometheus_text import Samples, parse, value
from tests.support.publishing import GREET, greet_store
from tests.support.receiver import receiver

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
KEY = "promptdeck.dev/rollout-key"
#: a scrape's store reading is cached for 5 s: conditions are waited on well past that, for a loaded machine
WAIT = 60.0


def scrape(endpoint: str) -> Samples:
    response = httpx.get(endpoint.rsplit("/", 1)[0] + "/metrics", timeout=30)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(response.text)


def until(endpoint: str, holds: Callable[[Samples], bool], what: str) -> Samples:
    deadline = time.monotonic() + WAIT
    while True:
        samples = scrape(endpoint)
        if holds(samples):
            return samples
        assert time.monotonic() < deadline, f"{what}: {samples}"
        time.sleep(0.2)


def store(name: str, samples: Samples) -> float | None:
    return value(samples, name, label="production")


def render(client: httpx.Client, endpoint: str, key: str) -> int:
    request = modern.request(1, "prompts/get", {"name": "greet", "arguments": {"who": "x"}}, meta={KEY: key})
    _, answer = modern.post(client, endpoint, request)
    return int(answer["result"]["_meta"]["promptdeck.dev/version"])


def test_a_publish_a_failing_webhook_and_a_rollout_show_in_the_scrape(store_url: str, tmp_path: Path) -> None:
    folder = greet_store(tmp_path, store_url)
    with receiver(SECRET) as hook, http_server("", "--store", store_url, "--stateless") as endpoint, \
            httpx.Client(timeout=30) as client:
        hook.answer = lambda _: ("status", 503)
        with Store(store_url) as opened:
            webhooks.add(opened.db, hook.url, SECRET, ["publish"], scopes=[], allow=["private"], timeout=30,
                         author="ops")
        first = scrape(endpoint)
        assert store("promptdeck_store_reachable", first) == 1
        assert store("promptdeck_store_replica_lag_seconds", first) == 0
        assert value(first, "promptdeck_webhook_deliveries", status="failed") == 0
        seen = store("promptdeck_store_last_change_seen_timestamp_seconds", first)
        assert seen is not None and abs(seen - time.time()) < 600

        # A publish that moves the label: seen, and a delivery to the failing receiver is attempted.
        (folder / "greet.md").write_text(GREET.format("Hey"))
        pd("publish", str(folder), "--store", store_url, "--label", "production")
        until(endpoint, lambda s: (store("promptdeck_store_last_change_seen_timestamp_seconds", s) or 0) > seen,
              "the publish is seen")
        hook.wait_for(1)
        until(endpoint, lambda s: value(s, "promptdeck_webhook_deliveries", status="pending") == 1,
              "the failed attempt leaves the delivery pending")
        # The event is made older than a day and its retry due now: the next failure gives it up.
        with Store(store_url) as opened, opened.db.transaction("SELECT 1"):
            opened.db.run("UPDATE events SET created = created - 200000")
            opened.db.run("UPDATE deliveries SET next_try = 0")
        failed = until(endpoint, lambda s: value(s, "promptdeck_webhook_deliveries", status="failed") == 1,
                       "the delivery is given up")
        assert value(failed, "promptdeck_webhook_deliveries", status="pending") == 0
        assert (value(failed, "promptdeck_webhook_attempt_seconds_count") or 0) >= 2
        assert value(failed, "promptdeck_webhook_attempt_seconds_bucket", le="30.0") == \
            value(failed, "promptdeck_webhook_attempt_seconds_count")

        # A rollout of version 2 to half the renders: its share, then one render counted per arm.
        with Store(store_url) as opened:
            rollout = opened.governance.start_rollout("production", "greet", 2, 5000, author="t")
        until(endpoint, lambda s: value(s, "promptdeck_rollout_share", label="production", prompt="greet") == 0.5,
              "the rollout's share")
        inside = next(f"k{n}" for n in range(10_000) if bucket(rollout.id, f"key:k{n}") < 5000)
        outside = next(f"k{n}" for n in range(10_000) if bucket(rollout.id, f"key:k{n}") >= 5000)
        assert render(client, endpoint, inside) == 2
        assert render(client, endpoint, inside) == 2
        assert render(client, endpoint, outside) == 4
        counted = scrape(endpoint)
        arms = {arm: value(counted, "promptdeck_rollout_renders_total", label="production", prompt="greet", arm=arm)
                for arm in ("rollout", "label")}
        assert arms == {"rollout": 2, "label": 1}


def test_a_stopped_postgresql_store_is_shown_unreachable_until_it_is_back(tmp_path: Path) -> None:
    with running_cluster() as cluster:
        url = new_database(cluster.url)
        greet_store(tmp_path, url)
        with http_server("", "--store", url, "--stateless") as endpoint:
            assert store("promptdeck_store_reachable", scrape(endpoint)) == 1
            cluster.stop()
            down = until(endpoint, lambda s: store("promptdeck_store_reachable", s) == 0, "the store is down")
            # What cannot be read now is not shown (no stale number); the prompts are still served.
            assert store("promptdeck_store_replica_lag_seconds", down) is None
            assert value(down, "promptdeck_webhook_deliveries", status="pending") is None
            assert value(down, "promptdeck_prompts") == 1
            cluster.start()
            until(endpoint, lambda s: store("promptdeck_store_reachable", s) == 1, "the store is back")


def test_a_folder_server_shows_no_store_series(tmp_path: Path) -> None:
    (tmp_path / "greet.md").write_text(GREET.format("Hello"))
    with http_server(str(tmp_path), "--stateless") as endpoint:
        samples = scrape(endpoint)
    assert value(samples, "promptdeck_prompts") == 1
    assert not [name for name, _ in samples if name.startswith(("promptdeck_store_", "promptdeck_webhook_",
                                                                 "promptdeck_rollout_"))]
