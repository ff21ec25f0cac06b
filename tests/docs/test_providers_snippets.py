"""docs/providers.md's examples, run as written: each one renders ``describe-image`` through ``promptdeck
serve`` and sends it with the provider's own SDK client. The client's base URL (the variables the SDKs
document: ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``) is a local HTTP server that
records the request and answers as the provider would. The request must carry exactly what the conversion
gives for the same prompt, and the snippet must print the answer's text."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types as genai

from promptdeck import Audio, Image, assistant, user
from promptdeck.providers import ConversionError, to_anthropic, to_gemini, to_openai, to_openai_responses
from promptdeck.server.app import PromptServer
from promptdeck.server.local import LocalClient
from tests.support.libraries import EXAMPLES
from tests.support.paths import REPO
from tests.support.provider_api import ANSWER, ProviderApi, provider_api

PAGE = REPO / "docs" / "providers.md"


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderApi]:
    with provider_api() as api:
        yield api


def snippets() -> dict[str, str]:
    """``{label: python block}`` for each ``**Label**`` under the page's "Examples"."""
    section = PAGE.read_text().split("## Examples\n", 1)[1].split("\n## ", 1)[0]
    found = {}
    for label, body in re.findall(r"^\*\*([^*]+)\*\*\n(.*?)(?=^\*\*|\Z)", section, re.S | re.M):
        (block,) = re.findall(r"^```python\n(.*?)^```", body, re.S | re.M)
        found[label] = block
    return found


@pytest.fixture(scope="module")
def described() -> dict[str, Any]:
    server = PromptServer()
    server.add_folder(EXAMPLES)
    result: dict[str, Any] = LocalClient(server, "2025-11-25").request(
        "prompts/get", {"name": "describe-image"})["result"]
    return result


def test_the_page_has_one_example_per_conversion() -> None:
    found = snippets()
    assert list(found) == ["OpenAI, Chat Completions", "OpenAI, Responses API", "Anthropic", "Gemini"]
    for label, convert in zip(found, ("to_openai(", "to_openai_responses(", "to_anthropic(", "to_gemini("),
                              strict=True):
        compile(found[label], label, "exec")
        assert convert in found[label], label


def _gemini_contents(contents: list[dict[str, Any]]) -> list[genai.Content]:
    return [genai.Content.model_validate(content) for content in contents]


@pytest.mark.parametrize("label", ["OpenAI, Chat Completions", "OpenAI, Responses API", "Anthropic", "Gemini"])
def test_each_example_sends_the_converted_prompt(label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 provider: ProviderApi, described: dict[str, Any]) -> None:
    url = provider.url
    # The page's commands run from the promptdeck folder: its .venv and its examples.
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(REPO / "src"))  # the tree under test, for the server it starts
    for name, value in {"OPENAI_BASE_URL": f"{url}/v1", "ANTHROPIC_BASE_URL": url, "GOOGLE_GEMINI_BASE_URL": url,
                        "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test", "GEMINI_API_KEY": "g-test",
                        "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(snippets()[label], str(PAGE), "exec"), {"__name__": "__main__"})  # noqa: S102
    assert printed.getvalue() == ANSWER + "\n"
    sent = provider.take()
    path, headers, body = sent.path, sent.headers, sent.body
    system = "Answer in plain English."
    if label == "OpenAI, Chat Completions":
        assert path == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-test"
        assert body["messages"] == to_openai(described, system=system)
        assert body["messages"][1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    elif label == "OpenAI, Responses API":
        assert path == "/v1/responses"
        assert body["input"] == to_openai_responses(described)
    elif label == "Anthropic":
        assert path == "/v1/messages", headers
        assert any("sk-ant-test" in value for value in headers.values()), headers
        assert {"system": body["system"], "messages": body["messages"]} == to_anthropic(described, system=system)
    else:
        assert path == "/v1/models/gemini-2.5-flash:generateContent"
        expected = to_gemini(described, system=system)
        # The SDK sends the REST names (inlineData, mimeType) and base64 of its own alphabet: compare what both mean.
        assert _gemini_contents(body["contents"]) == _gemini_contents(expected["contents"])
        assert body["systemInstruction"]["parts"] == [{"text": system}]
        image = body["contents"][0]["parts"][0]["inlineData"]
        assert base64.urlsafe_b64decode(image["data"]) == (EXAMPLES / "_material" / "diagram.png").read_bytes()


def test_the_errors_shown_are_the_errors_given() -> None:
    """The page's "Errors" block, line by line, from inputs that make each."""
    section = PAGE.read_text().split("## Errors\n", 1)[1]
    (block,) = re.findall(r"^```text\n(.*?)^```", section, re.S | re.M)
    made = []
    for convert, messages in [
        (to_anthropic, [user(Audio(b"RIFF", "audio/wav"))]),
        (to_openai, [user("Q"), assistant("A"), assistant(Image(b"png", "image/png"))]),
        (to_gemini, [{"role": "user", "content": {"type": "text", "text": "Q"}},
                     {"role": "user", "content": {"type": "video", "data": "AAAA", "mimeType": "video/mp4"}}]),
    ]:
        with pytest.raises(ConversionError) as caught:
            convert(messages)
        made.append(str(caught.value))
    assert block.splitlines() == made
