"""``promptdeck skill`` against a server that lies about names, and against promptdeck's own server with a
file name that needs percent-encoding (issue 38, finding 7).

A hostile server (``tests/client/servers/bad_skills.py``, a real process over stdio) lists a git hook, an
``.envrc``, and names holding a newline, an escape sequence, an RTL override or a C1 control, each with
its bytes matching its digest: only the rule on names stops them. The real command must write nothing,
end with one line (through the terminal gate), and never a traceback. From ``promptdeck serve``, a skill
with ``my notes.md`` (listed as ``my%20notes.md``) is fetched whole: the file is read by its URI as listed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.client_servers import PYTHON, SERVERS
from tests.support.paths import REPO

URI = "skill://team/demo/SKILL.md"


def promptdeck(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([PYTHON, "-m", "promptdeck", *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("mode", ["git-hook", "envrc", "newline", "escape-seq", "rtl", "c1"])
def test_a_name_the_server_would_not_serve_is_not_written(tmp_path: Path, mode: str) -> None:
    into = tmp_path / "skills"
    done = promptdeck("skill", f"{PYTHON} {SERVERS / 'bad_skills.py'} {mode}", URI, "--to", str(into))
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert not [c for c in ("\x1b", "\x07", "\u202e", "\x9b") if c in done.stderr]
    assert "is hidden" in done.stderr or "cannot be written safely" in done.stderr
    assert list(into.rglob("*")) == []  # nothing, not even a staging folder


def test_a_file_name_that_needs_encoding_is_fetched_from_promptdecks_own_server(tmp_path: Path) -> None:
    skill = tmp_path / "lib" / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo.\n---\nRead my notes.md.\n")
    (skill / "my notes.md").write_text("notes\n")
    (skill / "naïve.md").write_text("naïve\n")
    server = f"{PYTHON} -m promptdeck serve --no-watch {tmp_path / 'lib'}"
    listed = promptdeck("skills", server)
    assert listed.returncode == 0 and "skill://demo/SKILL.md" in listed.stdout, listed.stderr
    done = promptdeck("skill", server, "skill://demo", "--to", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    written = tmp_path / "out" / "demo"
    assert (written / "my notes.md").read_text() == "notes\n" and (written / "naïve.md").read_text() == "naïve\n"
