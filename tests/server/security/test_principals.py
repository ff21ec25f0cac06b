"""Who sends a request (server/security/principals.py): scopes nest on ``:`` for what a principal holds, and
only a principal named by credentials keys a rollout."""

from __future__ import annotations

import pytest

from promptdeck.prompts.access import grants
from promptdeck.server.security.principals import Principal, missing_scopes


@pytest.mark.parametrize(("held", "needed", "granted"), [
    (None, "anything", True),
    (frozenset(), "hr", False),
    (frozenset({"hr"}), "hr", True),
    (frozenset({"prompts"}), "prompts:hr", True),
    (frozenset({"prompts"}), "prompts:hr:payroll", True),
    (frozenset({"prompts:hr"}), "prompts", False),
    (frozenset({"prompts:hr"}), "prompts:hr:payroll", True),
    (frozenset({"prompts:h"}), "prompts:hr", False),
    (frozenset({"prompt"}), "prompts:hr", False),
])
def test_scopes_nest_on_colons(held: frozenset[str] | None, needed: str, granted: bool) -> None:
    assert grants(held, needed) is granted
    assert missing_scopes(held, [needed, "x"] if held is not None else [needed]) == (
        ((needed,) if not granted else ()) + (("x",) if held is not None else ()))


def test_only_a_principal_named_by_credentials_keys_a_rollout() -> None:
    assert Principal("alice").rollout_key == "principal:alice"
    assert Principal("127.0.0.1", authenticated=False).rollout_key is None
