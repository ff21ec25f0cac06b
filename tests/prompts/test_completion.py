"""Argument completion (prompts/completion.py): where suggestions come from, their order (exact prefix
first, then any case, duplicates once), the 100-value and 10,000-candidate limits, hooks and their faults."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest

from promptdeck.prompts import completion
from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.completion import MAX_CANDIDATES, MAX_VALUES, Suggestions, complete
from promptdeck.prompts.spec import Completer, Prompt, RenderContext
from promptdeck.protocol.content import Message
from promptdeck.protocol.errors import InternalError, InvalidParams


def make(*arguments: Any, completers: Mapping[str, Completer] | None = None) -> Prompt:
    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        return []

    return Prompt("p", render, arguments=tuple(arguments), completers=completers or {})


def done(result: Any) -> dict[str, Any]:
    assert isinstance(result, dict), result
    return result


def values(prompt: Prompt, typed: str, argument: str = "x") -> list[str]:
    found: list[str] = done(complete(prompt, argument, typed, None))["values"]
    return found


# -- where suggestions come from ----------------------------------------------------------------------


def test_enum_or_examples_then_the_default() -> None:
    assert values(make(make_argument("x", enum=["b", "a", "c"], default="c")), "") == ["b", "a", "c"]
    assert values(make(make_argument("x", examples=["e", "d"], default="c")), "") == ["e", "d", "c"]


def test_typed_values_are_shown_as_the_client_would_type_them() -> None:
    prompt = make(make_argument("n", type="number", enum=[1.0, 2.5]),
                  make_argument("flag", type="boolean", default=True))
    assert values(prompt, "", "n") == ["1", "2.5"]
    assert values(prompt, "", "flag") == ["true"]


def test_an_argument_with_nothing_to_suggest_gives_an_empty_completion() -> None:
    assert done(complete(make(make_argument("x")), "x", "a", None)) == {"values": [], "total": 0, "hasMore": False}


# -- order and filtering ------------------------------------------------------------------------------


def test_exact_prefix_matches_come_before_case_insensitive_ones_each_in_their_order() -> None:
    prompt = make(make_argument("x", enum=["Beta", "beta", "alpha", "BETAMAX", "bet", "be", "Be"]))
    assert values(prompt, "be") == ["beta", "bet", "be", "Beta", "BETAMAX", "Be"]
    assert values(prompt, "Be") == ["Beta", "Be", "beta", "BETAMAX", "bet", "be"]


def test_case_folding_is_unicode_aware() -> None:
    prompt = make(make_argument("x", enum=["Straße", "STRASSE", "other"]))
    assert values(prompt, "strass") == ["Straße", "STRASSE"]


def test_a_value_suggested_twice_is_listed_once() -> None:
    prompt = make(make_argument("x", enum=["a", "b"], examples=["a", "ab"], default="b"))
    result = done(complete(prompt, "x", "", None))
    assert result == {"values": ["a", "b", "ab"], "total": 3, "hasMore": False}


def test_at_most_100_values_with_the_total_and_has_more() -> None:
    prompt = make(make_argument("x", examples=[f"v{i:03d}" for i in range(250)]))
    result = done(complete(prompt, "x", "v", None))
    assert len(result["values"]) == MAX_VALUES == 100
    assert result["values"] == [f"v{i:03d}" for i in range(100)]
    assert result["total"] == 250 and result["hasMore"] is True
    result = done(complete(prompt, "x", "v1", None))
    assert result["total"] == 100 and result["hasMore"] is False


# -- the request's own checks -------------------------------------------------------------------------


@pytest.mark.parametrize(("argument", "value", "words"), [
    (None, "", '"argument.name" must be a string'),
    ("x", 3, '"argument.value" must be a string'),
    ("y", "", "prompt 'p' has no argument 'y'"),
])
def test_bad_requests_are_invalid_params(argument: object, value: object, words: str) -> None:
    with pytest.raises(InvalidParams, match=words):
        complete(make(make_argument("x")), argument, value, None)


# -- hooks --------------------------------------------------------------------------------------------


def test_a_hook_gets_the_typed_value_and_the_string_arguments_filled() -> None:
    seen: list[tuple[str, dict[str, str]]] = []

    def hook(value: str, filled: Mapping[str, str]) -> list[str]:
        seen.append((value, dict(filled)))
        return ["apple", "Apricot", "banana", "apple"]

    prompt = make(make_argument("x", enum=["ignored"]), make_argument("y"), completers={"x": hook})
    result = done(complete(prompt, "x", "ap", {"y": "1", "z": 2, 3: "no"}))  # type: ignore[dict-item]
    assert seen == [("ap", {"y": "1"})]
    # the hook replaces the enum, and its answer is filtered and ordered like any other
    assert result == {"values": ["apple", "Apricot"], "total": 2, "hasMore": False}


def test_a_hook_given_by_the_server_replaces_the_prompts_own() -> None:
    prompt = make(make_argument("x"), completers={"x": lambda v, f: ["own"]})
    assert done(complete(prompt, "x", "", None, lambda v, f: ["server"]))["values"] == ["server"]


def test_a_hook_is_read_no_further_than_its_candidate_limit() -> None:
    pulled = itertools.count()

    def endless(value: str, filled: Mapping[str, str]) -> Iterator[str]:
        while True:
            yield f"x{next(pulled)}"

    result = done(complete(make(make_argument("x"), completers={"x": endless}), "x", "x", None))
    assert next(pulled) == MAX_CANDIDATES  # exactly MAX_CANDIDATES taken before
    assert result["total"] == MAX_CANDIDATES and result["hasMore"] is True


def test_hook_values_are_made_strings() -> None:
    def numbers(value: str, filled: Mapping[str, str]) -> Iterable[Any]:
        return [1, 12, 2]

    assert values(make(make_argument("x"), completers={"x": numbers}), "1") == ["1", "12"]


def test_suggestions_are_served_as_the_hook_chose_them() -> None:
    chosen = Suggestions(["zeta", "Alpha", "zeta"], total=500, has_more=True)
    prompt = make(make_argument("x"), completers={"x": lambda v, f: chosen})
    result = done(complete(prompt, "x", "a", None))
    # not filtered by the prefix, not deduplicated, the hook's total and has_more kept
    assert result == {"values": ["zeta", "Alpha", "zeta"], "total": 500, "hasMore": True}


def test_suggestions_past_100_are_cut_and_a_total_too_small_is_corrected() -> None:
    many = Suggestions([f"s{i}" for i in range(150)], total=3)
    result = done(complete(make(make_argument("x"), completers={"x": lambda v, f: many}), "x", "", None))
    assert len(result["values"]) == 100
    assert result["total"] == 150 and result["hasMore"] is True
    few = Suggestions(["a"])
    result = done(complete(make(make_argument("x"), completers={"x": lambda v, f: few}), "x", "", None))
    assert result == {"values": ["a"], "total": 1, "hasMore": False}


def test_a_failing_hook_is_a_generic_internal_error() -> None:
    def broken(value: str, filled: Mapping[str, str]) -> list[str]:
        raise KeyError("secret")

    with pytest.raises(InternalError) as caught:
        complete(make(make_argument("x"), completers={"x": broken}), "x", "", None)
    assert caught.value.message == "Internal error"
    assert caught.value.detail == "completer for p/x failed: KeyError('secret')"


def test_a_hooks_own_mcp_error_reaches_the_client() -> None:
    def refuses(value: str, filled: Mapping[str, str]) -> list[str]:
        raise InvalidParams("not that")

    with pytest.raises(InvalidParams, match="not that"):
        complete(make(make_argument("x"), completers={"x": refuses}), "x", "", None)


# -- async hooks --------------------------------------------------------------------------------------


def run(result: Any) -> dict[str, Any]:
    assert not isinstance(result, dict)

    async def wait() -> dict[str, Any]:
        answer: dict[str, Any] = await result
        return answer

    return asyncio.run(wait())


def test_an_async_hook_is_awaited_and_ranked() -> None:
    async def hook(value: str, filled: Mapping[str, str]) -> list[str]:
        await asyncio.sleep(0)
        return ["Ab", "ab", "b"]

    result = run(complete(make(make_argument("x"), completers={"x": hook}), "x", "a", None))
    assert result == {"values": ["ab", "Ab"], "total": 2, "hasMore": False}


def test_an_async_hook_that_fails_or_refuses() -> None:
    async def broken(value: str, filled: Mapping[str, str]) -> list[str]:
        raise ValueError("x")

    async def refuses(value: str, filled: Mapping[str, str]) -> list[str]:
        raise InvalidParams("no")

    with pytest.raises(InternalError):
        run(complete(make(make_argument("x"), completers={"x": broken}), "x", "", None))
    with pytest.raises(InvalidParams):
        run(complete(make(make_argument("x"), completers={"x": refuses}), "x", "", None))


def test_an_async_hook_past_its_time_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(completion, "HOOK_SECONDS", 0.05)

    async def slow(value: str, filled: Mapping[str, str]) -> list[str]:
        await asyncio.sleep(30)
        return []

    with pytest.raises(InternalError) as caught:
        run(complete(make(make_argument("x"), completers={"x": slow}), "x", "", None))
    assert caught.value.detail == "completer for p/x did not answer within 0.05 s"
