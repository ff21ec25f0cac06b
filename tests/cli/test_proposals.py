"""The review commands (``cli.proposals``) and ``publish --propose``, run in this process on a SQLite store:
a proposal opened by a publish that leaves its label where it was, listed and reviewed with its diff and tests,
approved by someone other than its author, and merged; a direct move of the label refused in one line."""

from __future__ import annotations

from pathlib import Path

from tests.support.store_schema import promptdeck_in_process as run

GREET = "---\ntests:\n  - vars: {{}}\n    assert:\n      - {{type: contains, value: Hello}}\n---\n{text}\n"


def test_a_proposal_from_publish_to_merge(tmp_path: Path) -> None:
    url, folder = f"sqlite:///{tmp_path}/s.db", tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text(GREET.format(text="Hello"))
    assert run("publish", str(folder), "--store", url, "--label", "production")[0] == 0
    code, out, _ = run("protect", "production", "--scope", "release", "--require-approvals", "1", "--store", url)
    assert code == 0 and "approved by 1 holder of release other than its authors" in out
    (folder / "greet.md").write_text(GREET.format(text="Hello, friend"))
    code, out, err = run("publish", str(folder), "--store", url, "--label", "production", "--propose",
                         "--author", "ana", "-m", "warmer")
    assert code == 0, err
    assert "proposal 1 proposes 1 file for label production, which does not move until it is merged" in out
    code, out, _ = run("proposals", "--store", url)
    assert out.startswith("proposal 1  production  open  ana  ") and "approvals 0/1  warmer" in out
    code, out, _ = run("review", "1", "--store", url)
    assert "--- greet.md: v1 -> v2" in out and "+Hello, friend" in out and "-Hello" in out
    assert "tests of what the merge would serve: 1 of 1 test case passed in 1 prompt" in out, out
    code, _, err = run("label", "greet@2", "production", "--store", url)
    assert code == 1 and "requires 1 approval: it moves only by the merge of an approved proposal" in err
    code, _, err = run("approve", "1", "--store", url, "--author", "ana")
    assert code == 1 and "ana wrote proposal 1: its authors cannot approve it" in err
    assert run("comment", "1", "-m", "nice \x1b[31m", "--store", url, "--author", "bob")[0] == 0
    code, out, _ = run("approve", "1", "--store", url, "--author", "bob")
    assert code == 0 and "approved proposal 1: 1 of the 1 its label requires" in out
    code, out, _ = run("review", "1", "--store", url, "--no-tests")
    assert "bob  comment: nice \\u001b[31m" in out and "bob  approve" in out  # through the terminal gate
    code, out, err = run("merge", "1", "--store", url, "--author", "ana")
    assert code == 0 and "merged proposal 1: label production is at position 2" in out, err
    audit = run("history", "--label", "production", "--store", url)[1]
    assert "merge proposal 1" in audit and "; every move, the merge of a proposal with 1 approval" in audit
    code, _, err = run("merge", "1", "--store", url)
    assert code == 1 and "proposal 1 is merged; nothing changed" in err
    assert run("proposals", "--store", url)[1] == "no open proposals\n"


def test_propose_needs_a_label_and_reject_needs_a_reason(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    code, _, err = run("publish", str(tmp_path), "--store", url, "--propose")
    assert code == 2 and "--propose needs --label" in err
    code, _, err = run("reject", "1", "--store", url)
    assert code == 2 and "Missing option '-m'" in err
