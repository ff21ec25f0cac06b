"""Prompt files: names, messages, blocks, errors with their lines, confinement, the sandbox, reloads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.prompts import render as render_module
from promptdeck.prompts.content import Image, Resource, ResourceLink, Text
from promptdeck.prompts.render import TemplateText
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.errors import InternalError, InvalidParams
from promptdeck.sources._library import Library
from promptdeck.sources.files import FileSource

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def library(tmp_path: Path, files: dict[str, str | bytes]) -> FileSource:
    for rel, content in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    source = FileSource(tmp_path)
    source.load(compile_all=True)
    return source


def prompts(source: FileSource) -> dict[str, Prompt]:
    return {p.name: p for p in source.prompts()}


def render(prompt: Prompt, **values: Any) -> Any:
    return prompt.render(values, RenderContext(prompt.name))


def problems(source: FileSource) -> list[tuple[str, int | None, str]]:
    return [(e.path, e.line, e.reason) for errors in source.errors.values() for e in errors]


def test_names_from_paths_and_material_folders_ignored(tmp_path: Path) -> None:
    source = library(tmp_path, {"git/commit.md": "c", "top.md": "t", "_material/x.md": "m", ".hidden/y.md": "h",
                                "git/_draft.md": "d", "renamed.md": "---\nname: other.name\n---\nr"})
    assert sorted(prompts(source)) == ["git.commit", "other.name", "top"]


def test_role_lines_split_messages_but_not_inside_fences(tmp_path: Path) -> None:
    body = "first\n\nassistant:\nsecond\n```yaml\nuser:\n```python\nstill fenced\n```\nuser:\nthird\n"
    source = library(tmp_path, {"p.md": body})
    messages = render(prompts(source)["p"])
    assert [(m.role, m.content.text) for m in messages] == [
        ("user", "first"), ("assistant", "second\n```yaml\nuser:\n```python\nstill fenced\n```"), ("user", "third")]


def test_every_block_kind(tmp_path: Path) -> None:
    body = (
        "---\narguments:\n  - {name: log, default: 'boom'}\n  - {name: shot, type: path, default: a/pic.png}\n---\n"
        "user: {image: \"{{ shot }}\"}\n"
        "user: {resource: a/notes.txt, annotations: {audience: [assistant], priority: 0.2}}\n"
        "user: {resource: {uri: \"file:///var/log/app.log\", mimeType: text/plain}}\n"
        "last: {{ log }}\n"
        "assistant: {resource_link: a/notes.txt}\n"
        "assistant: {resource_link: {uri: \"https://x/y\", name: y, size: 3}}\n"
        "user: {resource: a/blob.bin}\n"
    )
    source = library(tmp_path, {"p.md": body, "a/pic.png": PNG, "a/notes.txt": "notes\n", "a/blob.bin": b"\x00\xff"})
    assert problems(source) == []
    contents = [m.content for m in render(prompts(source)["p"], log="boom", shot="a/pic.png")]
    image, notes, inline, link, link2, blob = contents
    assert isinstance(image, Image) and image.mime_type == "image/png" and image.data == PNG
    assert isinstance(notes, Resource) and notes.text == "notes\n" and notes.uri == "promptdeck:///a/notes.txt"
    assert notes.annotations is not None and notes.annotations.priority == 0.2
    assert isinstance(inline, Resource) and inline.text == "last: boom" and inline.uri == "file:///var/log/app.log"
    assert isinstance(link, ResourceLink) and link.size == 6 and link.name == "notes.txt"
    assert isinstance(link2, ResourceLink) and link2.uri == "https://x/y" and link2.size == 3
    assert isinstance(blob, Resource) and blob.blob == b"\x00\xff"


def test_a_message_that_renders_empty_is_left_out(tmp_path: Path) -> None:
    body = "---\narguments:\n  - {name: more, type: boolean, default: false}\n---\nalways\nuser:\n" \
           "{% if more %}extra{% endif %}\n"
    p = prompts(library(tmp_path, {"p.md": body}))["p"]
    assert [m.content.text for m in render(p, more=False)] == ["always"]
    assert [m.content.text for m in render(p, more=True)] == ["always", "extra"]


@pytest.mark.parametrize("text, line, words", [
    ("---\ndescription: [unclosed\n---\nx", 3, "not valid YAML"),
    ("---\ncolour: red\n---\nx", 2, "unknown front matter key 'colour'"),
    ("---\narguments:\n  - name: a\n  - name: b\n    type: date\n---\nx", 4, "type must be one of"),
    ("---\ndescription: d\n---\none\nassistant:\ntwo\nuser:\n{% if %}\n", 8, "template error"),
    ("---\n---\nuser: {image: missing.png}\n", 3, "does not exist"),
    ("user: {image: pic.png}\ntext under an image\n", 2, "takes no text"),
    ("user: {video: pic.png}\n", 1, "unknown key 'video'"),
    ("Hello {{ nobody }}\n", 1, "'nobody', which is not an argument"),
    ("---\nno closing line\n", 1, "no closing '---'"),
])
def test_problems_name_the_file_and_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    source = library(tmp_path, {"bad.md": text, "pic.png": PNG})
    [(path, found_line, reason)] = problems(source)
    assert path == "bad.md" and found_line == line and words in reason, (found_line, reason)
    assert "bad" not in prompts(source)


def test_paths_stay_inside_the_library(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (root / "a").mkdir(parents=True)
    os.symlink(outside, root / "a" / "link.txt")
    body = "---\narguments:\n  - {name: f, type: path, required: true}\n---\nuser: {resource: \"{{ f }}\"}\n"
    source = library(root, {"p.md": body, "a/ok.txt": "fine"})
    p = prompts(source)["p"]
    assert render(p, f="a/ok.txt")[0].content.text == "fine"
    for bad in ("a/link.txt", "a/nothing.txt"):
        with pytest.raises(InvalidParams) as err:
            render(p, f=bad)
        assert err.value.code == -32602 and "argument 'f'" in err.value.message
    lib = Library(root)
    for bad in ("../secret.txt", str(outside), "a/../../secret.txt"):
        with pytest.raises(InvalidParams):
            lib.read(bad)


def test_templated_image_path_must_be_an_image(tmp_path: Path) -> None:
    body = "---\narguments:\n  - {name: f, type: path, required: true}\n---\nuser: {image: \"{{ f }}\"}\n"
    p = prompts(library(tmp_path, {"p.md": body, "notes.txt": "x", "pic.png": PNG}))["p"]
    assert isinstance(render(p, f="pic.png")[0].content, Image)
    with pytest.raises(InvalidParams, match="not an image"):
        render(p, f="notes.txt")


def test_sandbox_and_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = library(tmp_path, {
        "escape.md": "{{ read.__globals__ }}\n",
        "spin.md": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
    })
    monkeypatch.setattr(render_module, "MAX_RENDER_SECONDS", 0.2)
    for name in ("escape", "spin"):
        with pytest.raises(InternalError) as err:
            render(prompts(source)[name])
        assert err.value.message == "Internal error" and err.value.detail


def test_reload_keeps_the_last_good_version_and_drops_deleted_files(tmp_path: Path) -> None:
    source = library(tmp_path, {"p.md": "good\n", "q.md": "other\n"})
    (tmp_path / "p.md").write_text("---\narguments: 5\n---\nbad\n")
    source.update([str(tmp_path / "p.md")])
    assert render(prompts(source)["p"])[0].content.text == "good"
    assert problems(source)[0][:2] == ("p.md", 2)
    (tmp_path / "p.md").write_text("fixed\n")
    source.update(["p.md"])
    assert render(prompts(source)["p"])[0].content.text == "fixed" and problems(source) == []
    (tmp_path / "q.md").unlink()
    source.update([str(tmp_path / "q.md")])
    assert sorted(prompts(source)) == ["p"]


def test_duplicate_names_are_reported(tmp_path: Path) -> None:
    source = library(tmp_path, {"a.md": "---\nname: same\n---\nx", "b.md": "---\nname: same\n---\ny"})
    assert [p.source for p in source.prompts()] == ["a.md"]
    assert "already used by a.md" in source.errors["b.md"][0].reason


class _Envs:
    def __init__(self) -> None:
        self._env: Any = None

    @property
    def env(self) -> Any:
        if self._env is None:
            self._env = render_module.make_environment()
        return self._env


@given(st.lists(st.tuples(st.text(alphabet=st.characters(blacklist_characters="{}%#"), max_size=10),
                          st.sampled_from(["a", "b", "num"])), max_size=5),
       st.text(alphabet=st.characters(blacklist_characters="{}%#"), max_size=10))
def test_fast_path_renders_like_jinja(parts: list[tuple[str, str]], tail: str) -> None:
    source = "".join(f"{text}{{{{ {name} }}}}" for text, name in parts) + tail
    values = {"a": "x", "b": "", "num": 3}
    fast = TemplateText(source, _Envs())
    assert fast.names == tuple(name for _, name in parts)
    jinja = _Envs().env.from_string(source)
    assert fast.render(values) == jinja.render(values)


def test_text_block_content_types(tmp_path: Path) -> None:
    [message] = render(prompts(library(tmp_path, {"p.md": "\n\n  indented\n\n"}))["p"])
    assert isinstance(message.content, Text) and message.content.text == "  indented"
