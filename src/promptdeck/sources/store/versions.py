"""How two versions of a prompt file differ: their text, and the argument schema each shows clients.

Shared by ``promptdeck diff`` (unified) and the web page's versions view (side by side, through
``server.store_api``). The line matching is difflib's; nothing here compares text itself.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from pathlib import Path
from typing import Any

from ...prompts.spec import META_ARGUMENTS
from ...protocol.revisions import LATEST
from ..files.library import TemplateFolder
from ..files.source import build_prompt, stage_file

#: Equal lines shown around a change; a longer equal run is cut to this much at each end.
CONTEXT = 3
#: Lines of either side past which no side-by-side diff is worked out. difflib's matching grows with the
#: square of the text (and worse) on repetitive lines: crafted versions of 20,000 lines took 68 s here,
#: of 5,000 lines at most about 1 s. A thread cannot be stopped, so the input is what is bounded.
MAX_DIFF_LINES = 5_000


class TooLargeToDiff(ValueError):
    pass


def argument_schema(path: str, data: bytes | None, library: TemplateFolder | None = None) -> dict[str, Any] | None:
    """The argument schema that version of the prompt file ``path`` shows clients; None for a deletion or a
    file that does not parse (on its own, or beside ``library``'s material)."""
    if data is None:
        return None
    if library is None:
        with tempfile.TemporaryDirectory(prefix="promptdeck-version-") as empty:
            return argument_schema(path, data, TemplateFolder(Path(empty)))
    parsed = build_prompt(library, path, stage_file(path, data), compile_now=False)
    if parsed.prompt is None:
        return None
    schema: dict[str, Any] = parsed.prompt.descriptor(LATEST).get("_meta", {}).get(META_ARGUMENTS, {})
    return schema


def schema_text(schema: dict[str, Any] | None) -> str:
    """The schema as diffed: JSON, one key a line, keys sorted; empty for a deletion."""
    return "" if schema is None else json.dumps(schema, indent=2, sort_keys=True) + "\n"


def is_text(data: bytes | None) -> bool:
    """Whether a version's bytes are text to compare line by line (UTF-8, no NUL); a deletion is."""
    if data is None:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data


def text_of(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


def unified(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name))


def side_by_side(old: str, new: str) -> list[dict[str, Any]]:
    """Rows for a two-column view: ``{"op", "left": [line, text] | None, "right": …}``; a long equal run
    keeps ``CONTEXT`` lines at each end around one ``{"op": "skip", "count": n}`` row."""
    left, right = old.splitlines(), new.splitlines()
    if max(len(left), len(right)) > MAX_DIFF_LINES:
        raise TooLargeToDiff(f"a version has more than {MAX_DIFF_LINES} lines; compare them with `promptdeck diff`")
    rows: list[dict[str, Any]] = []
    # autojunk (the default, as for `promptdeck diff`): lines repeated very often are not used as anchors,
    # which keeps repetitive files from the slow path.
    opcodes = difflib.SequenceMatcher(None, left, right).get_opcodes()
    for number, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            keep_head = CONTEXT if number else 0  # no context needed before the first change...
            keep_tail = CONTEXT if number < len(opcodes) - 1 else 0  # ...nor after the last
            if i2 - i1 > keep_head + keep_tail + 1:
                pairs = [*range(i1, i1 + keep_head), None, *range(i2 - keep_tail, i2)]
                skipped = (i2 - i1) - keep_head - keep_tail
            else:
                pairs, skipped = list(range(i1, i2)), 0
            for i in pairs:
                if i is None:
                    rows.append({"op": "skip", "count": skipped})
                else:
                    j = j1 + (i - i1)
                    rows.append({"op": "equal", "left": [i + 1, left[i]], "right": [j + 1, right[j]]})
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            mine = [i + 1, left[i]] if i < i2 else None
            theirs = [j + 1, right[j]] if j < j2 else None
            kind = "replace" if mine and theirs else "delete" if mine else "insert"
            rows.append({"op": kind, "left": mine, "right": theirs})
    return rows
