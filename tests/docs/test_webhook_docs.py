"""docs/store.md's webhooks walkthrough and its receiver, run as written (the receiver's port made a free one),
from a folder where the store walkthrough before it has run; and the kinds of event the pages name."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from promptdeck.sources.store.event_kinds import REGISTRY, ChangedPrompt, names
from tests.support.http_server import free_port
from tests.support.paths import REPO

STORE_PAGE = REPO / "docs" / "store.md"


def test_the_webhooks_walkthrough_and_receiver_run_as_written(tmp_path: Path) -> None:
    section = STORE_PAGE.read_text().split("\n## Webhooks\n", 1)[1].split("\n## ", 1)[0]
    (commands,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    (receiver,) = re.findall(r"```python\n(.*?)```", section, re.S)
    port = str(free_port())
    assert commands.count(":9000/") == 1 and receiver.count(", 9000)") == 1
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")
    (tmp_path / "receiver.py").write_text(receiver.replace(", 9000)", f", {port})"))

    def bash(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)

    # Where the store walkthrough leaves a reader: production at summarize's version 1, staging at 2.
    before = bash(f"cp -r {REPO}/examples/prompts my-prompts && P=.venv/bin/promptdeck && "
                  "$P publish my-prompts --store prompts.db --label production -m 'first cut' --author ana && "
                  "echo 'Answer in one paragraph.' >> my-prompts/summarize.md && "
                  "$P publish my-prompts --store prompts.db --label staging -m 'shorter summaries'")
    assert before.returncode == 0, before.stderr
    lines = commands.replace(":9000/", f":{port}/").splitlines()
    add_at = next(i for i, line in enumerate(lines) if "webhook add" in line)
    assert bash("\n".join(lines[:add_at + 1])).returncode == 0  # the secret file exists before the receiver reads it
    served = subprocess.Popen([sys.executable, "receiver.py"], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while served.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        done = bash("\n".join(lines[:1] + lines[add_at + 1:]))
        assert done.returncode == 0, done.stderr
    finally:
        served.terminate()
    out, err = served.communicate()
    assert out.startswith("label production summarize@2 by "), (out, err)
    assert "http://127.0.0.1" in done.stdout and "whsec_" not in done.stdout
    assert "1 delivery attempted" in done.stdout and "event 1 label  webhook 1  delivered  1 attempt" in done.stdout
    assert "HTTP 204" in done.stdout and done.stdout.rstrip().endswith("webhook 1 removed")


def test_the_kinds_of_event_and_their_fields_are_the_registered_ones() -> None:
    """The pages say what ``sources.store.event_kinds`` declares: each kind, and each field of its payload."""
    section = STORE_PAGE.read_text().split("\n## Webhooks\n", 1)[1].split("\n## ", 1)[0]
    text = " ".join(section.split())
    (listed,) = re.findall(r"`--event KIND` \(repeat\) asks for some kinds only: ([^(]*) \(", text)
    assert listed.replace("`", "").split(", ") == names()
    (usage,) = re.findall(r"\[--event ([a-z|]*) \.\.\.\]", (REPO / "docs" / "cli.md").read_text())
    assert usage.split("|") == names()
    for name, kind in REGISTRY.items():
        fields = [field for field in kind.payload.__struct_fields__ if field != "scopes"]
        assert f"`{name}`" in text and fields
        assert [field for field in fields if f"`{field}`" not in text] == [], name
    assert [field for field in ChangedPrompt.__struct_fields__ if field != "scopes" and f'"{field}":' not in text] == []
