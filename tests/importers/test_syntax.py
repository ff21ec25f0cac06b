"""Other tools' template syntax into promptdeck's Jinja, rendered by promptdeck's own sandbox to show the text
is kept, and what cannot be translated named."""

from __future__ import annotations

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from promptdeck.importers.syntax import from_fstring, from_jinja, from_mustache, literal, no_role_lines, translate


def render(template: str, **values: str) -> str:
    return SandboxedEnvironment(undefined=StrictUndefined).from_string(template).render(**values)


def test_mustache_variables_become_holes_and_the_rest_stays_as_written() -> None:
    out = from_mustache("Hi {{name}} and {{ other }}, {{{raw}}} {{#items}}x{{/items}} {{a.b}} {% no %}")
    assert out.variables == ["name", "other", "raw"]
    assert render(out.text, name="N", other="O", raw="R") == \
        "Hi N and O, R {{#items}}x{{/items}} {{a.b}} {% no %}"
    assert out.untranslated == ["{{#items}} (a section)", "{{/items}} (a section's end)", "{{a.b}} (a dotted name)"]


def test_fstring_fields_become_holes_and_doubled_braces_are_braces() -> None:
    out = from_fstring("Dear {name}, {{literal}} {price:.2f} {user.email} {{{wrapped}}}")
    assert out.variables == ["name", "wrapped"]
    assert render(out.text, name="Ann", wrapped="W") == "Dear Ann, {literal} {price:.2f} {user.email} {W}"
    assert out.untranslated == ["{price:.2f} (a format spec or conversion)", "{user.email} (an index or attribute)"]


def test_a_broken_fstring_is_kept_literal_and_named() -> None:
    out = from_fstring("oops {name")
    assert render(out.text) == "oops {name" and out.variables == []
    assert out.untranslated[0].startswith("the whole text (")


def test_jinja_is_kept_and_its_variables_found_and_broken_jinja_is_literal() -> None:
    out = from_jinja("{% for x in items %}{{ x }}{% endfor %} {{ who }}")
    assert out.text == "{% for x in items %}{{ x }}{% endfor %} {{ who }}" and out.variables == ["items", "who"]
    broken = from_jinja("{% if %}")
    assert render(broken.text) == "{% if %}" and "Jinja syntax error" in broken.untranslated[0]


def test_literal_text_renders_to_itself_whatever_braces_it_holds() -> None:
    for text in ("{{x}}", "{%", "{#", "a{", "{{{", "}}", "{ {", "{{ '{' }}"):
        assert render(literal(text)) == text
    assert render(literal("a{") + "{{ v }}", v="V") == "a{V"


def test_a_line_promptdeck_reads_as_a_role_is_made_text() -> None:
    text = no_role_lines("user:\nassistant: {image: x.png}\nuser: hello")
    assert not any(line.startswith(("user:", "assistant:")) for line in text.splitlines()[:2])
    assert render(text) == "user:\nassistant: {image: x.png}\nuser: hello"


def test_references_to_other_prompts_are_named_and_an_unknown_format_is_literal() -> None:
    assert "@@@langfusePrompt:name=base|label=production@@@ (a reference to another prompt's text)" in \
        from_mustache("@@@langfusePrompt:name=base|label=production@@@ {{x}}").untranslated
    other = translate("{{x}}", "handlebars")
    assert render(other.text) == "{{x}}" and "'handlebars' is not read" in other.untranslated[0]
