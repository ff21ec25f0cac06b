"""An empty prompt file (issue 38, finding 11): ``check`` passed it as "1 prompt ok", and the web editor saved
it as a version. ``check`` (a real process) refuses it with the file and why; the editor's check, save and
publish with a label refuse it too, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.support.bounded_runs import WRITERS, serving

WHY = "the prompt is empty: it has no text to send; write it below the front matter"


def test_check_refuses_an_empty_prompt_file(tmp_path: Path) -> None:
    (tmp_path / "blank.md").write_text("")
    (tmp_path / "front.md").write_text("---\ndescription: nothing below\n---\n\n")
    (tmp_path / "ok.md").write_text("Hi\n")
    done = subprocess.run([sys.executable, "-m", "promptdeck", "check", str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout.splitlines()[:2] == [f"blank.md: {WHY}", f"front.md: {WHY}"]


def test_the_editor_refuses_to_save_an_empty_prompt(tmp_path: Path, store_url: str) -> None:
    with serving(tmp_path, store_url) as (api, _):
        ann = WRITERS["ann"]
        for text in ("", "---\ndescription: x\n---\n  \n"):
            checked = httpx.post(api + "/check", json={"prompt": "greet", "text": text}, headers=ann, timeout=30)
            assert checked.json()["problems"] == [{"line": None, "message": WHY}]
            for label in (None, "production"):
                body = {"prompt": "greet", "text": text, **({"label": label} if label else {})}
                saved = httpx.post(api + "/publish", json=body, headers=ann, timeout=30)
                assert saved.status_code == 422 and saved.json()["problems"][0]["message"] == WHY
        history = httpx.get(api + "/history", params={"prompt": "greet"}, headers=ann, timeout=30).json()
        assert [v["version"] for v in history["versions"]] == [1]
