"""``promptdeck import`` given hostile input, as a real process: names that would leave the target, inputs too
large or too deep, wrong types, too many versions, a target whose folder is a symbolic link out, terminal
escapes in a name. Each is one error line naming the input and the prompt (exit 1), and nothing is written:
no folder, no store, no file beside the target. Records are made by Langfuse's own SDK types."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import pd
from tests.support.imports import langfuse_records, write_json


def hostile(kind: str) -> Any:
    records = langfuse_records()
    if kind == "traversal":
        return [{**records[0], "name": "../../escaped"}]
    if kind == "absolute":
        return [{**records[0], "name": "/tmp/escaped"}]
    if kind == "deep":
        return None  # written raw below
    if kind == "wrong type":
        return [{**records[0], "prompt": {"text": "x"}}]
    if kind == "labels not a list":
        return [{**records[0], "labels": "production"}]
    if kind == "too many versions":
        return [{**records[0], "version": n} for n in range(1, 1002)]
    if kind == "text too large":
        return [{**records[0], "prompt": "x" * (1024 * 1024 + 1)}]
    if kind == "escape in a name":
        return [{**records[0], "name": "evil\x1b]52;c;aGk=\x07"}]
    raise AssertionError(kind)


CASES = {
    "traversal": "prompt name '../../escaped' is not safe as a path",
    "absolute": "prompt name '/tmp/escaped' is not safe as a path",
    "deep": "the input is nested too deeply",
    "wrong type": "prompt 'greet': Expected `str | array`, got `object` - at `$.prompt`",
    "labels not a list": "prompt 'greet': Expected `array`, got `str` - at `$.labels`",
    "too many versions": "prompt 'greet' has more than 1000 versions",
    "text too large": "prompt 'greet' version 1 is larger than 1048576 bytes",
    "escape in a name": "is not safe as a path",
}


@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.parametrize("target", ["--to", "--store"])
def test_a_hostile_input_is_one_error_and_writes_nothing(tmp_path: Path, kind: str, target: str) -> None:
    source = tmp_path / "in" / "lf.json"
    source.parent.mkdir()
    if kind == "deep":
        source.write_text("[" * 100_000 + "]" * 100_000)
    else:
        write_json(source, hostile(kind))
    out = tmp_path / "out"
    done = pd("import", "langfuse", str(source), target, str(out / "s.db" if target == "--store" else out),
              check=False)
    assert done.returncode == 1, done
    assert done.stderr.startswith(f"promptdeck: {source}: ") and CASES[kind] in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.rglob("*")) == ["in", "lf.json"]


def test_an_input_over_the_size_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    source = tmp_path / "huge.json"
    with source.open("wb") as file:
        file.truncate(32 * 1024 * 1024 + 1)  # sparse: the bound is checked on the size, not by reading
    done = pd("import", "openai", str(source), "--to", str(tmp_path / "out"), check=False)
    assert done.returncode == 1 and done.stderr == f"promptdeck: {source}: the input is larger than 33554432 bytes\n"
    assert not (tmp_path / "out").exists()


def test_a_folder_in_the_target_that_links_out_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "lib"
    target.mkdir()
    (target / "support").symlink_to(outside)
    source = write_json(tmp_path / "lf.json", langfuse_records())
    done = pd("import", "langfuse", str(source), "--to", str(target), check=False)
    assert done.returncode == 1 and "would be written outside" in done.stderr and "nothing was written" in done.stderr
    assert os.listdir(outside) == [] and sorted(os.listdir(target)) == ["support"]


def test_a_langsmith_name_given_with_name_is_held_to_the_same_rule(tmp_path: Path) -> None:
    manifest = {"lc": 1, "type": "constructor", "id": ["PromptTemplate"],
                "kwargs": {"template": "{x}", "template_format": "f-string"}}
    source = write_json(tmp_path / "m.json", manifest)
    done = pd("import", "langsmith", str(source), "--name", "../up", "--to", str(tmp_path / "out"), check=False)
    assert done.returncode == 1 and "prompt name '../up' is not safe as a path" in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "up.md").exists()
    assert json.loads(source.read_text()) == manifest
