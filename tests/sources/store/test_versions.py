"""How two versions of a prompt file differ (sources/store/versions.py): the argument schema each shows, text or
not, a unified diff and side-by-side rows with long equal runs cut to their context, and a version too long to
compare refused by name."""

from __future__ import annotations

import pytest

from promptdeck.sources.store.versions import (
    CONTEXT,
    MAX_DIFF_LINES,
    TooLargeToDiff,
    argument_schema,
    is_text,
    schema_text,
    side_by_side,
    text_of,
    unified,
)

WITH_ARGUMENT = b"---\ndescription: hi\narguments:\n  - name: who\n    required: true\n---\nuser: Hello {{ who }}\n"


def test_the_argument_schema_of_a_version_is_what_clients_see() -> None:
    schema = argument_schema("greet.md", WITH_ARGUMENT)
    assert schema == {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
    assert schema_text(schema).splitlines()[:2] == ["{", '  "properties": {']  # keys sorted, one a line
    assert schema_text(schema).endswith("}\n")


def test_a_deletion_or_a_broken_file_has_no_schema() -> None:
    assert argument_schema("greet.md", None) is None
    assert argument_schema("greet.md", b"---\ndescription: [\n---\nuser: x\n") is None
    assert schema_text(None) == ""


def test_text_is_utf8_without_nul() -> None:
    assert is_text(None) and is_text("café\n".encode())
    assert not is_text(b"\xff\xfe") and not is_text(b"a\x00b")
    assert text_of(None) == "" and text_of(b"a\xffb") == "a\ufffdb"


def test_unified_names_both_sides() -> None:
    lines = unified("a\nb\n", "a\nc\n", "greet.md@1", "greet.md@2")
    assert lines[:2] == ["--- greet.md@1\n", "+++ greet.md@2\n"]
    assert "-b\n" in lines and "+c\n" in lines and " a\n" in lines


def test_side_by_side_pairs_changes_and_cuts_long_equal_runs() -> None:
    old = "\n".join(f"line {n}" for n in range(1, 21)) + "\nend\n"
    new = old.replace("end", "END") + "extra\n"
    rows = side_by_side(old, new)
    # Before the first change only the skip row and CONTEXT equal lines.
    assert rows[0] == {"op": "skip", "count": 20 - CONTEXT}
    assert rows[1] == {"op": "equal", "left": [18, "line 18"], "right": [18, "line 18"]}
    assert rows[-2] == {"op": "replace", "left": [21, "end"], "right": [21, "END"]}
    assert rows[-1] == {"op": "insert", "left": None, "right": [22, "extra"]}
    assert side_by_side("a\nb\n", "a\n")[-1] == {"op": "delete", "left": [2, "b"], "right": None}


def test_a_version_too_long_to_compare_side_by_side_is_refused_naming_the_way_out() -> None:
    long = "x\n" * (MAX_DIFF_LINES + 1)
    with pytest.raises(TooLargeToDiff, match=rf"more than {MAX_DIFF_LINES} lines; compare them with `promptdeck diff`"):
        side_by_side("x\n", long)
    assert len(unified("x\n", long, "a", "b")) > MAX_DIFF_LINES  # the unified diff still compares them
