"""The bounds promptdeck puts around dotpromptz (sources/files/native/_dotpromptz.py), tested on the engine
itself: text counted once however deeply it nests, a partial's indentation counted before it is made, the
render deadline looked at on each step, unclosed markers refused before dotpromptz's regex scans them, the
``json`` and ``log`` helpers tamed, coroutines run whether or not the caller's thread runs a loop, and an
engine it cannot bound refused. Whole files that explode are tests/attack/test_formats.py's."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

import pytest

from promptdeck.prompts import render as render_module
from promptdeck.prompts.limits import MAX_OUTPUT_CHARS
from promptdeck.prompts.render import run_bounded
from promptdeck.prompts.sandbox import RenderLimitError
from promptdeck.protocol.errors import InternalError, LineError
from promptdeck.sources.files.native._dotpromptz import anywhere, bounded, check_tags, complete, engine, library

pytest.importorskip("dotpromptz")

MARKER = "<<<dotprompt:section"


@pytest.fixture(scope="module")
def dotpromptz() -> Any:
    return library()


@pytest.fixture(scope="module")
def handlebars(dotpromptz: Any) -> Any:
    """dotpromptz's Handlebars engine, whose one recursive render function ``library`` wrapped."""
    from dotpromptz_handlebars import Handlebars

    return Handlebars()


def text_of(dotpromptz: Any, source: str, values: dict[str, Any]) -> str:
    """A dotprompt body rendered as promptdeck renders it (``engine``, ``complete``, ``bounded``)."""
    renderer = complete(engine(dotpromptz).compile(dotpromptz.parse_document(source)))
    rendered = bounded(lambda: complete(renderer(dotpromptz.DataArgument(input=values))))
    return "".join(part.text or "" for message in rendered.messages for part in message.content)


# -- the output limit ----------------------------------------------------------------------------------------


def test_text_is_counted_once_however_deeply_it_nests(handlebars: Any) -> None:
    # Each level returns the text of the levels inside it: counted at every level, 4 MiB would be 12.
    nested = handlebars.compile("{{#if a}}{{#if a}}[{{{x}}}]{{/if}}{{/if}}")
    exact = "y" * (MAX_OUTPUT_CHARS - 2)
    assert bounded(lambda: len(nested({"a": 1, "x": exact}))) == MAX_OUTPUT_CHARS
    with pytest.raises(RenderLimitError, match=f"longer than {MAX_OUTPUT_CHARS} characters"):
        bounded(lambda: nested({"a": 1, "x": exact + "y"}))


def test_each_render_has_a_budget_of_its_own(handlebars: Any) -> None:
    template = handlebars.compile("{{{x}}}")
    most = "y" * (MAX_OUTPUT_CHARS * 3 // 4)
    assert bounded(lambda: len(template({"x": most}))) == len(most)
    assert bounded(lambda: len(template({"x": most}))) == len(most)  # not 1.5 times the limit


def test_a_loop_counts_every_item(handlebars: Any) -> None:
    looped = handlebars.compile("{{#each items}}{{{this}}}{{/each}}")
    items = ["y" * (MAX_OUTPUT_CHARS // 4)] * 5
    with pytest.raises(RenderLimitError):
        bounded(lambda: looped({"items": items}))
    assert bounded(lambda: len(looped({"items": items[:3]}))) == 3 * len(items[0])


def test_a_render_outside_bounded_is_left_alone_even_after_a_refused_one(handlebars: Any) -> None:
    template = handlebars.compile("{{{x}}}")
    with pytest.raises(RenderLimitError):
        bounded(lambda: template({"x": "y" * (MAX_OUTPUT_CHARS + 1)}))
    # The budget went with the refused render: dotpromptz used directly (not promptdeck's render) is not bounded.
    assert len(template({"x": "y" * (MAX_OUTPUT_CHARS + 1)})) == MAX_OUTPUT_CHARS + 1


def test_a_partials_indentation_is_counted_before_it_is_made(dotpromptz: Any) -> None:
    import dotpromptz_handlebars._render as engine_module

    lines = "a\n" * 100_000
    with pytest.raises(RenderLimitError):  # 5 MB of indentation for 200 KB of text, refused before it exists
        bounded(lambda: engine_module._apply_indent(lines, " " * 50))
    assert bounded(lambda: engine_module._apply_indent("a\nb\n", "  ")) == "  a\n  b\n"
    assert len(engine_module._apply_indent(lines, " " * 50)) == 5_200_000  # not promptdeck's render


def test_a_standalone_partial_is_indented_as_handlebars_does(dotpromptz: Any) -> None:
    renderer = complete(engine(dotpromptz, {"p": "one\ntwo\n"}).compile(dotpromptz.parse_document("A\n  {{> p}}\nB")))
    rendered = bounded(lambda: complete(renderer(dotpromptz.DataArgument(input={}))))
    assert rendered.messages[0].content[0].text == "A\n  one\n  two\nB"


def test_a_render_past_its_deadline_stops_at_the_next_step(handlebars: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    template = handlebars.compile("{{#if a}}x{{/if}}")
    assert run_bounded(lambda: bounded(lambda: template({"a": 1})), "p") == "x"
    monkeypatch.setattr(render_module, "MAX_RENDER_SECONDS", -1.0)  # every deadline has passed
    with pytest.raises(InternalError) as stopped:
        run_bounded(lambda: bounded(lambda: template({"a": 1})), "p")
    assert isinstance(stopped.value.__cause__, RenderLimitError)
    assert "rendering took longer than" in str(stopped.value.__cause__)


# -- dotpromptz's markers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [MARKER * 500, "a>>>" + MARKER * 500])
def test_many_unclosed_markers_on_a_line_are_refused(handlebars: Any, value: str) -> None:
    template = handlebars.compile("{{{x}}}")
    with pytest.raises(RenderLimitError, match="too many unclosed <<<dotprompt: markers"):
        bounded(lambda: template({"x": value}))


@pytest.mark.parametrize("value", [
    MARKER * 400,  # their scans add up to less than the limit
    (MARKER + " x>>>") * 500,  # each closed on its line
    MARKER * 500 + ">>>",  # all closed by the last
    (MARKER + "\n") * 500,  # one to a line: each scan ends at its line's end
])
def test_markers_whose_scans_stay_within_the_limit_pass(handlebars: Any, value: str) -> None:
    template = handlebars.compile("{{{x}}}")
    assert bounded(lambda: template({"x": value})) == value


def test_markers_are_checked_once_on_the_whole_text(handlebars: Any) -> None:
    # 250 in each of two blocks: neither alone costs enough, the line they make together does.
    template = handlebars.compile("{{#if a}}{{{x}}}{{/if}}{{#if a}}{{{x}}}{{/if}}")
    with pytest.raises(RenderLimitError, match="unclosed"):
        bounded(lambda: template({"a": 1, "x": MARKER * 250}))


# -- the helpers ---------------------------------------------------------------------------------------------


def test_json_indent_is_clamped_as_json_stringify_clamps_it(dotpromptz: Any) -> None:
    assert text_of(dotpromptz, "{{json this indent=999999999}}", {"a": 1}) == '{\n' + " " * 10 + '"a": 1\n}'
    assert text_of(dotpromptz, "{{json this indent=2}}", {"a": 1}) == '{\n  "a": 1\n}'
    assert text_of(dotpromptz, "{{json this indent=-3}}", {"a": 1}) == '{"a":1}'
    assert text_of(dotpromptz, '{{json this indent="wide"}}', {"a": 1}) == '{"a":1}'  # not a number: none


def test_log_writes_nothing_to_standard_output(dotpromptz: Any, capsys: pytest.CaptureFixture[str],
                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, "promptdeck.dotprompt"):
        assert text_of(dotpromptz, '{{log "hello" 3}}done', {}) == "done"
    assert capsys.readouterr().out == ""  # on stdio, standard output is the MCP channel
    assert [r.getMessage() for r in caplog.records] == ["dotprompt log: hello 3"]


# -- coroutines ----------------------------------------------------------------------------------------------


async def _answer() -> int:
    return 42


def test_anywhere_runs_in_this_thread_when_no_loop_runs() -> None:
    assert anywhere(lambda: (threading.current_thread(), complete(_answer()))) == (threading.current_thread(), 42)


def test_anywhere_runs_on_a_thread_of_its_own_inside_a_running_loop() -> None:
    async def on_the_loop() -> tuple[str, int]:
        with pytest.raises(RuntimeError):  # what anywhere is for: asyncio.run refuses on a loop's thread
            coroutine = _answer()
            try:
                complete(coroutine)
            finally:
                coroutine.close()
        return anywhere(lambda: (threading.current_thread().name, complete(_answer())))

    name, answer = asyncio.run(on_the_loop())
    assert name.startswith("promptdeck-dotprompt") and answer == 42


def test_anywhere_passes_on_what_the_work_raises() -> None:
    def fails() -> None:
        raise RenderLimitError("too long")

    async def on_the_loop() -> None:
        anywhere(fails)

    with pytest.raises(RenderLimitError, match="too long"):
        anywhere(fails)
    with pytest.raises(RenderLimitError, match="too long"):
        asyncio.run(on_the_loop())


# -- check_tags ----------------------------------------------------------------------------------------------


def test_a_tag_opening_with_more_than_16_blanks_is_found_at_its_offset() -> None:
    assert check_tags("Hi {{" + " " * 16 + "x}}") is None
    assert check_tags("Hi {{~#" + " " * 14 + "x}}") is None
    assert check_tags("Hi {{" + " " * 17 + "x}}") == 3
    assert check_tags("ok {{x}}\n{{#~" + "\t\n " * 5 + "y}}") == 9  # '~', '#' and any blank count
    assert check_tags("{ {" + " " * 40 + "}}") is None and check_tags("") is None


# -- library and the engine it bounds ------------------------------------------------------------------------


@pytest.fixture
def fake_engine(dotpromptz: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An engine module of another shape, in place of dotpromptz's for the test."""
    import dotpromptz_handlebars

    fake = types.ModuleType("dotpromptz_handlebars._render")
    monkeypatch.setitem(sys.modules, "dotpromptz_handlebars._render", fake)
    monkeypatch.setattr(dotpromptz_handlebars, "_render", fake)
    yield fake


def test_an_engine_without_the_functions_it_bounds_is_refused(fake_engine: Any) -> None:
    fake_engine._render = lambda nodes, **env: "x"
    with pytest.raises(LineError, match="this version of dotpromptz is not supported") as refused:
        library()
    assert refused.value.line == 1 and not getattr(fake_engine, "_promptdeck_bounded", False)


def test_an_engine_is_bounded_once(fake_engine: Any) -> None:
    def plain_render(nodes: Any, **env: Any) -> str:
        return str(nodes)

    def plain_indent(text: str, prefix: str) -> str:
        return prefix + text

    fake_engine._render, fake_engine._apply_indent = plain_render, plain_indent
    library()
    counted = fake_engine._render
    assert counted is not plain_render and fake_engine._apply_indent is not plain_indent
    library()
    assert fake_engine._render is counted  # not wrapped twice, which would count everything twice
    assert bounded(lambda: fake_engine._render("y" * MAX_OUTPUT_CHARS)) == "y" * MAX_OUTPUT_CHARS
    with pytest.raises(RenderLimitError):
        bounded(lambda: fake_engine._render("y" * (MAX_OUTPUT_CHARS + 1)))


def test_without_dotpromptz_a_file_is_told_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dotpromptz", None)  # import dotpromptz raises ImportError
    with pytest.raises(LineError, match="reading dotprompt files needs the dotprompt extra") as refused:
        library()
    assert refused.value.line == 1
