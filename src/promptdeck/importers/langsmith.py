"""LangSmith Prompt Hub: LangChain's serialized prompts (``langchain_core.load.dumpd``) with commits and tags.

An input is one manifest (the prompt is named by ``--name`` or the file's name), one commit as LangSmith's
API gives it (``{"owner", "repo", "commit_hash", "manifest"}``), a list of commits oldest first, or
``{"repo", "commits": [...], "tags": [{"tag_name", "commit_hash"}]}`` (a tag is a label on that commit).
A manifest is a ``PromptTemplate``, a ``ChatPromptTemplate`` (its message templates; a
``MessagesPlaceholder`` is named, not translated), or a ``RunnableSequence`` of one and a model, whose
constructor arguments (``model``, ``temperature``, ...) become the model settings. Templates are
``f-string`` (LangChain's default), ``mustache`` or ``jinja2``; ``input_types`` type the arguments and
``partial_variables`` give their defaults.
"""

from __future__ import annotations

from typing import Any

from .build import make_version
from .model import Imported, Version, bounded, decode_json, items, refuse

_ROLE_OF = {"SystemMessagePromptTemplate": "system", "HumanMessagePromptTemplate": "human",
            "AIMessagePromptTemplate": "ai", "SystemMessage": "system", "HumanMessage": "human", "AIMessage": "ai"}


def read(data: bytes, where: str, name: str | None = None) -> list[Imported]:
    value = decode_json(data, where)
    tags: dict[str, list[str]] = {}
    if isinstance(value, dict) and "commits" in value:
        name = _text(value.get("repo", name), f"{where}: 'repo'")
        for tag in items(value.get("tags", []), f"{where}: tags"):
            label = _text(tag.get("tag_name"), f"{where}: a tag's 'tag_name'")
            tags.setdefault(_text(tag.get("commit_hash"), f"{where}: tag {label!r}"), []).append(label)
        value = value["commits"]
    if isinstance(value, dict) and value.get("lc") == 1:  # a bare manifest
        if not name:
            raise refuse(where, "a manifest alone needs the prompt's name (--name)")
        value = [{"repo": name, "commit_hash": "1", "manifest": value}]
    commits = items(value, where)
    versions: dict[str, list[Version]] = {}
    for index, commit in enumerate(commits):
        repo = _text(commit.get("repo", name), f"{where}: commit {index}'s 'repo'")
        at = f"{where}: prompt {repo!r} commit {index}"
        number = _text(commit.get("commit_hash", str(index + 1)), f"{at}: 'commit_hash'")
        manifest = _object(commit.get("manifest"), f"{at}: 'manifest'")
        versions.setdefault(repo, []).append(_version(manifest, number[:12], tags.get(number, []),
                                                      _optional_text(commit.get("description"), at), at))
    return bounded([Imported(repo, found) for repo, found in versions.items()], where)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise refuse(where, f"expected text, not {type(value).__name__}")
    return value


def _optional_text(value: Any, where: str) -> str | None:
    return None if value is None else _text(value, where)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise refuse(where, f"expected an object, not {type(value).__name__}")
    return value


def _kind(obj: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """(the class a serialized object is of, its constructor arguments)."""
    path = obj.get("id")
    if obj.get("lc") != 1 or not isinstance(path, list) or not path or not isinstance(path[-1], str):
        raise refuse(where, "not a LangChain serialized object (lc, id, kwargs)")
    return path[-1], _object(obj.get("kwargs", {}), f"{where}: 'kwargs'")


def _version(manifest: dict[str, Any], number: str, labels: list[str], description: str | None,
             where: str) -> Version:
    kind, kwargs = _kind(manifest, where)
    model: dict[str, Any] = {}
    if kind == "RunnableSequence":  # prompt | model, as the hub keeps a prompt saved with its model
        _kind(_object(kwargs.get("first"), f"{where}: 'first'"), where)
        model_kind, model_args = _kind(_object(kwargs.get("last"), f"{where}: 'last'"), where)
        plain = {k: v for k, v in model_args.items() if isinstance(v, str | int | float | bool)}
        model = {"class": model_kind, **plain}
        manifest = kwargs["first"]
        kind, kwargs = _kind(manifest, where)
    messages: list[tuple[str, str]] = []
    notes: list[str] = []
    syntaxes: list[str] = []
    placeholders: set[str] = set()
    if kind == "PromptTemplate":
        messages.append(("human", _template(kwargs, where, syntaxes)))
    elif kind in ("ChatPromptTemplate", "StructuredPrompt"):
        for index, raw in enumerate(kwargs.get("messages", [])):
            at = f"{where}: message {index}"
            part, args = _kind(_object(raw, at), at)
            if part == "MessagesPlaceholder":
                placeholders.add(str(args.get("variable_name", "")))
                notes.append(f"the message placeholder {args.get('variable_name')!r} (messages given at run time)")
            elif part in _ROLE_OF and "prompt" in args:
                _, inner = _kind(_object(args["prompt"], at), at)
                messages.append((_ROLE_OF[part], _template(inner, at, syntaxes)))
            elif part == "ChatMessagePromptTemplate":
                _, inner = _kind(_object(args.get("prompt"), at), at)
                messages.append((_text(args.get("role"), f"{at}: 'role'"), _template(inner, at, syntaxes)))
            elif part in _ROLE_OF and isinstance(args.get("content"), str):
                messages.append((_ROLE_OF[part], args["content"]))
                syntaxes.append("literal")
            else:
                notes.append(f"a {part} message (left out)")
        if kind == "StructuredPrompt":
            notes.append("its output schema (kept in the model settings)")
            model["schema"] = kwargs.get("schema_")
    else:
        raise refuse(where, f"a {kind} is not a prompt template")
    types = {k: v for k, v in _object(kwargs.get("input_types", {}), where).items() if isinstance(v, str)}
    defaults = _object(kwargs.get("partial_variables", {}), where)
    declared = [v for v in kwargs.get("input_variables", []) if isinstance(v, str) and v not in placeholders]
    return make_version(number, messages, syntaxes, types=types,
                        defaults=defaults, declared=declared, model=model, labels=labels, description=description,
                        message=f"LangSmith commit {number}", untranslated=notes)


def _template(kwargs: dict[str, Any], where: str, syntaxes: list[str]) -> str:
    syntaxes.append(_text(kwargs.get("template_format", "f-string"), f"{where}: 'template_format'"))
    template = kwargs.get("template")
    return "" if template == "" else _text(template, f"{where}: 'template'")
