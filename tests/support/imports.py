"""Inputs for the importers' tests, made by each tool's own library where one installs here (dev extra):
Langfuse's SDK types, LangSmith's schemas with LangChain's own serializer, OpenAI's message types; PromptLayer
and Humanloop have no such library here, so their inputs follow their documented examples (said below)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.load import dumpd
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder, PromptTemplate
from langfuse.api import ChatMessage, Prompt_Chat, Prompt_Text
from langsmith.schemas import PromptCommit
from openai.types.responses import EasyInputMessage, ResponseInputText


def langfuse_records() -> list[dict[str, Any]]:
    """Two prompts as Langfuse's API returns them (its SDK's own models, dumped by their aliases): a text
    prompt in two versions, the second labelled production, and a chat prompt labelled staging."""
    prompts = [
        Prompt_Text(name="greet", version=1, prompt="Hi {{name}}", config={"model": "gpt-4o"}, labels=[],
                    tags=["onboarding"], commit_message=None),
        Prompt_Text(name="greet", version=2, prompt="Hello {{ name }}, welcome to {{team}}.",
                    config={"model": "gpt-4o", "temperature": 0.2}, labels=["production", "latest"],
                    tags=["onboarding"], commit_message="warmer"),
        Prompt_Chat(name="support/triage", version=1, prompt=[
            ChatMessage(role="system", content="You sort tickets about {{product}}."),
            ChatMessage(role="user", content="{{ticket}}")], config={}, labels=["staging"], tags=[],
            commit_message=None),
    ]
    return [p.model_dump(mode="json", by_alias=True) for p in prompts]


def joke_templates() -> tuple[ChatPromptTemplate, ChatPromptTemplate]:
    """The two versions of the LangChain prompt ``langsmith_commits`` serializes."""
    first = ChatPromptTemplate.from_messages([("system", "You tell {style} jokes."), ("human", "About {topic}")])
    second = ChatPromptTemplate.from_messages([
        ("system", "You tell {style} jokes; braces look like {{this}}."), MessagesPlaceholder("history"),
        ("human", "About {topic}")])
    return first, second


def langsmith_commits() -> dict[str, Any]:
    """A Prompt Hub repository's commits oldest first (LangSmith's ``PromptCommit``, manifests made by
    ``langchain_core.load.dumpd``) and a tag on the newest, as its API lists them."""
    first, second = joke_templates()
    commits = [PromptCommit(owner="-", repo="joke", commit_hash=h, manifest=dumpd(t), examples=[])
               for h, t in (("a1b2c3d4e5f6a7b8", first), ("f6e5d4c3b2a1f0e9", second))]
    return {"repo": "joke", "commits": [c.model_dump(mode="json") for c in commits],
            "tags": [{"tag_name": "prod", "commit_hash": "f6e5d4c3b2a1f0e9"}]}


def langsmith_manifest() -> dict[str, Any]:
    """One PromptTemplate, serialized by LangChain, with a partial variable (its default)."""
    template = PromptTemplate(template="Summarize in {words} words: {text} ({lang})",
                              input_variables=["words", "text"], partial_variables={"lang": "en"})
    return dumpd(template)  # type: ignore[no-any-return]


def promptlayer_versions() -> list[dict[str, Any]]:
    """PromptLayer's prompt template as its REST API documents ``GET /prompt-templates/{name}`` (no client
    library of PromptLayer installs here): two versions, the second with the release label prod."""
    def version(number: int, text: str, labels: list[str]) -> dict[str, Any]:
        def message(role: str, text: str, variables: list[str]) -> dict[str, Any]:
            return {"role": role, "input_variables": variables, "template_format": "f-string",
                    "content": [{"type": "text", "text": text}]}
        return {"id": 7, "prompt_name": "welcome-email", "version": number, "release_labels": labels,
                "tags": ["email"], "commit_message": f"v{number}",
                "prompt_template": {"type": "chat", "input_variables": ["customer"], "template_format": "f-string",
                                    "messages": [message("system", "You write emails.", []),
                                                 message("user", text, ["customer"])]},
                "metadata": {"model": {"provider": "openai", "name": "gpt-4o-mini",
                                       "parameters": {"temperature": 0.7}}}}
    return [version(1, "Welcome {customer}!", []), version(2, "Welcome aboard, {customer}!", ["prod"])]


def openai_prompt_objects() -> dict[str, Any]:
    """OpenAI prompt objects as ``v1/prompts`` lists them (``{"object": "list", "data": [...]}``; the SDK has no
    type for the object itself, so its messages are the SDK's own Responses input types, and the object's
    fields follow OpenAI's prompting guide: ``{{variable}}`` in messages, a model and its settings)."""
    def message(role: Any, text: str) -> dict[str, Any]:
        return EasyInputMessage(role=role, type="message",
                                content=[ResponseInputText(type="input_text", text=text)]).model_dump(mode="json")
    def version(number: str, text: str, default: bool) -> dict[str, Any]:
        return {"object": "prompt", "id": "pmpt_68ab", "name": "summarize", "version": number, "is_default": default,
                "model": "gpt-4.1", "temperature": 0.3,
                "variables": {"city": {"type": "string"}, "days": {"type": "integer", "default": 3}},
                "messages": [message("developer", "You plan trips."), message("user", text)]}
    return {"object": "list", "data": [version("1", "A trip to {{city}}.", False),
                                       version("2", "A {{days}}-day trip to {{city}}.", True)]}


#: A Humanloop .prompt file as Humanloop's docs show one (its serialization format: YAML front matter, then
#: the messages in role tags); the company closed in 2025 and its SDK no longer installs.
HUMANLOOP_PROMPT = """---
model: gpt-4o
temperature: 0.7
max_tokens: -1
provider: openai
endpoint: chat
---
<system>
  You are a friendly assistant for {{ company }}.
</system>
<user>
  {{ question }}
</user>
"""


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path
