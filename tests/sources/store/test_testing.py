"""Tests of a stored library (sources/store/testing.py), the API a label move that requires passing tests
calls: a label's prompts, or any set of files, tested as one principal may see them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.testing import run_file_tests, run_label_tests

OPEN = "---\ntests:\n  - {vars: {}, assert: [{type: contains, value: Hi}]}\n---\nHi there\n"
SECRET = "---\nscopes: [hr]\ntests:\n  - {vars: {}, assert: [{type: contains, value: nope}]}\n---\nPay\n"


def published(tmp_path: Path) -> str:
    library = tmp_path / "lib"
    library.mkdir()
    (library / "open.md").write_text(OPEN)
    (library / "secret.md").write_text(SECRET)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(library), "--store", url, "--label",
                           "production", "--skip-tests"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return url


def test_a_label_as_each_principal_sees_it(tmp_path: Path) -> None:
    with Store(published(tmp_path)) as store:
        everyone, problems = run_label_tests(store.reads, "production")
        assert problems == [] and [p.prompt for p in everyone.prompts] == ["open", "secret"]
        assert not everyone.passed and everyone.failed_cases == 1
        outsider, _ = run_label_tests(store.reads, "production", held=frozenset())
        assert [p.prompt for p in outsider.prompts] == ["open"] and outsider.passed
        with pytest.raises(InvalidParams) as refused:
            run_label_tests(store.reads, "production", ["secret"], held=frozenset())
        assert refused.value.message == "unknown prompt 'secret'"  # as for a prompt that is not there
        hr, _ = run_label_tests(store.reads, "production", ["secret"], held=frozenset({"hr"}))
        assert [p.prompt for p in hr.prompts] == ["secret"] and not hr.passed


def test_any_set_of_files_and_paths_that_lead_out(tmp_path: Path) -> None:
    report, problems = run_file_tests({"open.md": OPEN.encode(), "bad.md": b"---\ntests: 7\n---\nx\n"})
    assert report.passed and [p.prompt for p in report.prompts] == ["open"]
    assert problems == ["bad.md:2: tests must be a list of cases, each with vars and assert"]
    with pytest.raises(StoreError, match="leads outside"):
        run_file_tests({"../escape.md": b"x"})
