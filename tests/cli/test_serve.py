"""``promptdeck serve`` (cli/serve.py): the options reach the server (a stdio serve through click, a real
process), and every combination that cannot work is a usage error naming the options, before anything
is served."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptdeck.cli.serve import serve

pytestmark = pytest.mark.usefixtures("kept_logging")


@pytest.fixture
def folder(tmp_path: Path) -> str:
    (tmp_path / "greet.md").write_text("---\narguments:\n  - {name: who}\n---\nHello {{ who }}!\n")
    return str(tmp_path)


def test_a_stdio_serve_with_options_only_click_reads(folder: str) -> None:
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", folder, "--name", "deck", "--tools",
                           "--tool-prefix", "p_", "--no-watch"], input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a["result"] for a in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["serverInfo"]["name"] == "deck" and "tools" in answers[1]["capabilities"]
    assert "p_greet" in {tool["name"] for tool in answers[2]["tools"]}


@pytest.mark.parametrize(("args", "says"), [
    (["--stateless", "--rate-limit", "5"], "--stateless, --rate-limit: HTTP options, which go with --http"),
    (["--store", "s.db", "--label", "a", "--label", "b"],
     "stdio serves one label; serve several with --http (each on its own endpoint)"),
    (["--tool-prefix", "x"], "--tool-prefix: options of --tools, which is not given"),
    (["--http", "notaport"], "--http takes [HOST:]PORT, got 'notaport'"),
    (["--http", "127.0.0.1:70000"], "--http takes [HOST:]PORT, got '127.0.0.1:70000'"),
    (["--http", "1", "--tls-cert", "CERT"], "--tls-cert and --tls-key go together"),
    (["--http", "1", "--max-sessions", "10", "20"],
     "--max-sessions and --max-streams: the share per principal cannot exceed the total"),
    (["--http", "1", "--workers", "2"],
     "--workers needs --stateless: a session lives in the one process that opened it"),
    (["--http", "1", "--require-scope", "x"],
     "--oauth-jwks, --oauth-audience and --require-scope go with --oauth-issuer"),
    (["--http", "1", "--oauth-issuer", "https://a.example", "--token-file", "t"],
     "choose one of --token-file and --oauth-issuer"),
])
def test_options_that_cannot_work_together_are_usage_errors(folder: str, tmp_path: Path, args: list[str],
                                                            says: str) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("not used")
    done = CliRunner().invoke(serve, [folder, *[str(cert) if arg == "CERT" else arg for arg in args]],
                              prog_name="promptdeck serve")
    assert done.exit_code == 2, done.output
    assert done.stderr == f"promptdeck: {says}\n"


def test_a_folder_that_cannot_be_served_over_http_is_one_line(tmp_path: Path) -> None:
    done = CliRunner().invoke(serve, [str(tmp_path / "missing"), "--http", "1"], prog_name="promptdeck serve")
    assert done.exit_code == 1 and done.stderr.endswith(f"prompt library {str(tmp_path / 'missing')!r} is not a "
                                                        "folder\n")
