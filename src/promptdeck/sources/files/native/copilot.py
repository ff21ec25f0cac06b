"""VS Code / GitHub Copilot prompt files: ``*.prompt.md`` (``.github/prompts/`` or anywhere in the library).

Markdown with optional YAML front matter (``name``, ``description``, ``argument-hint``, ``agent`` or the
older ``mode``, ``model``, ``tools``). VS Code fills in ``${input:name}`` and ``${input:name:placeholder}``
from the chat input, and a few editor variables (``${selection}``, ``${file}``, ...) from the editor;
over MCP each of them becomes an argument (docs/native-formats.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....prompts.arguments import Argument, make_argument
from ....prompts.spec import Prompt
from ....protocol.errors import LineError
from ._common import Markdown, Plan, check_name, text_prompt

#: The editor's variables that prompt files may use, and what each holds (VS Code's prompt files docs).
WORKSPACE_VARIABLES = {
    "workspaceFolder": "path of the workspace folder",
    "workspaceFolderBasename": "name of the workspace folder",
    "selection": "the text selected in the editor",
    "selectedText": "the text selected in the editor",
    "file": "path of the file open in the editor",
    "fileBasename": "name of the file open in the editor",
    "fileDirname": "folder of the file open in the editor",
    "fileBasenameNoExtension": "name of the file open in the editor, without its extension",
}
_TOKEN = re.compile(r"\$\{input:([^}:]*)(?::([^}]*))?\}|\$\{(" + "|".join(WORKSPACE_VARIABLES) + r")\}")
_INPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
SUFFIX = ".prompt.md"


def read(rel: str, text: str) -> Prompt:
    """``.github/prompts/a/b.prompt.md`` and ``a/b.prompt.md`` are ``a.b``, unless ``name:`` says otherwise."""
    doc = Markdown(text)
    meta = doc.meta
    if "name" in meta:
        name = check_name(meta["name"], doc.line("name"), "name: in the front matter")
    else:
        stem = rel[len(".github/prompts/"):] if rel.startswith(".github/prompts/") else rel
        name = check_name(stem[:-len(SUFFIX)].replace("/", "."), None, f"from the path {rel}")
    description = doc.text("description")
    for setting in ("argument-hint", "agent", "mode", "model"):
        doc.text(setting)
    tools = meta.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
        raise LineError("tools must be a list of tool names", doc.line("tools"))
    found: dict[str, Argument] = {}
    origin: dict[str, str] = {}

    def key(match: re.Match[str]) -> str | None:
        raw, placeholder, variable = match.groups()
        if variable is not None:
            wire, what = variable, f"${{{variable}}}"
            described = WORKSPACE_VARIABLES[variable]
        else:
            if not _INPUT_NAME.match(raw):
                raise LineError(f"${{input:{raw}}}: an input's name is letters, digits, '_' and '-', not "
                                  f"starting with a digit", doc.body_line_of(match.start()))
            wire, what = raw.replace("-", "_"), f"${{input:{raw}}}"  # one input, with or without placeholder
            described = placeholder or f"input {raw}"
        if origin.setdefault(wire, what) != what:
            raise LineError(f"{what} and {origin[wire]} would both be the argument {wire!r}",
                              doc.body_line_of(match.start()))
        if wire not in found:
            found[wire] = make_argument(wire, description=f"{described} ({what})")
        return wire

    plan = Plan(doc.body, _TOKEN, key)

    def resolve(values: Mapping[str, Any]) -> dict[str, str]:
        return {k: str(v) for k, v in values.items()}

    settings = {k: v for k, v in meta.items() if k not in ("name", "description")}
    return text_prompt(name, rel, "copilot", plan, resolve, description=description,
                       arguments=tuple(found.values()), settings=settings, line=doc.line)
