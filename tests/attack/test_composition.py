"""Hostile composition (issue 31): include bombs, deep nesting, self-inclusion, partials that are links out,
FIFOs or 100 MB, prompt bombs and cycles named at render. Each is a ``check`` problem at its line or a
bounded -32603 whose reason is logged; none hangs or blows up, over a real served process too."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from promptdeck.prompts import render as render_module
from promptdeck.prompts.composition import MAX_INCLUDES, MAX_NESTING
from promptdeck.protocol.errors import InternalError, InvalidParams
from promptdeck.sources.files.source import FileSource
from tests.support.files import load, prompts, render
from tests.support.modern import StdioPeer, initialize, legacy

DYNAMIC = "---\narguments:\n  - name: name\n---\n{% include name %}\n"


def problems(source: FileSource) -> list[str]:
    return sorted(str(e) for errors in source.errors.values() for e in errors) + [str(e) for e in source.composition]


def bomb(levels: int, fan: int = 10) -> dict[str, str]:
    """``_b/0.md`` includes ``_b/1.md`` ``fan`` times, and so on for ``levels`` levels: fan**levels loads."""
    files = {f"_b/{i}.md": f'{{% include "_b/{i + 1}.md" %}}' * fan for i in range(levels)}
    files[f"_b/{levels}.md"] = "boom"
    return files


def test_a_literal_include_bomb_is_a_check_problem_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    source = load(tmp_path, {**bomb(10), "p.md": 'intro\n{% include "_b/0.md" %}\n',
                             **{f"_w/{i}.md": '{% include "_w/leaf.md" %}' * 40 for i in range(2)},
                             "_w/leaf.md": "x", "w.md": '{% include "_w/0.md" %}' * 30 + "\n"})
    assert time.monotonic() - started < 5
    assert problems(source) == [
        f"p.md:2: include '_b/0.md': partials nest deeper than {MAX_NESTING} levels: _b/0.md → _b/1.md → _b/2.md → "
        "_b/3.md → _b/4.md → _b/5.md → _b/6.md → _b/7.md → _b/8.md",
        f"w.md:1: includes load more than {MAX_INCLUDES} partials in one render (an include bomb)",
    ]


def test_a_bomb_below_the_nesting_limit_is_refused_by_its_loads(tmp_path: Path) -> None:
    source = load(tmp_path, {**bomb(4), "p.md": '{% include "_b/0.md" %}\n'})  # 10,000 loads in 4 levels
    [problem] = problems(source)
    assert problem.startswith("p.md:1: include '_b/0.md': includes load more than 1000 partials")


def test_a_dynamic_include_bomb_and_self_inclusion_stop_at_a_bound(tmp_path: Path) -> None:
    source = load(tmp_path, {"_d/self.md": "{% include name %}",
                             "_d/fan.md": "{% for i in range(10) %}{% include name %}{% endfor %}",
                             "p.md": DYNAMIC})
    p = prompts(source)["p"]
    assert problems(source) == []
    for name, reason in [("_d/self.md", f"partials nest deeper than {MAX_NESTING} levels"),
                         ("_d/fan.md", f"partials nest deeper than {MAX_NESTING} levels")]:
        started = time.monotonic()
        with pytest.raises(InternalError) as err:
            render(p, name=name)
        assert time.monotonic() - started < 2
        assert err.value.code == -32603 and err.value.detail is not None and reason in err.value.detail


def test_a_wide_dynamic_bomb_stops_at_the_load_limit(tmp_path: Path) -> None:
    source = load(tmp_path, {"_d/leaf.md": "x",
                             "_d/many.md": "{% for i in range(2000) %}{% include leaf %}{% endfor %}",
                             "p.md": "---\narguments:\n  - name: leaf\n---\n{% include \"_d/many.md\" %}\n"})
    with pytest.raises(InternalError) as err:
        render(prompts(source)["p"], leaf="_d/leaf.md")
    assert err.value.detail is not None and f"included more than {MAX_INCLUDES} partials" in err.value.detail


@pytest.mark.parametrize("kind", ["link-out", "fifo", "huge", "directory"])
def test_a_partial_that_is_no_plain_library_file_is_refused_without_waiting(tmp_path: Path, kind: str) -> None:
    (tmp_path / "_p").mkdir()
    target = tmp_path / "_p" / "x.md"
    if kind == "link-out":
        outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
        outside.write_text("the server's secrets")
        os.symlink(outside, target)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "huge":
        with target.open("wb") as fh:
            fh.truncate(100 * 1024 * 1024)  # 100 MB, sparse
    else:
        target.mkdir()
    started = time.monotonic()
    source = load(tmp_path, {"p.md": 'one\n{% include "_p/x.md" %}\n', "d.md": DYNAMIC})
    [problem] = problems(source)
    assert problem.startswith("p.md:2: include '_p/x.md': ")
    with pytest.raises(InvalidParams) as err:  # named by an argument: refused at render, never read
        render(prompts(source)["d"], name="_p/x.md")
    assert time.monotonic() - started < 5
    assert "secrets" not in err.value.message
    assert any(reason in err.value.message for reason in ("leaves the library", "not a regular file",
                                                          "larger than"))


def test_a_prompt_bomb_shares_one_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hundred nested renders of 0.15 s each, under a limit of 0.5 s: the nested renders keep the outer
    deadline (a nested render that set its own would let the whole run for 15 s). The bound leaves room for a
    loaded machine while staying far below what a deadline per nested render would take."""
    monkeypatch.setattr(render_module, "MAX_RENDER_SECONDS", 0.5)
    source = load(tmp_path, {
        "slow.md": "{% for i in range(100) %}{% for j in range(10000) %}{% endfor %}{% endfor %}slow\n",
        "p.md": "{% for i in range(100) %}{{ prompt(\"slow\") }}{% endfor %}\n",
    })
    started = time.monotonic()
    with pytest.raises(InternalError) as err:
        render(prompts(source)["p"])
    assert time.monotonic() - started < 5
    assert err.value.detail is not None and "rendering took longer than 0.5 s" in err.value.detail


def test_nested_renders_share_one_output_budget(tmp_path: Path) -> None:
    three_mib = "{{ 'x' * (3 * 1024 * 1024) }}\n"
    source = load(tmp_path, {"big.md": three_mib, "p.md": "{% set a = prompt(\"big\") %}{% set b = prompt(\"big\") %}"
                                                            "{{ a | length }}\n"})
    with pytest.raises(InternalError) as err:
        render(prompts(source)["p"])
    assert err.value.detail is not None and "the composed render is longer than" in err.value.detail


def test_prompts_nested_past_the_limit_and_cycles_by_argument_stop_at_render(tmp_path: Path) -> None:
    chain = {f"n{i}.md": "---\narguments:\n  - name: next\n---\n{{ prompt(next) }}\n" for i in range(12)}
    chain["n12.md"] = "end\n"
    source = load(tmp_path, {**chain, "loop.md": "---\narguments:\n  - name: me\n---\n{{ prompt(me, me=me) }}\n"})
    assert problems(source) == []  # names given at render: nothing for check to see
    with pytest.raises(InvalidParams) as refused:
        render(prompts(source)["n0"], next="n1")  # n1 needs its own next: the error names the chain
    assert refused.value.message == "prompt 'n0': prompt('n1'): prompt 'n1' needs argument 'next' for this " \
                                    "render: it is declared optional, but its template uses it"
    with pytest.raises(InternalError) as err:
        render(prompts(source)["loop"], me="loop")
    assert err.value.detail is not None and "prompt cycle: loop → loop" in err.value.detail
    deep: dict[str, str | bytes] = {f"d{i}.md": f"{{{{ prompt(\"d{i + 1}\") }}}}\n" for i in range(MAX_NESTING + 3)}
    deep[f"d{MAX_NESTING + 3}.md"] = "bottom\n"
    source = load(tmp_path / "deep", deep)
    assert any(f"composition nests deeper than {MAX_NESTING} levels" in p for p in problems(source))
    with pytest.raises(InternalError) as err:
        render(prompts(source)["d0"])
    assert err.value.detail is not None and f"composition nests deeper than {MAX_NESTING} levels" in err.value.detail


def test_a_served_bomb_is_a_logged_internal_error_and_the_server_keeps_serving(tmp_path: Path) -> None:
    load(tmp_path, {"_d/self.md": "{% include name %}", "p.md": DYNAMIC, "ok.md": "fine\n"})
    with StdioPeer(tmp_path) as peer:
        assert "result" in peer.call(initialize(1))
        answer = peer.call(legacy(2, "prompts/get", {"name": "p", "arguments": {"name": "_d/self.md"}}))
        assert answer["error"] == {"code": -32603, "message": "Internal error"}
        ok = peer.call(legacy(3, "prompts/get", {"name": "ok"}))
        assert ok["result"]["messages"][0]["content"]["text"] == "fine"
        assert f"partials nest deeper than {MAX_NESTING} levels" in peer.stderr


def test_a_cached_partial_of_a_scoped_skill_is_refused_to_a_wider_prompt(tmp_path: Path) -> None:
    """A partial compiles once, but whether a prompt may include it is asked on every load: a scoped skill's
    file that a scoped prompt included is still refused to an unscoped one naming it by an argument."""
    source = load(tmp_path, {
        "skills/payroll/SKILL.md": "---\nname: payroll\ndescription: Payroll work\nscopes: [hr]\n---\nSteps.\n",
        "skills/payroll/_refs/rates.md": "SECRET RATES",
        "hr.md": "---\nscopes: [hr]\n---\n{% include \"skills/payroll/_refs/rates.md\" %}\n",
        "open.md": "{% include \"skills/payroll/_refs/rates.md\" %}\n",
        "d.md": DYNAMIC,
    })
    assert any(p.startswith("open.md:1: include 'skills/payroll/_refs/rates.md': ") and "restricted to hr" in p
               for p in problems(source)), problems(source)
    found = prompts(source)
    assert "SECRET RATES" in str(render(found["hr"]))  # compiled and cached now
    with pytest.raises(InvalidParams) as err:
        render(found["d"], name="skills/payroll/_refs/rates.md")
    assert "does not exist" in err.value.message and "SECRET" not in str(err.value.to_wire())
