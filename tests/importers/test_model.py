"""The bounds and checks every importer's input goes through."""

from __future__ import annotations

import msgspec
import pytest

from promptdeck.importers.model import (
    MAX_VERSIONS,
    Imported,
    ImportRefused,
    Message,
    Version,
    bounded,
    decode_json,
    in_order,
    items,
    typed,
)


def test_json_too_large_too_deep_or_broken_is_one_refusal_naming_the_input(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImportRefused, match="^in.json: the input is nested too deeply$"):
        decode_json(b"[" * 200_000 + b"]" * 200_000, "in.json")
    with pytest.raises(ImportRefused, match="^in.json: not JSON"):
        decode_json(b"{", "in.json")
    monkeypatch.setattr("promptdeck.importers.model.MAX_INPUT_BYTES", 10)
    with pytest.raises(ImportRefused, match="larger than 10 bytes"):
        decode_json(b"[" + b" " * 20 + b"]", "in.json")


class _Record(msgspec.Struct):
    name: str


def test_typed_names_the_field_of_the_wrong_type() -> None:
    assert typed({"name": "a"}, _Record, "x").name == "a"
    with pytest.raises(ImportRefused, match=r"^x: Expected `str`, got `int` - at `\$.name`$"):
        typed({"name": 1}, _Record, "x")


def test_items_takes_one_a_list_or_a_wrapper_and_refuses_other_shapes() -> None:
    assert items({"a": 1}, "x") == [{"a": 1}] and items({"data": [{"a": 1}]}, "x", "data") == [{"a": 1}]
    with pytest.raises(ImportRefused, match="record 1 is int, not an object"):
        items([{}, 3], "x")
    with pytest.raises(ImportRefused, match="not str"):
        items("text", "x")


def test_bounded_refuses_too_many_versions_or_too_much_text() -> None:
    version = Version("1", [Message("user", "x")])
    with pytest.raises(ImportRefused, match=f"prompt 'p' has more than {MAX_VERSIONS} versions"):
        bounded([Imported("p", [version] * (MAX_VERSIONS + 1))], "x")
    with pytest.raises(ImportRefused, match="prompt 'p' version 1 is larger than"):
        bounded([Imported("p", [Version("1", [Message("user", "x" * (1024 * 1024 + 1))])])], "x")


def test_in_order_makes_versions_oldest_first_and_names_a_version_given_twice() -> None:
    def version(n: int) -> Version:
        return Version(str(n), [])

    [made] = in_order({"greet": [3, 1, 2]}, "input.json", lambda n: n, lambda n: n, version)
    assert (made.name, [v.number for v in made.versions]) == ("greet", ["1", "2", "3"])
    with pytest.raises(ImportRefused, match="input.json: prompt 'greet' has version 2 twice"):
        in_order({"greet": [2, 1, 2]}, "input.json", lambda n: n, lambda n: n, version)
