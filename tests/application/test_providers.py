"""``Rendered``'s provider formats are ``promptdeck.providers``' conversions of its messages (tested there against
each provider's SDK types); here, that each method hands its messages over unchanged and gives the result back."""

from __future__ import annotations

import pytest

from promptdeck import Prompts, providers
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES


@pytest.mark.parametrize("name", sorted(EXAMPLE_ARGS))
def test_each_conversion_is_the_providers_of_the_rendered_messages(name: str) -> None:
    with Prompts(str(EXAMPLES), watch=False) as prompts:
        rendered = prompts.render(name, **EXAMPLE_ARGS[name])
    for method in ("to_openai", "to_openai_responses", "to_anthropic", "to_gemini"):
        for system in (None, "Be brief."):
            try:
                expected = getattr(providers, method)(rendered.messages, system=system)
            except providers.ConversionError as exc:
                with pytest.raises(providers.ConversionError) as caught:
                    getattr(rendered, method)(system=system)
                assert str(caught.value) == str(exc)
                continue
            assert getattr(rendered, method)(system=system) == expected
    assert rendered.to_openai()  # every example gives at least one message
