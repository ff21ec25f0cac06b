"""``promptdeck webhook`` (cli/webhooks.py): what it says of the kinds of event comes from the table of kinds
(``sources.store.event_kinds``), in its help and in its refusals. The commands against real stores and
receivers: tests/sources/store/test_webhooks.py."""

from __future__ import annotations

import re
from pathlib import Path

from promptdeck.sources.store.event_kinds import names
from tests.support.store_schema import promptdeck_in_process


def test_the_help_lists_exactly_the_registered_kinds() -> None:
    code, out, _ = promptdeck_in_process("webhook", "add", "--help")
    assert code == 0
    text = " ".join(out.split())  # as click wraps it
    (listed,) = re.findall(r"--event KIND Send only these kinds of event \(repeat\): ([^.]*)\. Default: every kind, "
                           r"those a later promptdeck adds included\.", text)
    assert listed.split(", ") == names() == ["label", "publish", "rollback", "rollout"]


def test_an_unknown_kind_is_refused_naming_the_registered_ones(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    assert promptdeck_in_process("store", "upgrade", f"sqlite:///{tmp_path}/s.db")[0] == 0
    code, _, err = promptdeck_in_process("webhook", "add", "https://example.com/", "--store",
                                         f"sqlite:///{tmp_path}/s.db", "--secret-file", str(secret), "--new-secret",
                                         "--event", "label", "--event", "deploy")
    assert code == 1 and f"no event kind 'deploy'; the kinds are {', '.join(names())}" in err
    assert not secret.exists()  # refused before anything was written
