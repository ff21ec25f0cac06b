"""Prompts inside prompts (sources/files/compose.py): ``prompt(NAME, **ARGUMENTS)``, the role line
``user: {prompt: NAME, arguments: {...}}``, and what ``check`` refuses library-wide (issue 31)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from promptdeck.protocol.content import Image, Text
from promptdeck.protocol.errors import InternalError, InvalidParams
from promptdeck.protocol.revisions import LATEST
from promptdeck.server.app import PromptServer
from promptdeck.server.local import LocalClient
from promptdeck.sources.files.source import FileSource
from tests.support.files import PNG, load, prompts, render

RULES = "---\narguments:\n  - name: tone\n    enum: [kind, blunt]\n    required: true\n" \
        "  - name: n\n    type: integer\n---\nBe {{ tone }}.{% if n is defined %} n={{ n + 1 }}{% endif %}\n" \
        "assistant:\nUnderstood.\n"


def problems(source: FileSource) -> list[str]:
    return sorted(str(e) for errors in source.errors.values() for e in errors) + [str(e) for e in source.composition]


def test_prompt_renders_another_prompt_with_typed_arguments(tmp_path: Path) -> None:
    source = load(tmp_path, {"rules.md": RULES, "p.md": "---\narguments:\n  - name: t\n---\nStart.\n"
                                                        "{{ prompt(\"rules\", tone=t, n=2) }}\n"})
    assert problems(source) == []
    [message] = render(prompts(source)["p"], t="blunt")
    # its text messages joined by blank lines; the integer was sent as text and typed by the argument
    assert message.content == Text("Start.\nBe blunt. n=3\n\nUnderstood.")


def test_argument_errors_name_both_prompts(tmp_path: Path) -> None:
    source = load(tmp_path, {"rules.md": RULES,
                             "p.md": "---\narguments:\n  - name: t\n---\n{{ prompt(\"rules\", tone=t) }}\n"})
    with pytest.raises(InvalidParams) as err:
        render(prompts(source)["p"], t="loud")
    assert err.value.code == -32602
    assert err.value.message.startswith("prompt 'p': prompt('rules'): prompt 'rules': argument 'tone'")
    assert err.value.data == {"prompt": "p", "composed": "rules"}


def test_a_role_line_brings_a_prompts_messages_whole(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "look.png": PNG,
        "shot.md": "---\narguments:\n  - name: lang\n---\nuser: {image: look.png}\nuser:\nIn {{ lang }}?\n"
                   "assistant:\nYes.\n",
        "p.md": "---\narguments:\n  - name: lang\n---\nuser:\nFirst.\nuser: {prompt: shot, arguments: {lang: "
                "\"{{ lang }}!\"}}\nuser:\nLast.\n",
    })
    assert problems(source) == []
    messages = render(prompts(source)["p"], lang="go")
    assert [m.role for m in messages] == ["user", "user", "user", "assistant", "user"]
    assert isinstance(messages[1].content, Image) and messages[2].content == Text("In go!?")
    assert prompts(source)["p"].uses.prompts == {"shot"}


@pytest.mark.parametrize("line, problem", [
    ("user: {prompt: x, image: a.png}", "a message holds one block; got both 'image' and 'prompt'"),
    ("user: {prompt: [1]}", "prompt names a prompt of the library"),
    ("user: {prompt: x, arguments: [1]}", "arguments of a prompt line must be a mapping"),
    ("user: {image: a.png, arguments: {a: 1}}", "arguments go with a prompt"),
    ("user: {prompt: x, annotations: {priority: 1}}", "it takes no annotations"),
    ("user: {prompt: x}\nsome text", "a prompt line takes no text below it"),
])
def test_a_bad_prompt_line_is_a_problem_at_its_line(tmp_path: Path, line: str, problem: str) -> None:
    source = load(tmp_path, {"a.png": PNG, "x.md": "x\n", "p.md": f"---\ndescription: d\n---\n{line}\n"})
    [error] = source.errors["p.md"]
    assert problem in error.reason and error.line == 4


def test_check_refuses_unknown_prompts_and_arguments_at_their_line(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "rules.md": RULES,
        "p.md": "one\n{{ prompt(\"ruels\", tone=\"kind\") }}\n{{ prompt(\"rules\", tone=\"kind\", colour=1) }}\n"
                "{{ prompt(\"rules\") }}\nuser: {prompt: rules, arguments: {tone: kind, size: 2}}\n",
    })
    assert problems(source) == [
        "p.md:2: prompt('ruels'): no prompt 'ruels' in the library; did you mean 'rules'?",
        "p.md:3: prompt('rules'): 'rules' has no argument 'colour' (it takes: n, tone)",
        "p.md:4: prompt('rules') is missing required argument 'tone'",
        "p.md:5: prompt('rules'): 'rules' has no argument 'size' (it takes: n, tone)",
    ]


def test_check_refuses_cycles_with_their_chain(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "a.md": "{{ prompt(\"b\") }}\n", "b.md": "x\n{{ prompt(\"a\") }}\n",
        "self.md": "{{ prompt(\"self\") }}\n",
        "_p/c.md": "{{ prompt(\"d\") }}", "d.md": "{% include \"_p/c.md\" %}\n",
    })
    assert problems(source) == ["b.md:2: prompt cycle: a → b → a", "d.md:1: prompt cycle: d → d",
                                "self.md:1: prompt cycle: self → self"]
    with pytest.raises(InternalError) as err:
        render(prompts(source)["a"])
    assert err.value.detail is not None and "prompt cycle: a → b → a" in err.value.detail


def test_check_refuses_a_wider_prompt_composing_a_narrower_one(tmp_path: Path) -> None:
    secret = "---\nscopes: [hr:payroll]\n---\nsalaries\n"
    source = load(tmp_path, {
        "secret.md": secret,
        "open.md": "{{ prompt(\"secret\") }}\n",
        "sales.md": "---\nscopes: [sales]\n---\nuser: {prompt: secret}\n",
        "hr.md": "---\nscopes: [hr]\n---\nuser: {prompt: secret}\n",  # holding hr grants hr:payroll: fine
        "payroll.md": "---\nscopes: [hr:payroll]\n---\n{{ prompt(\"secret\") }}\n",
    })
    assert problems(source) == [
        "open.md:1: prompt 'open', seen by everyone, composes 'secret', restricted to hr:payroll: it would show "
        "'secret' to principals who may not see it; restrict 'open' as narrowly, or compose another prompt",
        "sales.md:4: prompt 'sales', seen by sales, composes 'secret', restricted to hr:payroll: it would show "
        "'secret' to principals who may not see it; restrict 'sales' as narrowly, or compose another prompt",
    ]
    assert render(prompts(source)["payroll"])[0].content == Text("salaries")


def test_a_render_never_shows_a_narrower_prompt_and_logs_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    source = load(tmp_path, {"secret.md": "---\nscopes: [hr]\n---\nsalaries\n",
                             "open.md": "---\narguments:\n  - name: which\n---\n{{ prompt(which) }}\n"})
    caplog.set_level(logging.WARNING, "promptdeck.render")
    with pytest.raises(InvalidParams) as err:
        render(prompts(source)["open"], which="secret")
    assert err.value.message == "prompt 'open': prompt('secret'): no prompt 'secret' in the library"
    assert "restricted to hr" in caplog.text and "salaries" not in str(err.value.to_wire())
    with pytest.raises(InvalidParams, match="no prompt 'nope'"):
        render(prompts(source)["open"], which="nope")


def test_an_inner_render_error_names_the_whole_chain(tmp_path: Path) -> None:
    source = load(tmp_path, {"c.md": "---\narguments:\n  - name: n\n    type: integer\n---\n{{ n + 1 }}\n",
                             "b.md": "{{ prompt(\"c\") }}\n", "a.md": "{{ prompt(\"b\") }}\n",
                             "boom.md": "{{ 1 // 0 }}\n", "d.md": "{{ prompt(\"boom\") }}\n"})
    with pytest.raises(InvalidParams) as err:
        render(prompts(source)["a"])
    assert err.value.message == ("prompt 'a': prompt('b'): prompt 'b': prompt('c'): prompt 'c' needs argument 'n' for "
                                 "this render: it is declared optional, but its template uses it")
    with pytest.raises(InternalError) as failed:
        render(prompts(source)["d"])
    assert failed.value.detail == "prompt 'd': prompt('boom'): prompt 'boom': ZeroDivisionError: integer division " \
                                  "or modulo by zero"


def test_composition_with_a_check_that_passes_renders(tmp_path: Path) -> None:
    """The issue's complaint: a check that passes must mean the render works."""
    source = load(tmp_path, {"_partials/tone.md": "Be kind.", "a.md": "{% include \"_partials/tone.md\" %}\n",
                             "b.md": "{{ prompt(\"a\") }} then more\n"})
    assert problems(source) == []
    assert render(prompts(source)["b"])[0].content == Text("Be kind. then more")


def test_render_over_a_local_client_of_a_server(tmp_path: Path) -> None:
    load(tmp_path, {"rules.md": RULES, "p.md": "{{ prompt(\"rules\", tone=\"kind\") }}\n"})
    server = PromptServer()
    server.add_folder(tmp_path)
    answer = LocalClient(server, LATEST.version).request("prompts/get", {"name": "p"})
    assert answer["result"]["messages"] == [{"role": "user", "content": {"type": "text",
                                                                         "text": "Be kind.\n\nUnderstood."}}]


def test_the_same_name_in_two_folders_composes_within_its_own(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    load(one, {"rules.md": "rules of one\n", "p.md": "{{ prompt(\"rules\") }}\n"})
    load(two, {"rules.md": "rules of two\n", "q.md": "{{ prompt(\"rules\") }}\n"})
    server = PromptServer()
    server.add_folder(one)
    server.add_folder(two)
    client = LocalClient(server, LATEST.version)
    assert client.request("prompts/get", {"name": "p"})["result"]["messages"][0]["content"]["text"] == "rules of one"
    assert client.request("prompts/get", {"name": "q"})["result"]["messages"][0]["content"]["text"] == "rules of two"
