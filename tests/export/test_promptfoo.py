"""``export --to promptfoo``: a promptfoo project that promptfoo accepts, whose tests, run by promptfoo with its
echo provider, pass and fail exactly where ``promptdeck test`` says they do.

Always: the config is checked against promptfoo's own schema of it (tests/support/promptfoo/config-schema.json,
made from the promptfoo npm package's zod schema by make_schema.mjs there), and every assertion type against
promptfoo's list. Where the promptfoo command is installed (``$PROMPTDECK_PROMPTFOO``, or
tests/peers/node_modules/.bin/promptfoo), promptfoo itself validates the config and runs it: it is ~700 npm
packages, too heavy for every CI run, so it is not among the pinned peers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.paths import REPO

SCHEMA = json.loads((REPO / "tests/support/promptfoo/config-schema.json").read_text())

FILES = {
    "greet.md": """---
arguments:
  - {name: who, required: true}
  - {name: mood, default: calm}
tests:
  - description: greets by name
    vars: {who: Ada}
    assert:
      - {type: equals, value: "Hello Ada, {{ literal }} (calm)"}
      - {type: not-contains, value: TODO}
      - {type: contains-any, value: [Hi, Hello]}
      - {type: max-length, value: 40}
      - {type: regex, value: "^Hello \\\\w+"}
  - description: fails on purpose
    vars: {who: Bob, mood: loud}
    assert:
      - {type: icontains, value: GOODBYE}
  - vars: {}
    error: -32602
---
Hello {{ who }}, {% raw %}{{ literal }}{% endraw %} ({{ mood }})
""",
    "chat.md": """---
arguments:
  - {name: topic, required: true}
tests:
  - vars: {topic: tea}
    assert:
      - {type: starts-with, value: You are terse.}
      - {type: contains-all, value: [terse, tea]}
      - {type: not-is-json}
  - vars: {topic: tea}
    message: 2
    assert:
      - {type: equals, value: Tell me about tea.}
  - description: second message fails
    vars: {topic: tea}
    message: 2
    assert:
      - {type: not-max-length, value: 100}
---
assistant:
You are terse.
user:
Tell me about {{ topic }}.
""",
    "untested.md": "No tests {{ x }}\n".replace("{{ x }}", "here"),
}


def pd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("promptfoo")
    lib = root / "lib"
    for rel, text in FILES.items():
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(text)
    out = root / "out"
    done = pd("export", str(lib), str(out), "--to", "promptfoo")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote 3 prompts of library {lib} as promptfoo to {out} (1 with warnings)\n"
    assert done.stderr == ("prompts/greet.txt: warning: test case 3 expects error -32602, which promptfoo cannot "
                           "check; left out\n")
    return lib, out, yaml.safe_load((out / "promptfooconfig.yaml").read_text())


def test_the_files_and_the_config(exported: tuple[Path, Path, dict[str, Any]]) -> None:
    _, out, config = exported
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "promptfooconfig.yaml", "prompts/chat.json", "prompts/greet.txt", "prompts/untested.txt"]
    assert (out / "prompts/greet.txt").read_text() == "Hello {{ who }}{% raw %}, {{ literal }} ({% endraw %}{{ mood }})"
    assert json.loads((out / "prompts/chat.json").read_text()) == [
        {"role": "assistant", "content": "You are terse."}, {"role": "user", "content": "Tell me about {{ topic }}."}]
    assert config["providers"] == ["echo"]
    assert config["prompts"][0] == {"id": "file://prompts/chat.json", "label": "chat"}
    greet = [t for t in config["tests"] if t["prompts"] == ["greet"]]
    assert [t["metadata"] for t in greet] == [{"promptdeckCase": 1}, {"promptdeckCase": 2}]  # 3 expects an error
    assert greet[0]["assert"][0]["value"] == "{% raw %}Hello Ada, {{ literal }} (calm){% endraw %}"
    assert greet[0]["vars"] == {"mood": "calm", "who": "Ada"}  # the default promptdeck applies, given
    assert greet[0]["assert"][3] == {"type": "javascript", "value": "output.length <= 40"}
    chat = [t for t in config["tests"] if t["prompts"] == ["chat"]]
    assert chat[1]["options"] == {"transform": "JSON.parse(output)[1].content"}
    assert chat[2]["assert"] == [{"type": "javascript", "value": "output.length > 100"}]


def test_promptfoos_schema_accepts_it(exported: tuple[Path, Path, dict[str, Any]]) -> None:
    config = exported[2]
    validator = jsonschema.Draft202012Validator(SCHEMA["config"])
    validator.validate(config)
    known = set(SCHEMA["assertionTypes"])
    for test in config["tests"]:
        for assertion in test["assert"]:
            kind = assertion["type"]
            assert kind.removeprefix("not-") in known, kind
    broken = {**config, "tests": [{**config["tests"][0], "prompts": "greet"}]}
    assert not validator.is_valid(broken)  # the schema is one that can refuse


def _promptfoo() -> str | None:
    given = os.environ.get("PROMPTDECK_PROMPTFOO")
    peer = REPO / "tests/peers/node_modules/.bin/promptfoo"
    found = given or (str(peer) if peer.exists() else None)
    return found if found and shutil.which("node") else None


@pytest.mark.skipif(_promptfoo() is None, reason="promptfoo is not installed ($PROMPTDECK_PROMPTFOO)")
def test_promptfoo_validates_and_runs_it_as_promptdeck_does(exported: tuple[Path, Path, dict[str, Any]],
                                                            tmp_path: Path) -> None:
    lib, out, _ = exported
    command = _promptfoo()
    assert command is not None
    env = {**os.environ, "HOME": str(tmp_path), "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"),
           "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "NO_COLOR": "1"}
    valid = subprocess.run([command, "validate", "config", "-c", "promptfooconfig.yaml"], cwd=out, env=env,
                           capture_output=True, text=True, timeout=120)
    assert valid.returncode == 0 and "Configuration is valid." in valid.stdout, valid.stdout + valid.stderr
    results = tmp_path / "results.json"
    subprocess.run([command, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-write", "--no-progress-bar",
                    "-o", str(results)], cwd=out, env=env, capture_output=True, text=True, timeout=120)
    ran = json.loads(results.read_text())["results"]["results"]
    theirs = sorted((r["promptIdx"], r["testIdx"], r["success"]) for r in ran)
    ours = json.loads(pd("test", str(lib), "--json").stdout)
    config = yaml.safe_load((out / "promptfooconfig.yaml").read_text())
    labels = [p["label"] for p in config["prompts"]]
    expected = []
    for index, test in enumerate(config["tests"]):
        prompt = test["prompts"][0]
        cases = next(p["cases"] for p in ours["prompts"] if p["prompt"] == prompt)
        case = cases[test["metadata"]["promptdeckCase"] - 1]
        expected.append((labels.index(prompt), index, case["passed"]))
    assert theirs == sorted(expected)
    assert [passed for _, _, passed in sorted(expected, key=lambda e: e[1])] == [True, True, False, True, False]
