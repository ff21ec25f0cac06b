"""docs/store.md's CI recipe ("In CI") runs as written: its workflow's `run` steps, in order, for the events that
select them (a pull request, a push to main, a tag), in a git repository made here, against a store.

Only what GitHub itself provides is stood in for: the checkout (the repository is made here, as a clone of the
"remote" one), the install step (promptdeck is the one under test, linked where the workflow puts it), the
`${{ … }}` expressions and the `if:` conditions. Every expression and condition the workflow uses must be one
this test knows, so a change to the recipe fails here until the test follows it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.support.paths import REPO

STORE_PAGE = REPO / "docs" / "store.md"

GREET = """---
description: Greet someone
arguments:
  - {name: who, required: true}
tests:
  - vars: {who: Ada}
    assert:
      - {type: contains, value: "EXPECTED Ada"}
---
GREETING {{ who }}!
"""

def greet(expected: str, greeting: str) -> str:
    return GREET.replace("EXPECTED", expected).replace("GREETING", greeting)


#: The steps GitHub or the runner provides, stood in for here (see the module doc).
STOOD_IN = {"actions/checkout@v4", "install promptdeck"}


def workflow() -> dict[str, Any]:
    section = STORE_PAGE.read_text().split("### In CI", 1)[1]
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found, "docs/store.md's In CI section lost its workflow"
    loaded: dict[str, Any] = yaml.safe_load(found.group(1))
    return loaded


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com",
           "GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.com"}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def condition(text: str, event: Mapping[str, str]) -> bool:
    """The `if:` conditions the recipe uses, evaluated for ``event`` (an unknown one fails the test)."""
    known = {
        "github.event_name == 'push' && github.ref == 'refs/heads/main'":
            event["event_name"] == "push" and event["ref"] == "refs/heads/main",
        "startsWith(github.ref, 'refs/tags/v')": event["ref"].startswith("refs/tags/v"),
    }
    assert text in known, f"the recipe has a condition this test does not know: {text!r}"
    return known[text]


def expanded(text: str, event: Mapping[str, str]) -> str:
    """``text`` with the recipe's `${{ … }}` expressions as GitHub would put them (shell-quoted values)."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        assert name in event["expressions"], f"the recipe uses an expression this test does not know: {name!r}"
        return str(event["expressions"][name])  # type: ignore[index]
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def run_job(flow: dict[str, Any], checkout: Path, event: dict[str, Any]) -> list[str]:
    """Run the workflow's one job for ``event`` in ``checkout``; the names of the steps that ran."""
    env = {**os.environ, **{name: expanded(str(value), event) for name, value in flow["env"].items()}}
    ran: list[str] = []
    (job,) = flow["jobs"].values()
    for step in job["steps"]:
        name = step.get("name") or step["uses"]
        if name in STOOD_IN:
            continue
        if "if" in step and not condition(step["if"], event):
            continue
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", expanded(step["run"], event)], cwd=checkout,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"step {name!r} failed for {event['ref']}:\n{done.stdout}\n{done.stderr}"
        ran.append(name)
    return ran


def test_the_ci_recipe_checks_a_pull_request_publishes_main_and_promotes_a_tag(tmp_path: Path) -> None:
    flow = workflow()
    (job,) = flow["jobs"].values()
    assert {step.get("name") or step["uses"] for step in job["steps"]} >= STOOD_IN
    triggers: dict[Any, Any] = flow
    assert triggers[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    remote = tmp_path / "remote"
    (remote / "prompts").mkdir(parents=True)
    git(remote, "init", "-q", "-b", "main")
    (remote / "prompts" / "greet.md").write_text(greet("Hello", "Hello"))
    (remote / "prompts" / "bye.md").write_text("---\ndescription: Say goodbye\n---\nBye.\n")
    git(remote, "add", ".")
    git(remote, "commit", "-q", "-m", "first prompts")
    store = f"sqlite:///{tmp_path / 'prompts.db'}"

    def checkout(ref: str) -> Path:
        """What actions/checkout leaves: a fresh clone at the ref, promptdeck installed in it."""
        where = tmp_path / f"checkout-{len(list(tmp_path.glob('checkout-*')))}"
        subprocess.run(["git", "clone", "-q", str(remote), str(where)], check=True)
        git(where, "checkout", "-q", ref)
        (where / "promptdeck" / ".venv" / "bin").mkdir(parents=True)
        (where / "promptdeck" / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")
        return where

    def event(name: str, ref: str, **more: str) -> dict[str, Any]:
        return {"event_name": name, "ref": ref, "expressions": {
            "secrets.PROMPTDECK_STORE": store, "vars.PROMPTDECK_GIT": "unused: promptdeck is linked", **more}}

    # A pull request: checked and tested, nothing published.
    git(remote, "checkout", "-q", "-b", "warmer")
    (remote / "prompts" / "greet.md").write_text(greet("Hi there,", "Hi there,"))
    git(remote, "commit", "-q", "-am", "a warmer greeting")
    ran = run_job(flow, checkout("warmer"), event("pull_request", "refs/pull/1/merge"))
    assert ran == ["check and test"]
    assert not (tmp_path / "prompts.db").exists()

    # A pull request whose prompt test fails stops at the check.
    git(remote, "checkout", "-q", "-b", "broken")
    (remote / "prompts" / "greet.md").write_text(greet("Hello", "Howdy"))
    git(remote, "commit", "-q", "-am", "breaks its own test")
    try:
        run_job(flow, checkout("broken"), event("pull_request", "refs/pull/2/merge"))
    except AssertionError as failed:
        assert "step 'check and test' failed" in str(failed)
    else:
        raise AssertionError("a pull request whose prompt test fails passed the recipe")

    # Merged to main: published to staging, with its commit.
    git(remote, "checkout", "-q", "main")
    git(remote, "merge", "-q", "--no-ff", "-m", "Merge: a warmer greeting", "warmer")
    head = git(remote, "rev-parse", "HEAD")
    ran = run_job(flow, checkout("main"),
                  event("push", "refs/heads/main", **{"github.event.head_commit.message": "'Merge: warmer'"}))
    assert ran == ["check and test", "publish to staging"]
    pd = Path(sys.executable).parent / "promptdeck"
    history = subprocess.run([str(pd), "history", "greet", "--store", store], capture_output=True, text=True,
                             check=True).stdout
    assert f"git {head[:12]} main" in history and "Merge: warmer" in history

    # A tag: production gets what staging holds.
    git(remote, "tag", "v1")
    ran = run_job(flow, checkout("v1"), event("push", "refs/tags/v1", **{"github.ref_name": "v1"}))
    assert ran == ["check and test", "promote to production"]
    moves = subprocess.run([str(pd), "history", "--label", "production", "--store", store], capture_output=True,
                           text=True, check=True).stdout
    assert "promote staging" in moves and "release v1" in moves
    rendered = subprocess.run([str(pd), "get", f"{pd} serve --store {store} --label production", "greet", "-a",
                               "who=Ada"], capture_output=True, text=True, timeout=120)
    assert "Hi there, Ada!" in rendered.stdout, rendered.stderr
