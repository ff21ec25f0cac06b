"""/metrics of a served store never names a prompt its scraper may not see: a restricted prompt under rollout,
rendered by a principal holding its scope, shows its share and renders to that principal and to nobody else
(not even its name), on SQLite and on the throwaway PostgreSQL cluster, over real HTTP."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from promptdeck.sources.store.database import Store
from tests.support import modern
from tests.support.http_server import http_server
from tests.support.prometheus_text import parse, value
from tests.support.publishing import publish

PUBLIC = "---\ndescription: Say hello\n---\n{}\n"
PAYROLL = "---\ndescription: HR only\nscopes: [hr]\n---\n{}\n"
HR, GUEST = "hr-token-0123456789abcdef", "guest-token-0123456789abc"


def test_a_restricted_prompt_under_rollout_is_never_named_to_a_scraper_without_its_scope(
        store_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    for text in ("one", "two"):
        (folder / "greet.md").write_text(PUBLIC.format(text))
        (folder / "payroll-secret.md").write_text(PAYROLL.format(text))
        publish(store_url, folder, label="production" if text == "one" else None)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"hr:{HR} hr\nguest:{GUEST}\n")
    with http_server("", "--store", store_url, "--stateless", "--token-file", str(tokens)) as endpoint, \
            httpx.Client(timeout=30) as client:
        with Store(store_url) as store:
            store.governance.start_rollout("production", "greet", 2, 5000, author="t")
            store.governance.start_rollout("production", "payroll-secret", 2, 2500, author="t")

        def scrape(token: str) -> str:
            answer = client.get(endpoint.rsplit("/", 1)[0] + "/metrics", headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 200
            return answer.text

        deadline = time.monotonic() + 60
        while value(parse(scrape(HR)), "promptdeck_rollout_share", label="production", prompt="payroll-secret") != 0.25:
            assert time.monotonic() < deadline, "the rollouts were not followed"
            time.sleep(0.2)
        for name in ("greet", "payroll-secret"):
            request = modern.request(1, "prompts/get", {"name": name}, meta={"promptdeck.dev/rollout-key": "k"})
            _, answer = modern.post(client, endpoint, request, authorization=f"Bearer {HR}")
            assert "result" in answer, answer
        hr, guest = parse(scrape(HR)), scrape(GUEST)
        assert sum(v for (n, labels), v in hr.items() if n == "promptdeck_rollout_renders_total"
                   and ("prompt", "payroll-secret") in labels) == 1
        assert "payroll" not in guest  # neither its share nor its renders nor its name
        parsed = parse(guest)
        assert value(parsed, "promptdeck_rollout_share", label="production", prompt="greet") == 0.5
        assert sum(v for (n, labels), v in parsed.items() if n == "promptdeck_rollout_renders_total") == 1
