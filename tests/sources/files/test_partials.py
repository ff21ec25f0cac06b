"""Partials (sources/files/partials.py): ``{% include %}``, ``{% import %}`` and ``{% from … import %}`` of
library files through a loader confined as ``read()`` is, checked at the including file's line (issue 31)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptdeck.protocol.content import Text
from promptdeck.protocol.errors import InvalidParams, PromptFileError
from promptdeck.sources.files.source import FileSource
from tests.support.files import load, only, prompts, render


def problems(source: FileSource) -> list[str]:
    return sorted(str(e) for errors in source.errors.values() for e in errors) + [str(e) for e in source.composition]


def text(messages: list) -> str:  # type: ignore[type-arg]
    [message] = messages
    assert isinstance(message.content, Text)
    return message.content.text


def test_include_import_and_from_import_render_library_files(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_partials/tone.md": "Be {{ tone }}.\n",
        "_partials/macros.j2": "{% macro item(x) %}* {{ x }}{% endmacro %}",
        "shared.txt": "plain words",
        "p.md": "---\narguments:\n  - name: tone\n---\n{% include \"_partials/tone.md\" %}"
                "{% import \"_partials/macros.j2\" as m %}{{ m.item(\"a\") }}\n"
                "{% from \"_partials/macros.j2\" import item %}{{ item(\"b\") }}\n{% include \"shared.txt\" %}\n",
    })
    assert problems(source) == []
    # Jinja drops the last newline of an included template, as of any template
    assert text(render(only(source), tone="calm")) == "Be calm.* a\n* b\nplain words"


def test_a_literal_partial_is_checked_at_the_including_line(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_p/bad.md": "one\ntwo {% if %}\n",
        "missing.md": "intro\n\n{% include \"_p/none.md\" %}\n",
        "broken.md": "---\ndescription: x\n---\nfirst\n{% include \"_p/bad.md\" %}\n",
        "prompt-file.md": "{% include \"missing.md\" %}\n",
        "hidden.md": "{% include \".secret.md\" %}\n",
        ".secret.md": "s",
    })
    assert problems(source) == [
        "broken.md:5: include '_p/bad.md': partial '_p/bad.md' line 2: Expected an expression, got 'end of "
        "statement block'",
        "hidden.md:1: include '.secret.md': partial '.secret.md' is hidden; templates include material files only",
        "missing.md:3: include '_p/none.md': partial '_p/none.md' does not exist in the library",
        "prompt-file.md:1: include 'missing.md': partial 'missing.md' is a prompt file; include its text with "
        "prompt('missing') instead, or move the shared part to a material folder such as _partials/",
    ]


def test_an_include_cycle_is_named_with_its_chain(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_p/a.md": "{% include \"_p/b.md\" %}",
        "_p/b.md": "{% include \"_p/a.md\" %}",
        "_p/self.md": "{% include \"_p/self.md\" %}",
        "p.md": "{% include \"_p/a.md\" %}\n",
        "q.md": "x\n{% include \"_p/self.md\" %}\n",
    })
    assert problems(source) == ["p.md:1: include '_p/a.md': include cycle: _p/a.md → _p/b.md → _p/a.md",
                                "q.md:2: include '_p/self.md': include cycle: _p/self.md → _p/self.md"]


def test_a_partials_read_is_checked_as_the_prompts_own(tmp_path: Path) -> None:
    source = load(tmp_path, {"_p/r.md": "\n{{ read(\"_m/gone.txt\") }}", "p.md": "{% include \"_p/r.md\" %}\n"})
    assert problems(source) == ["p.md:1: include '_p/r.md': partial '_p/r.md' line 2: read('_m/gone.txt'): file "
                                "'_m/gone.txt' does not exist in the library"]


def test_a_dynamic_partial_must_be_in_a_material_folder(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_tones/calm.md": "Stay calm.",
        "top.txt": "top",
        "p.md": "---\narguments:\n  - name: which\n---\n{% include which %}\n",
    })
    p = only(source)
    assert problems(source) == [] and p.uses.dynamic
    assert text(render(p, which="_tones/calm.md")) == "Stay calm."
    for bad, reason in [("top.txt", "not in a material folder"), ("p.md", "is a prompt file"),
                        ("../x.md", "stays inside the library"), ("_tones/.x.md", "is hidden")]:
        with pytest.raises(InvalidParams, match=reason):
            render(p, which=bad)
    with pytest.raises(InvalidParams, match="'_tones/none.md' does not exist") as err:
        render(p, which="_tones/none.md")
    assert err.value.code == -32602


def test_a_partial_changed_on_disk_is_read_again(tmp_path: Path) -> None:
    source = load(tmp_path, {"_p/t.md": "one", "p.md": "{% include \"_p/t.md\" %}\n"})
    p = only(source)
    assert text(render(p)) == "one"
    part = tmp_path / "_p/t.md"
    part.write_text("two, longer")
    os.utime(part, ns=(1, 1))  # a new stamp even on a coarse clock
    assert text(render(p)) == "two, longer"


def test_uses_names_every_file_a_prompt_pulls_in(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_p/outer.md": "{% include \"_p/inner.md\" %}{{ read(\"_m/data.txt\") }}",
        "_p/inner.md": "inner {{ prompt(\"other\") }}",
        "_m/data.txt": "d",
        "_m/top.txt": "t",
        "other.md": "other\n",
        "p.md": "{{ read(\"_m/top.txt\") }}{% include \"_p/outer.md\" %}\n",
        "plain.md": "just text\n",
    })
    found = prompts(source)
    uses = found["p"].uses
    assert uses.files == {"_m/top.txt", "_p/outer.md", "_p/inner.md", "_m/data.txt"}
    assert uses.prompts == {"other"} and not uses.dynamic
    assert [(c.name, c.line) for c in uses.calls] == [("other", 1)]  # at the include in p.md
    assert not found["plain"].uses and not found["other"].uses
    assert text(render(found["p"])) == "tinner otherd"


def test_uses_of_a_large_library_compiles_on_first_ask(tmp_path: Path) -> None:
    source = load(tmp_path, {"_p/x.md": "x", "p.md": "{% include \"_p/x.md\" %}\n"}, compile_all=False)
    assert only(source).uses.files == {"_p/x.md"}


def test_a_prompt_file_linked_as_a_partial_is_refused(tmp_path: Path) -> None:
    (tmp_path / "_p").mkdir()
    (tmp_path / "target.md").write_text("---\nscopes: [hr]\n---\nsecret\n")
    os.symlink(tmp_path / "target.md", tmp_path / "_p/link.md")
    source = load(tmp_path, {"p.md": "{% include \"_p/link.md\" %}\n"})
    assert any("leads to a file" in p and p.startswith("p.md:1:") for p in problems(source)), problems(source)


def test_an_include_without_a_library_fails_as_before(tmp_path: Path) -> None:
    """A template outside a library (the bare environment) still includes nothing."""
    from promptdeck.prompts.render import make_environment

    env = make_environment()
    with pytest.raises(TypeError, match="no loader"):
        env.from_string('{% include "x" %}').render()


def test_problems_are_prompt_file_errors_with_lines(tmp_path: Path) -> None:
    source = load(tmp_path, {"p.md": "a\nb\n{% include \"_none.md\" %}\n"})
    [error] = source.errors["p.md"]
    assert isinstance(error, PromptFileError) and error.line == 3


def test_a_render_of_a_partial_removed_after_check_is_a_client_error(tmp_path: Path) -> None:
    source = load(tmp_path, {"_p/t.md": "t", "p.md": "{% include \"_p/t.md\" %}\n"})
    (tmp_path / "_p/t.md").unlink()
    with pytest.raises(InvalidParams) as err:
        render(only(source))
    assert err.value.message == "prompt 'p': partial '_p/t.md' does not exist in the library"


# -- other tools' formats ----------------------------------------------------------------------------------


def test_dotprompt_partials_are_the_librarys_underscore_files(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_tone.prompt": "Be {{tone}}.",
        "shared/_rules.prompt": "Rules: {{> tone}}",
        "hi.prompt": "---\ninput:\n  schema:\n    tone: string\n---\nHello. {{> shared/rules}}\n",
        "missing.prompt": "---\ninput:\n  schema:\n    tone: string\n---\none\n{{> nothere}}\n",
        "promptfile.prompt": "{{> ../hi}}\n",
        "loop.prompt": "{{> loop}}\n", "_loop.prompt": "again {{> loop}}",
    })
    assert problems(source) == [
        "loop.prompt:1: template error: Circular partial reference: loop -> loop",
        "missing.prompt:7: partial 'nothere' (_nothere.prompt): partial '_nothere.prompt' does not exist in the "
        "library",
        "promptfile.prompt:1: partial '../hi' (../_hi.prompt): partial '../_hi.prompt' must be a relative path that "
        "stays inside the library",
    ]
    hi = prompts(source)["hi"]
    assert text(render(hi, tone="calm")) == "Hello. Rules: Be calm."
    assert hi.uses.files == {"shared/_rules.prompt", "_tone.prompt"}


def test_a_dotprompt_partial_that_leads_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-out.prompt"
    outside.write_text("secret")
    tmp_path.mkdir(exist_ok=True)
    os.symlink(outside, tmp_path / "_x.prompt")
    source = load(tmp_path, {"p.prompt": "{{> x}}\n"})
    [problem] = problems(source)
    assert problem.startswith("p.prompt:1: partial 'x' (_x.prompt): ") and "leaves the library" in problem


def test_prompty_includes_through_the_same_loader(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "_p/sys.md": "Be {{ tone }}.",
        "a.prompty": "---\nname: A\ninputs:\n  tone: {type: string}\n---\nsystem:\n{% include \"_p/sys.md\" %}\n",
        "b.prompty": "---\nname: B\n---\nuser:\nhi\n{% include \"_p/none.md\" %}\n",
    })
    assert problems(source) == ["b.prompty:6: include '_p/none.md': partial '_p/none.md' does not exist in the library"]
    a = prompts(source)["a"]
    assert text(render(a, tone="kind")) == "Be kind." and a.uses.files == {"_p/sys.md"}


def test_ignore_missing_is_left_to_the_render(tmp_path: Path) -> None:
    source = load(tmp_path, {"p.md": "a{% include \"_p/none.md\" ignore missing %}b\n",
                             "q.md": "{% include \"q.md\" ignore missing %}\n"})
    assert source.errors == {}
    found = prompts(source)
    assert text(render(found["p"])) == "ab" and found["p"].uses.dynamic
    with pytest.raises(InvalidParams, match="is a prompt file"):  # a refusal is never ignored
        render(found["q"])
