"""The one access rule (prompts/access.py): nested scopes, what a principal may see, what a part may be read
by, and the context a render or a check runs in."""

from __future__ import annotations

import pytest

from promptdeck.prompts.access import (
    EVERYONE,
    covers,
    grants,
    may_see,
    parse_scopes,
    reader_scopes,
    reading_as,
    shown_scopes,
    viewer,
    viewing,
)


@pytest.mark.parametrize(("held", "needed", "granted"), [
    (None, "anything", True),
    (frozenset({"prompts"}), "prompts", True),
    (frozenset({"prompts"}), "prompts:hr", True),
    (frozenset({"prompts"}), "prompts:hr:payroll", True),
    (frozenset({"prompts:hr"}), "prompts:hr:payroll", True),
    (frozenset({"prompts:hr"}), "prompts", False),  # never upwards
    (frozenset({"prompts:hr"}), "prompts:it", False),
    (frozenset({"prompt"}), "prompts:hr", False),  # a prefix of the text is not a scope above it
    (frozenset({"prompts:h"}), "prompts:hr", False),
    (EVERYONE, "prompts", False),
])
def test_scopes_nest_on_colons_downwards_only(held: frozenset[str] | None, needed: str, granted: bool) -> None:
    assert grants(held, needed) is granted


def test_may_see_an_unscoped_item_always_and_a_scoped_one_by_any_of_its_scopes() -> None:
    assert may_see(EVERYONE, [])
    assert may_see(None, ["hr"])
    assert may_see(frozenset({"hr"}), ["it", "hr:payroll"])
    assert not may_see(EVERYONE, ["hr"])
    assert not may_see(frozenset({"it"}), ("hr", "legal"))


def test_a_part_is_covered_only_when_every_reader_of_the_prompt_may_see_it() -> None:
    assert covers(EVERYONE, EVERYONE)
    assert covers(frozenset({"hr"}), EVERYONE)
    assert not covers(EVERYONE, frozenset({"hr"}))  # an unscoped prompt would show it to anyone
    assert covers(frozenset({"hr"}), frozenset({"hr:payroll"}))  # who sees an hr prompt holds hr, granting hr:payroll
    assert not covers(frozenset({"hr:payroll"}), frozenset({"hr"}))  # holding hr:payroll sees it, not an hr part
    assert not covers(frozenset({"hr", "it"}), frozenset({"hr"}))  # an it-only reader would see an hr part
    assert covers(frozenset({"hr", "it"}), frozenset({"hr", "it"}))


def test_scopes_as_the_store_keeps_and_shows_them() -> None:
    assert parse_scopes(None) == parse_scopes("") == EVERYONE
    assert parse_scopes("hr  it\thr") == frozenset({"hr", "it"})
    assert shown_scopes(EVERYONE) == "everyone"
    assert shown_scopes(frozenset({"it", "hr"})) == "hr, it"


def test_reading_as_sets_the_reader_for_its_block_and_restores_it() -> None:
    assert reader_scopes() == EVERYONE
    with reading_as(frozenset({"hr"})):
        assert reader_scopes() == frozenset({"hr"})
        with reading_as(frozenset({"it"})):
            assert reader_scopes() == frozenset({"it"})
        assert reader_scopes() == frozenset({"hr"})
    assert reader_scopes() == EVERYONE


def test_viewing_names_the_principal_a_check_answers_even_after_an_error() -> None:
    assert viewer() == (False, None)
    with viewing(None):
        assert viewer() == (True, None)  # a trusted principal is still a viewer
    with pytest.raises(RuntimeError, match="boom"), viewing(frozenset({"hr"})):
        assert viewer() == (True, frozenset({"hr"}))
        raise RuntimeError("boom")
    assert viewer() == (False, None)
