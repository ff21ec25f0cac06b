"""The sandbox's size checks (prompts/sandbox.py): each step that could allocate past the output limit is
refused from its operands' sizes before it runs, and steps within the limit run as Jinja would run them.

The limit is made small here (``small_limit``), so each rule is pinned at its boundary and a check that
regressed fails on a kilobyte rather than allocating a gigabyte.
"""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.prompts import render as render_module
from promptdeck.prompts import sandbox
from promptdeck.prompts.render import make_environment
from promptdeck.prompts.sandbox import (
    MAX_GROUPS,
    RenderLimitError,
    check_call,
    check_concat,
    check_format,
    check_plus,
    check_replace,
    constant_bombs,
    room,
)

LIMIT = 1000


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sandbox, "MAX_OUTPUT_CHARS", LIMIT)
    monkeypatch.setattr(render_module, "MAX_OUTPUT_CHARS", LIMIT)
    return LIMIT


def render(source: str, **values: Any) -> str:
    result: str = make_environment().from_string(source).render(**values)
    return result


def test_the_limits() -> None:
    from promptdeck.prompts import limits

    assert limits.MAX_OUTPUT_CHARS == sandbox.MAX_OUTPUT_CHARS == 4 * 1024 * 1024  # type: ignore[attr-defined]
    assert MAX_GROUPS == 100_000


# -- the arithmetic of each check ---------------------------------------------------------------------


def test_room_allows_the_limit_and_refuses_one_more(small_limit: int) -> None:
    room(LIMIT, "x")
    with pytest.raises(RenderLimitError, match=f"center would be longer than the output limit of {LIMIT}"):
        room(LIMIT + 1, "center")


@pytest.mark.parametrize("template", ["%1000d", "%-1000s", "%.1000f", "{:>1000}", "{0:1000}", "{{:>99999}}",
                                      "%%99999d", "%(a)1000s", "%(a)%5000d", "plain", "{name}", "%", "%(a"])
def test_format_widths_within_the_limit_pass(small_limit: int, template: str) -> None:
    check_format(template)


@pytest.mark.parametrize("template", ["%1001d", "%0999999999d", "%.1001f", "%5.1001f", "{:>1001}",
                                      "{0:1001}", "{:01234567890}", "x {} {:>2000} y",
                                      # a mapping key before the width, its parentheses nested or not
                                      "%(a)01001d", "%(a(b))01001d", "%(a)s %(b)-1001s", "%(a).1001f",
                                      # a literal percent sign before the conversion
                                      "%%%1001d", "%5%%1001d", "100%% of %1001s"])
def test_format_widths_past_the_limit_are_refused(small_limit: int, template: str) -> None:
    with pytest.raises(RenderLimitError, match="format width"):
        check_format(template)


@pytest.mark.parametrize("template", ["%*d", "%.*f", "%5.*f"])
def test_widths_from_the_arguments_are_refused(template: str) -> None:
    with pytest.raises(RenderLimitError, match=r"'\*' widths"):
        check_format(template)


def test_nested_fields_are_refused() -> None:
    with pytest.raises(RenderLimitError, match="nested fields"):
        check_format("{:{}}")
    check_format(b"%0999999999d")  # not a str: no format of ours


def test_replace_counts_what_it_would_make(small_limit: int) -> None:
    check_replace("aaaa", "a", "x" * 250)  # 4 * 250 = 1000
    with pytest.raises(RenderLimitError, match="replace"):
        check_replace("aaaa", "a", "x" * 251)
    check_replace("aaaa", "a", "x" * 300, 3)  # 4 + 3 * 299 = 901: the count bounds the hits
    with pytest.raises(RenderLimitError):
        check_replace("aaaa", "a", "x" * 300, -1)  # a negative count replaces all
    # An empty pattern matches between every character and at both ends: len + 1 hits.
    check_replace("x" * 9, "", "y" * 99)  # 9 + 10 * 99 = 999
    with pytest.raises(RenderLimitError):
        check_replace("x" * 9, "", "y" * 100)
    check_replace("a" * 2000, "a", "")  # shrinking is always fine... as long as the input fit


def test_concat_and_plus_add_up_their_parts(small_limit: int) -> None:
    check_concat(["x" * 500, 12345, "y" * 495])
    with pytest.raises(RenderLimitError):
        check_concat(["x" * 500, 123456, "y" * 495])  # numbers count as their text
    check_plus("x" * 500, "y" * 500)
    check_plus([0] * 900, [0] * 100)
    with pytest.raises(RenderLimitError, match="'\\+'"):
        check_plus("x" * 500, "y" * 501)
    with pytest.raises(RenderLimitError):
        check_plus((0,) * 1001, ())
    check_plus(10**2000, 1)  # numbers are not sequences


# -- str methods a template calls ---------------------------------------------------------------------


@pytest.mark.parametrize(("method", "args"), [("ljust", (1001,)), ("rjust", (1001, "*")), ("center", (1001,)),
                                              ("zfill", (1001,)), ("replace", ("", "abc")),
                                              ("format", ("x",)), ("expandtabs", (1000,))])
def test_str_methods_that_grow_are_checked(small_limit: int, method: str, args: tuple[Any, ...]) -> None:
    text = "\t\t" if method == "expandtabs" else "{:>1001}" if method == "format" else "x" * 500
    with pytest.raises(RenderLimitError):
        check_call(getattr(text, method), args, {})


def test_str_methods_within_the_limit_pass_their_arguments_on(small_limit: int) -> None:
    assert check_call("x".ljust, (999,), {}) == (999,)
    assert check_call("x".upper, (), {}) == ()  # cannot grow: not checked
    assert check_call(len, ("x" * 5000,), {}) == ("x" * 5000,)  # not a str method


def test_join_reads_an_iterable_once_and_passes_on_what_it_read(small_limit: int) -> None:
    parts = iter(["a", "b", "c"])
    args = check_call(",".join, (parts,), {})
    assert args == (["a", "b", "c"],)
    assert ",".join(*args) == "a,b,c"
    with pytest.raises(RenderLimitError):
        check_call(("-" * 100).join, (iter(["x"] * 11),), {})  # 11 + 10 * 100


def test_jinjas_own_keywords_are_not_passed_to_the_check(small_limit: int) -> None:
    assert check_call("x".ljust, (10,), {"_loop_vars": {}, "_block_vars": {}}) == (10,)


# -- the filters, through a real environment ---------------------------------------------------------


GROWING_FILTERS: list[tuple[str, dict[str, Any]]] = [
    ("{{ s|replace('', s) }}", {"s": "x" * 40}),
    ("{{ s|center(1001) }}", {"s": ""}),
    ("{{ s|indent(100, first=True) }}", {"s": "a\n" * 10}),
    ("{{ s|wordwrap(1, wrapstring='~' * 10) }}", {"s": "x" * 100}),
    ("{{ items|join(sep) }}", {"items": ["x"] * 11, "sep": "-" * 100}),
    ("{{ '{:>1001}'|format(1) }}", {}),
    ("{{ items|batch(n)|list }}", {"items": [1], "n": MAX_GROUPS + 1}),
    ("{{ items|slice(n)|list }}", {"items": [1], "n": MAX_GROUPS + 1}),
    ("{{ items|sum(start=[]) }}", {"items": [[0] * 600, [0] * 600]}),
]


@pytest.mark.parametrize(("source", "values"), GROWING_FILTERS)
def test_guarded_filters_refuse_growth_past_the_limit(small_limit: int, source: str,
                                                      values: dict[str, Any]) -> None:
    with pytest.raises(RenderLimitError):
        render(source, **values)


def test_guarded_filters_within_the_limit_render_as_jinja_does(small_limit: int) -> None:
    assert render("{{ s|replace('a', 'bb') }}", s="banana") == "bbbnbbnbb"
    assert render("{{ s|center(7) }}", s="ab") == "ab".center(7)
    assert render("{{ 'a\nb'|indent('> ', first=True) }}") == "> a\n> b"
    assert render("{{ range(5)|map('string')|join('-') }}") == "0-1-2-3-4"  # a generator, read once
    assert render("{{ users|join(', ', attribute='name') }}", users=[{"name": "a"}, {"name": "b"}]) == "a, b"
    assert render("{{ [[1], [2], [3]]|sum(start=[]) }}") == "[1, 2, 3]"
    assert render("{{ [1, 2, 3]|sum }}") == "6"
    assert render("{{ [{'n': 2}, {'n': 3}]|sum(attribute='n') }}") == "5"
    assert render("{{ [1, 2, 3, 4, 5]|batch(2)|list }}") == "[[1, 2], [3, 4], [5]]"
    assert render("{{ '%05d'|format(42) }}") == "00042"


def test_operators_are_checked_at_render_time(small_limit: int) -> None:
    with pytest.raises(RenderLimitError, match="repetition"):
        render("{{ s * n }}", s="ab", n=501)
    with pytest.raises(RenderLimitError, match="repetition"):
        render("{{ n * l }}", l=[0, 0], n=501)
    assert render("{{ s * n }}", s="ab", n=500) == "ab" * 500
    with pytest.raises(RenderLimitError, match="exponent"):
        render("{{ b ** e }}", b=2, e=1001)
    assert render("{{ b ** e }}", b=2, e=10) == "1024"
    with pytest.raises(RenderLimitError):
        render("{{ a + b }}", a="x" * 600, b="y" * 600)
    with pytest.raises(RenderLimitError):
        render("{{ a ~ b }}", a="x" * 600, b=10**600)
    with pytest.raises(RenderLimitError):
        render("{{ f % 1 }}", f="%2000d")
    with pytest.raises(RenderLimitError):
        render("{{ f % {'a': 1} }}", f="%(a)02000d")
    with pytest.raises(RenderLimitError):
        render("{{ f|format(a=1) }}", f="%(a)02000d")
    assert render("{{ f % {'a': 1} }}", f="%(a)03d%%") == "001%"


def test_doubling_in_a_loop_is_stopped_at_the_limit(small_limit: int) -> None:
    doubling = ("{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
                "{% endfor %}{{ ns.s }}")
    with pytest.raises(RenderLimitError):
        render(doubling)


# -- constant bombs, found at compile ----------------------------------------------------------------


def bombs(source: str) -> tuple[str, int] | None:
    return constant_bombs(make_environment().parse(source))


@pytest.mark.parametrize(("source", "reason"), [
    ("{{ '%0999999999d'|format(1) }}", "format width"),
    ("{{ '%0999999999d' % 1 }}", "format width"),
    ("{{ '{:>999999999}'.format(1) }}", "format width"),
    ("{{ 'x'.ljust(999999999) }}", "padding"),
    ("{{ 'x'|center(999999999) }}", "center"),
    ("{{ 'x' * 999999999 }}", "repetition"),
    ("{{ 999999999 * 'x' }}", "repetition"),
    ("{{ '%(a)0999999999d'|format(a=1) }}", "format width"),
    ("{{ 2 ** 100000 }}", "exponent"),
    ("{{ 'x' * 9 }}{{ 'y'|indent(999999999, first=True) }}", "indent"),
])
def test_a_constant_bomb_is_found_with_its_line(source: str, reason: str) -> None:
    found = bombs("line one\nline two\n" + source)
    assert found is not None
    assert reason in found[0] and found[1] == 3


@pytest.mark.parametrize("source", ["{{ 'x'.ljust(n) }}", "{{ s * 999999999 }}", "{{ '%5d' % 1 }}",
                                    "{{ 'x' * 10 }}", "{{ 2 ** 10 }}", "{{ 'abc'.upper() }}",
                                    "{{ 'x'|center('wide') }}", "{{ 1 * 'x' * 3 }}"])
def test_what_is_not_a_constant_bomb(source: str) -> None:
    assert bombs(source) is None
