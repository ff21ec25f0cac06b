"""A version from a source's messages: roles, arguments typed and defaulted, what is named."""

from __future__ import annotations

from promptdeck.importers.build import make_version


def test_roles_are_mapped_and_a_system_or_unknown_role_named_once() -> None:
    version = make_version("1", [("system", "a"), ("developer", "b"), ("ai", "c"), ("tool", "d"), ("Human", "e")],
                           "mustache")
    assert [m.role for m in version.messages] == ["user", "user", "assistant", "user", "user"]
    assert len([n for n in version.untranslated if "system message" in n]) == 1
    assert "a message of role 'tool' (kept as the user's)" in version.untranslated


def test_arguments_in_order_typed_where_the_source_says_and_defaulted() -> None:
    version = make_version("1", [("user", "{b} {a}")], "f-string", types={"a": "int", "c": "bool"},
                           defaults={"b": "x"}, declared=["c", "not a name"])
    assert version.arguments == [{"name": "b", "default": "x"}, {"name": "a", "type": "integer", "required": True},
                                 {"name": "c", "type": "boolean", "required": True}]


def test_each_message_may_have_its_own_syntax() -> None:
    version = make_version("1", [("user", "{a}"), ("user", "{{b}}")], ["f-string", "mustache"])
    assert [m.text for m in version.messages] == ["{{ a }}", "{{ b }}"]
