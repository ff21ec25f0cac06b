"""The command line, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.libraries import EXAMPLES


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=60)


def test_check_the_examples() -> None:
    done = cli("check", str(EXAMPLES))
    assert done.returncode == 0 and done.stdout.strip() == "10 prompts ok"


def test_check_reports_every_problem_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("fine\n")
    (tmp_path / "bad.md").write_text("---\ncolour: red\n---\nx\n")
    (tmp_path / "worse.md").write_text("one\nassistant:\n{% for %}\n")
    done = cli("check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "bad.md:2: unknown front matter key 'colour' (known: name, title, description, icons, tags, arguments)",
        "worse.md:3: template error: Expected an expression, got 'end of statement block'",
    ]
    assert "1 prompts ok; 2 problems in 2 files" in done.stderr


def test_render_prints_messages_and_json() -> None:
    done = cli("render", str(EXAMPLES), "summarize", "-a", "text=The quarterly report")
    assert done.returncode == 0 and "── user" in done.stdout and "The quarterly report" in done.stdout
    raw = cli("render", str(EXAMPLES), "describe-image", "--json", "--revision", "2024-11-05")
    result = json.loads(raw.stdout)
    assert any(m["content"]["type"] == "image" for m in result["messages"])


def test_render_errors_are_the_clients_errors() -> None:
    unknown = cli("render", str(EXAMPLES), "nope")
    assert unknown.returncode == 1 and "error -32602: unknown prompt 'nope'" in unknown.stderr
    missing = cli("render", str(EXAMPLES), "code-review")
    assert missing.returncode == 1 and "missing required argument 'code'" in missing.stderr
    usage = cli("render", str(EXAMPLES), "code-review", "-a", "novalue")
    assert usage.returncode == 2 and "name=value" in usage.stderr


def test_serve_refuses_a_missing_folder_either_way(tmp_path: Path) -> None:
    for extra in ([], ["--name", "x", "--page-size", "5"], ["--page-size", "0"]):
        done = cli("serve", str(tmp_path / "nowhere"), *extra)
        assert done.returncode in (1, 2) and done.stdout == ""
        assert "nowhere" in done.stderr or "page-size" in done.stderr
