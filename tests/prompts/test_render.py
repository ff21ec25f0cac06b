"""Templates (prompts/render.py): the substitution fast path and Jinja agree to the character, which
templates take the fast path, compile reports names and mistakes, and renders are bounded in time and size."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment

from promptdeck.prompts import render as render_module
from promptdeck.prompts.render import (
    RenderFailure,
    RenderLimitError,
    TemplateSyntax,
    TemplateText,
    check_deadline,
    make_environment,
    run_bounded,
)
from promptdeck.protocol.errors import InternalError, InvalidParams


class Envs:
    """An ``EnvironmentSource``: the environment made on first use, as a library does."""

    def __init__(self, globals_: dict[str, Any] | None = None) -> None:
        self.made = 0
        self._env: SandboxedEnvironment | None = None
        self._globals = globals_

    @property
    def env(self) -> SandboxedEnvironment:
        if self._env is None:
            self.made += 1
            self._env = make_environment(self._globals)
        return self._env


ENVS = Envs()


def fast(source: str) -> TemplateText:
    text = TemplateText(source, ENVS)
    assert text.simple, source
    return text


def jinja(source: str, values: dict[str, Any]) -> str:
    """What Jinja itself makes of ``source`` in promptdeck's environment."""
    result: str = ENVS.env.from_string(source).render(values)
    return result


# -- which templates take the fast path ---------------------------------------------------------------


@pytest.mark.parametrize(("source", "names"), [
    ("Hello {{ name }}!", ("name",)),
    ("{{a}}{{ b }}{{  c  }}", ("a", "b", "c")),
    ("no placeholders at all", ()),
    ("{{ x }} and {{ x }} again", ("x", "x")),
    ("a } and a { alone", ()),
    ("{ {{ x }} }", ("x",)),
    ("{{ x }}\r\n{{y}}\n", ("x", "y")),
])
def test_substitution_only_templates_take_the_fast_path(source: str, names: tuple[str, ...]) -> None:
    text = TemplateText(source, ENVS)
    assert text.simple and text.names == names


@pytest.mark.parametrize("source", [
    "{% if x %}y{% endif %}",
    "{{ x|upper }}",
    "{{ x.y }}",
    "{# a comment #}",
    "{{- x }}",
    "{{ x -}}",
    "{{ true }}",
    "{{ None }}",
    "{{{ x }}}",
    "{{ x }} {{ 1 + 1 }}",
    "{{ 9lives }}",
    # decided in one scan (``render._is_simple``): marks that only meet once the substitutions are taken out
    "{{{ x }}#",
    "{{{ x }}%}",
    "{{ x }}}",
    "{{ x }}{%",
    "{#{{ x }}",
    "a -}} b",
    "{{ x }}{{-",
])
def test_anything_else_goes_to_jinja(source: str) -> None:
    text = TemplateText(source, ENVS)
    assert not text.simple and text.names == ()


def test_a_fast_template_makes_its_plan_on_first_render() -> None:
    """A large library renders few of its templates: a plan (a list and a string per part) made at load was
    half of what each loaded prompt held (issue 42)."""
    text = TemplateText("Hi {{ who }},\r\nbye {{ who }}\n", ENVS)
    assert text.simple and not text._plan  # known simple, no plan yet
    assert text.names == ("who", "who") and not text._plan
    assert text.render({"who": "you"}) == "Hi you,\nbye you"
    made = text._plan
    assert made == ["Hi ", "who", ",\nbye ", "who", ""]
    assert text.plan == tuple(made) and text.render({"who": "me"}) == "Hi me,\nbye me" and text._plan is made


def test_a_fast_template_never_imports_or_makes_an_environment() -> None:
    envs = Envs()
    text = TemplateText("Hi {{ who }}\n", envs)
    assert text.compile() == frozenset({"who"})
    assert text.render({"who": "you"}) == "Hi you"
    assert envs.made == 0


# -- the fast path agrees with Jinja ------------------------------------------------------------------


@pytest.mark.parametrize(("source", "values"), [
    ("Hello {{ name }}!", {"name": "Ada"}),
    ("trailing newline {{ a }}\n", {"a": 1}),
    ("two trailing newlines\n\n", {}),
    ("crlf\r\nline {{ a }}\r\n", {"a": "x"}),
    ("lone cr\rline{{ a }}\r", {"a": "y"}),
    ("{{ a }}{{ b }}", {"a": None, "b": 1.5}),
    ("{{ a }} {{ b }} {{ c }}", {"a": [1, "two"], "b": {"k": "v"}, "c": True}),
    ("{{ a }}", {"a": "has {{ braces }} and {% tags %} inside"}),
    ("{{ a }}", {"a": "value with\r\na newline"}),  # values are not newline-normalised
    ("", {}),
    ("\n", {}),
])
def test_the_fast_path_renders_what_jinja_renders(source: str, values: dict[str, Any]) -> None:
    assert fast(source).render(values) == jinja(source, values)


@given(st.lists(st.one_of(st.text(alphabet=st.characters(blacklist_characters="{}%#"), max_size=8),
                          st.sampled_from(["a", "b", "name"])), max_size=8),
       st.dictionaries(st.sampled_from(["a", "b", "name"]),
                       st.one_of(st.text(max_size=5), st.integers(), st.none(), st.booleans()), min_size=3))
def test_the_fast_path_agrees_with_jinja_on_any_text(parts: list[str], values: dict[str, Any]) -> None:
    source = "".join("{{ " + part + " }}" if part in ("a", "b", "name") else part for part in parts)
    text = TemplateText(source, ENVS)
    assert text.simple
    assert text.render(values) == jinja(source, values)


def test_an_undefined_name_fails_in_the_same_words_on_both_paths() -> None:
    with pytest.raises(RenderFailure) as quick:
        fast("Hi {{ who }}").render({})
    with pytest.raises(UndefinedError) as slow:
        jinja("Hi {{ who }}", {})
    assert str(quick.value) == slow.value.message == "'who' is undefined"


def test_a_fast_render_past_the_output_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_module, "MAX_OUTPUT_CHARS", 100)
    text = fast("ab{{ x }}cd")
    assert len(text.render({"x": "y" * 96})) == 100
    with pytest.raises(RenderLimitError, match="longer than 100 characters"):
        text.render({"x": "y" * 97})


def test_a_jinja_render_past_the_output_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_module, "MAX_OUTPUT_CHARS", 100)
    text = TemplateText("{% for i in range(n) %}x{% endfor %}", ENVS)
    assert text.render({"n": 100}) == "x" * 100
    with pytest.raises(RenderLimitError, match="longer than 100 characters"):
        text.render({"n": 101})


# -- compile ------------------------------------------------------------------------------------------


def test_compile_gives_the_names_read_from_outside_but_not_globals() -> None:
    envs = Envs({"read": lambda path: path})
    text = TemplateText("{% set y = 1 %}{% for i in items %}{{ i }}{{ y }}{{ read('a.md') }}{% endfor %}"
                        "{{ z|default('') }}", envs)
    assert not text.simple
    assert text.compile() == frozenset({"items", "z"})
    assert text.literal_calls == (("read", "a.md", 1),)


def test_literal_calls_name_their_lines() -> None:
    envs = Envs({"read": lambda path: path, "include_text": lambda path: path})
    text = TemplateText("x\n{{ read('one.md') }}\n{{ include_text(\"two.md\") }}{{ read(name) }}{{ read(1) }}",
                        envs)
    text.compile()
    assert text.literal_calls == (("read", "one.md", 2), ("include_text", "two.md", 3))


@pytest.mark.parametrize(("source", "line", "words"), [
    ("fine\n{% if x %}\n{% endfor %}", 3, "endfor"),
    ("{{ x }}\n\n{{ x | }}", 3, ""),
    ("{{ x|no_such_filter }}", 1, "no_such_filter"),
    ("a\n{{ 'x' * 999999999 }}", 2, "repetition"),
])
def test_compile_reports_a_mistake_with_its_line(source: str, line: int, words: str) -> None:
    with pytest.raises(TemplateSyntax) as caught:
        TemplateText(source, ENVS).compile()
    assert caught.value.lineno == line
    assert words in caught.value.message


def test_a_template_compiles_once() -> None:
    text = TemplateText("{{ x|upper }}", ENVS)
    text.compile()
    compiled = text._compiled
    assert compiled is not None
    assert text.render({"x": "a"}) == "A"
    text.compile()
    assert text._compiled is compiled


def test_a_jinja_template_compiles_on_first_render_when_not_compiled_before() -> None:
    text = TemplateText("{{ x|upper }}", ENVS)
    assert text._compiled is None
    assert text.render({"x": "b"}) == "B"
    assert text._compiled is not None


# -- the environment ----------------------------------------------------------------------------------


def test_the_environment_is_strict_sandboxed_and_immutable() -> None:
    env = make_environment()
    with pytest.raises(UndefinedError):
        env.from_string("{{ nope }}").render()
    with pytest.raises(UndefinedError):
        env.from_string("{{ lipsum() }}").render()  # any length of text in one call
    with pytest.raises(SecurityError):
        env.from_string("{% set l = [1] %}{{ l.append(2) }}").render()
    with pytest.raises(SecurityError):
        env.from_string("{{ ''.__class__.__mro__ }}").render()
    assert env.from_string("<b>{{ x }}</b>\n").render(x="&") == "<b>&</b>"  # no escaping, newline dropped


def test_the_environment_takes_globals() -> None:
    env = make_environment({"shout": lambda s: s.upper() + "!"})
    assert env.from_string("{{ shout('hi') }}").render() == "HI!"


# -- run_bounded and the deadline ---------------------------------------------------------------------


def test_run_bounded_passes_results_and_mcp_errors_through() -> None:
    assert run_bounded(lambda: "done", "p") == "done"
    error = InvalidParams("no such file")

    def fails() -> None:
        raise error

    with pytest.raises(InvalidParams) as caught:
        run_bounded(fails, "p")
    assert caught.value is error


def test_run_bounded_turns_any_other_fault_into_an_internal_error_naming_the_prompt() -> None:
    with pytest.raises(InternalError) as caught:
        run_bounded(lambda: TemplateText("{{ a }}", ENVS).render({}), "greet")
    assert caught.value.message == "Internal error"
    assert caught.value.detail == "prompt 'greet': RenderFailure: 'a' is undefined"


def test_a_render_past_its_deadline_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_module, "MAX_RENDER_SECONDS", 0.05)
    text = TemplateText("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                        ENVS)
    text.compile()
    started = time.monotonic()
    with pytest.raises(InternalError) as caught:
        run_bounded(lambda: text.render({}), "slow")
    assert time.monotonic() - started < 5
    assert "RenderLimitError: rendering took longer than" in (caught.value.detail or "")


def test_the_deadline_is_cleared_after_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_module, "MAX_RENDER_SECONDS", 0.0)
    run_bounded(lambda: None, "p")
    time.sleep(0.01)
    check_deadline()  # no deadline outside a run: nothing to raise

    def late() -> None:
        time.sleep(0.01)
        check_deadline()

    with pytest.raises(InternalError):
        run_bounded(late, "p")


def test_a_templates_globals_are_a_plain_dict_of_the_environments() -> None:
    """Jinja's ChainMap of globals was copied key by key in Python on every render (~5,000 instructions a global);
    the environment's globals are all set before a template is made, so a dict holds the same (issue 31)."""
    from promptdeck.prompts.render import make_environment

    env = make_environment({"read": len})
    template = env.from_string("{{ read('abc') }} {{ range(2) | list }}")
    assert type(template.globals) is dict and template.globals["read"] is len
    assert template.render() == "3 [0, 1]"
    assert env.from_string("{{ x }}", globals={"x": 1}).render() == "1"
