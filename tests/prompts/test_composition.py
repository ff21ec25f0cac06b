"""``prompts.composition``: ``Uses``, what the templates of a prompt name, and one composed render's state."""

from __future__ import annotations

import pytest

from promptdeck.prompts import composition
from promptdeck.prompts.composition import MAX_NESTING, NO_USES, Call, CompositionError, Uses, template_uses
from promptdeck.prompts.render import make_environment, run_bounded
from promptdeck.prompts.spec import Prompt
from promptdeck.protocol.errors import InternalError


def test_uses_is_immutable_and_compares_by_value() -> None:
    uses = Uses(frozenset({"_p/a.md"}), frozenset({"rules"}), False, (Call("rules", frozenset(), 3),))
    with pytest.raises(AttributeError):
        uses.files = frozenset()
    assert uses == Uses(frozenset({"_p/a.md"}), frozenset({"rules"}), False, (Call("rules", frozenset(), 3),))
    assert hash(uses) == hash(Uses(frozenset({"_p/a.md"}), frozenset({"rules"}), False,
                                   (Call("rules", frozenset(), 3),)))
    assert not NO_USES and uses and Uses(dynamic=True)


def test_union_keeps_every_part_and_is_free_for_nothing() -> None:
    a = Uses(frozenset({"x"}), frozenset({"p"}), calls=(Call("p", None, 1),))
    b = Uses(frozenset({"y"}), dynamic=True)
    assert Uses.union([NO_USES, NO_USES]) is NO_USES
    assert Uses.union([NO_USES, a]) is a
    joined = Uses.union([a, b])
    assert joined.files == {"x", "y"} and joined.prompts == {"p"} and joined.dynamic and joined.calls == a.calls


def test_a_prompt_that_composes_nothing_reads_no_uses() -> None:
    prompt = Prompt("py", lambda values, ctx: [])
    assert prompt.uses is NO_USES
    assert prompt.with_meta({"k": 1}).uses is NO_USES
    lazy = Prompt("lazy", lambda values, ctx: [], composes=lambda: Uses(frozenset({"f"})))
    assert lazy.uses.files == {"f"} and lazy.with_meta({}).uses.files == {"f"}


def test_template_uses_reads_literal_targets_with_their_lines() -> None:
    env = make_environment()
    tree = env.parse('{% include "_p/a.md" %}\n{% import "_p/m.j2" as m %}{% from "_p/f.j2" import x %}\n'
                     '{{ read("_m/data.txt") }}{{ prompt("rules", tone="kind") }}\n{{ prompt("other", **kw) }}')
    found = template_uses(tree)
    assert found.partials == (("_p/a.md", 1), ("_p/m.j2", 2), ("_p/f.j2", 2))
    assert found.reads == (("_m/data.txt", 3),)
    assert found.calls == (Call("rules", frozenset({"tone"}), 3), Call("other", None, 4))
    assert not found.dynamic
    assert template_uses(env.parse("{% include name %}")).dynamic
    assert template_uses(env.parse("{{ prompt(name) }}")).dynamic
    assert template_uses(env.parse("{{ read(path) }}")).dynamic


def test_nested_renders_keep_the_outer_deadline_and_chain() -> None:
    seen: list[object] = []

    def inner() -> str:
        seen.append(composition.state.at)
        seen.append(list(composition.chain()))
        return "ok"

    def outer() -> str:
        seen.append(composition.state.at)
        with composition.entering("b"):
            return str(run_bounded(inner, "b"))

    assert run_bounded(outer, "a") == "ok"
    assert seen[0] is seen[1] and isinstance(seen[0], float)  # one deadline, the outer render's
    assert seen[2] == ["a", "b"]
    assert composition.state.at is None and composition.nesting == 0


def test_entering_refuses_a_cycle_and_depth() -> None:
    def cycle() -> None:
        with composition.entering("b"), composition.entering("a"):
            pass

    with pytest.raises(InternalError) as err:
        run_bounded(cycle, "a")
    assert err.value.detail == "prompt 'a': CompositionError: prompt cycle: a → b → a"

    def deep() -> None:
        names = [f"p{i}" for i in range(MAX_NESTING + 1)]
        entered = [composition.entering(n) for n in names]
        for one in entered:
            one.__enter__()

    with pytest.raises(InternalError) as err:
        run_bounded(deep, "top")
    assert err.value.detail is not None and f"deeper than {MAX_NESTING} levels" in err.value.detail
    # the next render starts afresh
    assert run_bounded(lambda: composition.chain(), "again") == ["again"]


def test_spend_is_one_budget_for_the_whole_render() -> None:
    def spend_twice() -> None:
        composition.spend(3 * 1024 * 1024)
        composition.spend(2 * 1024 * 1024)

    with pytest.raises(InternalError) as err:
        run_bounded(spend_twice, "p")
    assert isinstance(err.value.__cause__, CompositionError)
    run_bounded(lambda: composition.spend(3 * 1024 * 1024), "q")  # a new render, a new budget
