"""Issue 38, finding 13: the era probe (``server/discover``) waits for a server still starting and never takes
silence for a legacy server; only an answer (an error such as -32601, or a result that is no discover result)
means legacy.

Each case is real processes: ``promptdeck ls`` run as a command, a stdio server behind it (``promptdeck serve``
or the official SDK's, started late by ``servers/slow_start.py``; the official reference server
``server-everything``, legacy only),
and the recorder between them where the traffic's order is what proves the point. A server that never
answers the probe is in test_misbehaving.py.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.client_servers import DEADLINE, EVERYTHING, node, recorded, script, serve

#: Longer than the probe used to wait (5 s) before it sent ``initialize`` on the same connection.
SLOW_START = 6.5


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("probe")
    (folder / "alpha.md").write_text("---\ndescription: The first\n---\nAlpha.\n")
    (folder / "beta.md").write_text("---\ndescription: The second\n---\nBeta.\n")
    return folder


def ls(target: Sequence[str], *options: str) -> subprocess.CompletedProcess[str]:
    """``promptdeck ls "TARGET"`` as a process, as a user types it (the server's command line quoted)."""
    return subprocess.run([sys.executable, "-m", "promptdeck", "ls", shlex.join(target), *options],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})


def traffic(log: Path) -> list[tuple[str, dict[str, object]]]:
    """The recorder's log: (``>`` sent to the server or ``<`` from it, the message), in order."""
    return [(line[0], json.loads(line[2:])) for line in log.read_text().splitlines() if line[2:].strip()]


@pytest.mark.slow
@pytest.mark.parametrize("server", ["promptdeck", "sdk"])
def test_a_server_slower_to_start_than_the_old_probe_is_waited_for(server: str, library: Path,
                                                                  tmp_path: Path) -> None:
    """The official SDK's server takes the connection as 2026-07-28 once it reads the probe, so the initialize
    that used to follow an unanswered probe was refused (-32022: the reported failure); promptdeck's own took
    the initialize and the client spoke the legacy way to a modern server."""
    log = tmp_path / "traffic.jsonl"
    command = serve(library, "--no-watch") if server == "promptdeck" else script("sdk_server.py", "mcpserver", "stdio")
    slow = script("slow_start.py", str(SLOW_START), "--", *command)
    # --timeout: a loaded machine takes seconds more to import the SDK; the probe waits as long as any request.
    listed = ls(recorded(log, slow), "--timeout", str(DEADLINE * 2))
    assert listed.returncode == 0, listed.stderr
    names = ("alpha", "beta") if server == "promptdeck" else ("greet", "picture")
    assert all(name in listed.stdout for name in names), listed.stdout
    sent = [message.get("method") for way, message in traffic(log) if way == ">"]
    # One probe, answered: nothing cancelled, and no initialize sent to a server that speaks 2026-07-28.
    assert sent[0] == "server/discover" and "initialize" not in sent and "notifications/cancelled" not in sent, sent


@pytest.mark.slow
def test_a_legacy_only_server_is_told_by_its_answer_not_by_a_timeout(tmp_path: Path) -> None:
    """The official reference server speaks up to 2025-11-25 and answers the probe -32601 at once."""
    log = tmp_path / "traffic.jsonl"
    listed = ls(recorded(log, [node(), str(EVERYTHING), "stdio"]), "--timeout", str(DEADLINE))
    assert listed.returncode == 0, listed.stderr
    assert "simple-prompt" in listed.stdout, listed.stdout
    messages = traffic(log)
    probe = next(message for way, message in messages if way == ">" and message.get("method") == "server/discover")
    answered = next(i for i, (way, message) in enumerate(messages) if way == "<" and message.get("id") == probe["id"])
    assert messages[answered][1]["error"]["code"] == -32601  # type: ignore[index]
    initialize = next(i for i, (way, message) in enumerate(messages) if message.get("method") == "initialize")
    # initialize went out after the probe's error came back, and the probe was never given up on.
    assert answered < initialize
    assert not any(message.get("method") == "notifications/cancelled" for _, message in messages)
