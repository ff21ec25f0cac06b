"""Exports inline the parts: a prompt using partials and other prompts is written with their text in place,
its arguments still holes where the parts only substitute them, and the inlining reported as the other
warnings are (issue 31)."""

from __future__ import annotations

import re
from pathlib import Path

from promptdeck.export.writers import TARGETS, Written, export
from promptdeck.sources.files.source import FileSource
from tests.support.cli import cli
from tests.support.files import write
from tests.support.libraries import composed_library

PICK = ("---\narguments:\n  - name: which\n    enum: [tone, other]\n    required: true\n  - name: tone\n"
        "    required: true\n---\nPicked: {% include \"_partials/\" ~ which ~ \".md\" %}\n")


def _written(tmp_path: Path, target: str) -> dict[str, Written]:
    folder = write(composed_library(tmp_path), {"pick.md": PICK, "_partials/other.md": "Other {{ tone }}.\n"})
    source = FileSource(folder)
    assert source.load(compile_all=True) == []
    return {w.prompt: w for w in export(source.prompts(), target)}


def test_partials_and_composed_prompts_are_inlined_and_said(tmp_path: Path) -> None:
    written = _written(tmp_path, "copilot")
    review = written["review"]
    assert review.warnings[0] == ("its parts are inlined as rendered: prompt few-shot, prompt rules, "
                                  "_partials/lists.j2, _partials/tone.md")
    # review passes its own tone on to rules, whose tone is one of two: not a hole, fixed and said so
    assert "argument 'tone' is fixed to 'kind': the prompt does more with it than put its value in the text" \
        in review.warnings
    assert review.kept == ["code"]
    body = review.text.split("---\n", 2)[2]
    assert body.startswith("House rules.\nBe kind, and keep it short.\n\nLook at:\n- correctness\n- naming\n")
    assert "Review this python: x=1" in body and body.rstrip().endswith("Review this:\n${input:code}")
    assert written["rules"].warnings[0] == "its parts are inlined as rendered: _partials/tone.md"
    assert not any("inlined" in w for w in written["few-shot"].warnings)


def test_an_argument_a_partial_only_substitutes_stays_a_hole_and_renders_the_same(tmp_path: Path) -> None:
    written = _written(tmp_path, "prompty")
    rules = written["rules"]
    assert rules.kept == ["tone"]
    assert "House rules.\nBe {{tone}}, and keep it short." in rules.text
    # filled in as the tool would, the export says what promptdeck renders
    for tone in ("kind", "blunt"):
        rendered = cli("render", str(tmp_path), "rules", "-a", f"tone={tone}").stdout
        assert f"House rules.\nBe {tone}, and keep it short." in rendered
        assert f"House rules.\nBe {tone}, and keep it short." in rules.text.replace("{{tone}}", tone)


def test_a_part_named_by_an_expression_is_inlined_as_the_fixed_argument_picks_it(tmp_path: Path) -> None:
    for target in TARGETS:
        pick = _written(tmp_path / target, target)["pick"]
        assert "a part it names by an expression is inlined as the exported arguments pick it" in pick.warnings
        assert pick.fixed["which"] == "tone", target
        # the tone partial's text, its own hole in the target's syntax (or fixed, where the target has none)
        assert re.search(r"Picked: Be [^,\n]+, and keep it short\.", pick.text), (target, pick.text)
