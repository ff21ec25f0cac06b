"""The bytes of resource reads in flight (prompts/read_budget.py): taken before a read, given back after it,
refused past a principal's share (429) or the total (503), the refusal naming the resource."""

from __future__ import annotations

import threading

import pytest

from promptdeck.prompts.read_budget import ReadBudget, answer_held, answering, spend, spending
from promptdeck.protocol.errors import INVALID_REQUEST, InvalidRequest


def test_spend_outside_a_read_takes_nothing() -> None:
    spend(10**12, "promptdeck:///huge")  # a test or the CLI reading a file: no budget applies, nothing raised


def test_a_read_takes_its_bytes_and_gives_them_back_on_leaving() -> None:
    budget = ReadBudget(total=100, per_principal=50)
    with spending(budget, "ann"):
        spend(20, "promptdeck:///a")
        spend(5, "promptdeck:///b")
        assert (budget.held("ann"), budget.taken) == (25, 25)
    assert (budget.held("ann"), budget.taken) == (0, 0)


def test_a_failed_read_gives_back_at_once_even_inside_an_answer() -> None:
    budget = ReadBudget(total=100, per_principal=50)
    with answering():
        with pytest.raises(KeyError), spending(budget, "ann", answer_held()):
            spend(20, "promptdeck:///a")
            raise KeyError("read failed")
        assert budget.taken == 0


def test_past_a_share_is_429_naming_the_resource_and_leaves_the_budget_as_it_was() -> None:
    budget = ReadBudget(total=100, per_principal=30)
    budget.take("ann", 20, "promptdeck:///one")
    with pytest.raises(InvalidRequest) as caught:
        budget.take("ann", 20, "promptdeck:///two")
    error = caught.value
    assert (error.code, error.http_status) == (INVALID_REQUEST, 429)
    assert "'promptdeck:///two'" in str(error) and "30" in str(error)
    assert error.data == {"uri": "promptdeck:///two", "retryAfter": 1}
    assert (budget.held("ann"), budget.taken) == (20, 20)  # the refused read took nothing


def test_past_the_total_is_503_whoever_asks() -> None:
    budget = ReadBudget(total=50, per_principal=40)
    budget.take("ann", 40, "promptdeck:///a")
    with pytest.raises(InvalidRequest) as caught:
        budget.take("bob", 20, "promptdeck:///b")
    assert caught.value.http_status == 503 and "'promptdeck:///b'" in str(caught.value)
    budget.take("bob", 10, "promptdeck:///c")  # what still fits is served
    assert budget.taken == 50


def test_a_lone_read_fits_however_large() -> None:
    budget = ReadBudget(total=10, per_principal=5)
    budget.take("ann", 1000, "promptdeck:///big")
    budget.give("ann", 1000)
    assert (budget.held("ann"), budget.taken) == (0, 0)


def test_takes_from_many_threads_add_up_exactly() -> None:
    budget = ReadBudget(total=10**9, per_principal=10**9)

    def work(principal: str) -> None:
        for _ in range(500):
            budget.take(principal, 3, "promptdeck:///x")
            budget.give(principal, 1)

    threads = [threading.Thread(target=work, args=(f"p{i % 2}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.taken == 4 * 500 * 2
    assert budget.held("p0") == budget.held("p1") == 2 * 500 * 2
