"""Writing a library in other tools' prompt formats (``promptdeck export --to FORMAT``).

Each prompt is first made a ``Shape`` (``shapes.py``): its messages as text
with holes for the arguments it only substitutes. A target then writes the
shape in its own syntax. What a target cannot say is reported, one warning per
prompt: arguments fixed to a value, typed arguments become text, messages
joined, content left out, defaults a format has no place for, and the parts
(partials, read files, composed prompts) whose text is inlined, as no format
has promptdeck's includes.

The formats, and where their files go (relative to the output folder):

| target | file | arguments become |
|---|---|---|
| claude-code | `.claude/commands/NS/NAME.md` | `$ARGUMENTS` (one), or `$NAME` listed in `arguments:` (up to ten) |
| copilot | `.github/prompts/NAME.prompt.md` | `${input:NAME:DESCRIPTION}` |
| cursor | `.cursor/commands/NAME.md` | only the text typed after the command, when it ends the prompt |
| codex | `.codex/prompts/NAME.md` | `$NAME` (upper case, given as NAME=value, required) |
| gemini | `.gemini/commands/NS/NAME.toml` | `{{args}}` (one) |
| prompty | `NAME.prompty` | `{{NAME}}` in a jinja2 template, typed `inputs` |
| dotprompt | `NAME.prompt` | `{{NAME}}` in Handlebars, a Picoschema input |
| promptfoo | `prompts/NAME.txt` (or `.json`, a chat), `promptfooconfig.yaml` (tests) | `{{ NAME }}` in Nunjucks |
| github-models | `NAME.prompt.yml` | `{{NAME}}` in each message's content |
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..prompts.arguments import MISSING
from ..prompts.graph import Graph
from ..prompts.spec import Prompt
from ..protocol.content import Role
from . import promptfoo
from .shapes import LEFT_OUT, Hole, Part, Shape, fixed_value, sample_values, shape_of, shown_value

TARGETS = ("claude-code", "copilot", "cursor", "codex", "gemini", "prompty", "dotprompt", "promptfoo", "github-models")


@dataclass
class Written:
    """One prompt in a target format: the file to write and what it could not keep."""

    prompt: str
    path: str
    text: str
    warnings: list[str] = field(default_factory=list)
    #: the arguments kept as placeholders, in order, and those fixed with the value the text holds
    kept: list[str] = field(default_factory=list)
    fixed: dict[str, Any] = field(default_factory=dict)
    #: the shape it was written from (a target that writes more than one file per prompt reads it again)
    shape: Shape | None = field(default=None, repr=False)


def export(prompts: Iterable[Prompt], target: str) -> list[Written]:
    """Every prompt written for ``target``, in name order."""
    write = _WRITERS.get(target)
    if write is None:
        raise ValueError(f"unknown export format {target!r}; use one of {', '.join(TARGETS)}")
    prompts = list(prompts)
    graph = Graph(prompts)
    out = []
    for prompt in sorted(prompts, key=lambda p: p.name):
        shape = shape_of(prompt)
        written = write(shape)
        written.warnings[:0] = [*_inlined(graph, prompt.name), *shape.notes]
        written.kept = [a.name for a in shape.holes]
        written.fixed = dict(shape.fixed)
        written.shape = shape
        out.append(written)
    return out


# -- what every target shares ------------------------------------------------------------------


def _inlined(graph: Graph, name: str) -> list[str]:
    """What the export says of the prompt's parts: the formats have no includes, so the shape (a render) holds
    every part's text in place; a part named by an expression is inlined as the exported values pick it, and an
    argument that picks it, or that a composed prompt does more with, is fixed (``shape_of`` says which)."""
    files, prompts = graph.parts(name)
    said = [f"prompt {p}" for p in sorted(prompts)] + sorted(files)
    out = [f"its parts are inlined as rendered: {', '.join(said)}"] if said else []
    if graph.uses(name).dynamic:
        out.append("a part it names by an expression is inlined as the exported arguments pick it")
    return out


def _front(fields: dict[str, Any]) -> str:
    """YAML front matter between ``---`` lines (keys in the order given; nothing when empty)."""
    import yaml  # not at import time: the CLI imports this module for its list of targets

    kept = {k: v for k, v in fields.items() if v not in (None, "", [], {})}
    if not kept:
        return ""
    return "---\n" + yaml.safe_dump(kept, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def _single_body(shape: Shape, fill: dict[str, str], warnings: list[str]) -> str:
    """The messages as one text, for formats that hold one user message."""
    if len(shape.messages) > 1:
        warnings.append(f"its {len(shape.messages)} messages are joined into one")
    if any(role != "user" for role, _ in shape.messages):
        warnings.append("the assistant's messages become part of the user's text")
    return shape.text(fill)


def _fix(shape: Shape, names: Iterable[str], why: str, warnings: list[str]) -> None:
    """Give up holes: an optional argument without a default is left out, as a render without it leaves
    out what depends on it (the shape is made again without it); any other keeps its default or sample."""
    names = list(names)
    values = {**{a.name: sample_values(a)[0] for a in shape.holes}, **shape.fixed}
    chosen = {a.name: fixed_value(shape.prompt, a, values) for a in shape.holes if a.name in names}
    absent = tuple(name for name, value in chosen.items() if value is LEFT_OUT)
    if absent:
        again = shape_of(shape.prompt, absent)  # the prompt's own left-out arguments come again, noted
        shape.messages, shape.holes, shape.fixed, shape.left_out, shape.notes = \
            again.messages, again.holes, again.fixed, again.left_out, again.notes
        for name in absent:
            warnings.append(f"argument {name!r} is left out: {why}")
    for name in names:
        arg = next((a for a in shape.holes if a.name == name), None)
        if arg is None:  # left out above, or no hole once the others were
            continue
        value = arg.default if arg.default is not MISSING else chosen.get(name, sample_values(arg)[0])
        text = "true" if value is True else "false" if value is False else str(value)
        shape.messages = [(role, [text if isinstance(p, Hole) and p.name == name else p for p in parts])
                          for role, parts in shape.messages]
        shape.holes = [a for a in shape.holes if a.name != name]
        shape.fixed[name] = value
        shape.notes = [note for note in shape.notes if not note.startswith(f"leaving out {name!r} ")]
        warnings.append(f"argument {name!r} is fixed to {shown_value(value)}: {why}")


def _typed_as_text(shape: Shape, warnings: list[str]) -> None:
    for arg in shape.holes:
        if arg.type != "string" or arg.enum is not None or arg.pattern is not None:
            rule = "its choices" if arg.enum is not None else "its pattern" if arg.pattern is not None else \
                f"its type ({arg.type})"
            warnings.append(f"argument {arg.name!r} loses {rule}: the format takes any text")


def _defaults_lost(shape: Shape, warnings: list[str]) -> None:
    for arg in shape.holes:
        if arg.default is not MISSING:
            warnings.append(f"argument {arg.name!r} loses its default {shown_value(arg.default)}: it must be given")


def _clashes(shape: Shape, pattern: str, fmt: str, warnings: list[str]) -> None:
    """Warn about prompt text that the format would take for a placeholder and fill in."""
    found = sorted({m.group(0) for _, parts in shape.messages for part in parts if isinstance(part, str)
                    for m in re.finditer(pattern, part)})
    if found:
        warnings.append(f"the text holds {', '.join(map(repr, found[:3]))}, which {fmt} would fill in")


def _described(prompt: Prompt) -> str | None:
    return prompt.description or prompt.title


def _folders(prompt: Prompt) -> str:
    """``git.commit`` as ``git/commit``: a dotted name's namespaces become folders."""
    return prompt.name.replace(".", "/")


# -- the targets -------------------------------------------------------------------------------


def _claude_code(shape: Shape) -> Written:
    warnings: list[str] = []
    if len(shape.holes) > 10:
        _fix(shape, [a.name for a in shape.holes[10:]], "Claude Code commands take at most ten", warnings)
    names = [a.name for a in shape.holes]
    # Before the holes are written in: only the prompt's own text can clash.
    _clashes(shape, r"\$(?:ARGUMENTS(?:\[\d+\])?|\d(?!\d)" + "".join(f"|{n}(?![A-Za-z0-9_-])" for n in names)
             + ")", "Claude Code", warnings)
    if len(names) == 1:
        # $ARGUMENTS is everything typed, spaces and all; the one argument is then called "arguments".
        shape.messages = [(role, ["$ARGUMENTS" if isinstance(p, Hole) else p for p in parts])
                          for role, parts in shape.messages]
        if names[0] != "arguments":
            warnings.append(f"argument {names[0]!r} is called 'arguments' in Claude Code")
    elif names:
        # Named positions ($name, listed in `arguments:`), or $ARGUMENTS[N] where a name would run on
        # into the text after it.
        out: list[tuple[Role, list[Part]]] = []
        for role, parts in shape.messages:
            written: list[Part] = []
            for i, part in enumerate(parts):
                if isinstance(part, Hole):
                    after = parts[i + 1] if i + 1 < len(parts) else ""
                    runs_on = isinstance(after, str) and re.match(r"[A-Za-z0-9_-]", after) is not None
                    written.append(f"$ARGUMENTS[{names.index(part.name)}]" if runs_on else f"${part.name}")
                else:
                    written.append(part)
            out.append((role, written))
        shape.messages = out
        warnings.append("Claude Code splits what is typed at spaces: each argument holds one word")
    _typed_as_text(shape, warnings)
    _defaults_lost(shape, warnings)
    body = _single_body(shape, {}, warnings)
    front = _front({"description": _described(shape.prompt),
                    "argument-hint": " ".join(f"[{n}]" for n in names) or None,
                    "arguments": names if len(names) > 1 else None,
                    **_model(shape.prompt, ("model", "allowed-tools"), "claude-command")})
    return Written(shape.prompt.name, f".claude/commands/{_folders(shape.prompt)}.md", front + body + "\n",
                   warnings)


def _copilot(shape: Shape) -> Written:
    warnings: list[str] = []
    seen: set[str] = set()
    fill_parts: list[tuple[Role, list[Part]]] = []
    for role, parts in shape.messages:
        out: list[Part] = []
        for part in parts:
            if isinstance(part, Hole):
                arg = next(a for a in shape.holes if a.name == part.name)
                # The first use names what to ask for; later ones only refer to it.
                description = (arg.description or "").replace("}", ")").replace("\n", " ")
                out.append(f"${{input:{arg.name}:{description}}}" if part.name not in seen and description
                           else f"${{input:{arg.name}}}")
                seen.add(part.name)
            else:
                out.append(part)
        fill_parts.append((role, out))
    _clashes(shape, r"\$\{(?:input:[^}]*|selection|selectedText|file|fileBasename|fileDirname|"
                    r"fileBasenameNoExtension|workspaceFolder|workspaceFolderBasename)\}", "VS Code", warnings)
    shape.messages = fill_parts
    _typed_as_text(shape, warnings)
    _defaults_lost(shape, warnings)
    body = _single_body(shape, {}, warnings)
    front = _front({"name": shape.prompt.name, "description": _described(shape.prompt),
                    **_model(shape.prompt, ("model", "tools", "mode", "agent"), "copilot")})
    return Written(shape.prompt.name, f".github/prompts/{shape.prompt.name}.prompt.md", front + body + "\n",
                   warnings)


def _cursor(shape: Shape) -> Written:
    warnings: list[str] = []
    # Cursor commands are plain text, and what is typed after the command is sent after it, after a
    # blank line. So an argument survives only as the very end of the prompt, after a blank line.
    last_role, last_parts = shape.messages[-1] if shape.messages else ("user", [])
    trailing = last_parts[-1] if last_parts and isinstance(last_parts[-1], Hole) else None
    before = last_parts[-2] if len(last_parts) > 1 and isinstance(last_parts[-2], str) else ""
    keep = trailing.name if trailing is not None and len(shape.holes) == 1 and before.endswith("\n\n") \
        and not before.endswith("\n\n\n") else None
    _fix(shape, [a.name for a in shape.holes if a.name != keep], "Cursor commands have no placeholders", warnings)
    if keep is not None:
        shape.messages[-1] = (last_role, [*last_parts[:-2], before[:-2]])
        if keep != "arguments":
            warnings.append(f"argument {keep!r} is what is typed after the command ('arguments')")
    _defaults_lost(shape, warnings)
    # The file is the text exactly, with no line end added: Cursor sends it as written.
    body = _single_body(shape, {}, warnings)
    return Written(shape.prompt.name, f".cursor/commands/{shape.prompt.name}.md", body, warnings)


def _codex(shape: Shape) -> Written:
    warnings: list[str] = []
    # Named placeholders: $ and a capital, then capitals, digits and _. A name that is no such word, that
    # would clash in upper case, or that runs on into the text after it cannot be one.
    seen: dict[str, str] = {}
    unfit = []
    for arg in shape.holes:
        key = arg.name.upper()
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", key) or key == "ARGUMENTS" or key in seen:
            unfit.append(arg.name)
        seen.setdefault(key, arg.name)
    for _, parts in shape.messages:
        for i, part in enumerate(parts):
            after = parts[i + 1] if i + 1 < len(parts) else ""
            if isinstance(part, Hole) and isinstance(after, str) and re.match(r"[A-Z0-9_]", after):
                unfit.append(part.name)
    _fix(shape, list(dict.fromkeys(unfit)), "Codex has no placeholder for it here", warnings)
    # A body with named placeholders replaces only those; one without, $1..$9 and $ARGUMENTS.
    named = r"(?<!\$)\$(?!ARGUMENTS\b)[A-Z][A-Z0-9_]*"
    literal = [p for _, parts in shape.messages for p in parts if isinstance(p, str)]
    if shape.holes or any(re.search(named, text) for text in literal):
        _clashes(shape, named, "Codex", warnings)
    else:
        _clashes(shape, r"\$(?:[1-9]|ARGUMENTS)", "Codex", warnings)
    for arg in shape.holes:
        if not arg.required:
            warnings.append(f"argument {arg.name!r} is required in Codex (as {arg.name.upper()})")
    _typed_as_text(shape, warnings)
    _defaults_lost(shape, warnings)
    body = _single_body(shape, {a.name: "$" + a.name.upper() for a in shape.holes}, warnings)
    hint = " ".join(f"{a.name.upper()}=<{a.name}>" for a in shape.holes)
    front = _front({"description": _described(shape.prompt), "argument-hint": hint or None})
    return Written(shape.prompt.name, f".codex/prompts/{shape.prompt.name}.md", front + body + "\n", warnings)


def _gemini(shape: Shape) -> Written:
    warnings: list[str] = []
    if len(shape.holes) > 1:
        _fix(shape, [a.name for a in shape.holes[1:]], "Gemini CLI commands take one text, {{args}}", warnings)
    _clashes(shape, r"\{\{args\}\}|!\{[^}]*\}|@\{[^}]*\}", "Gemini CLI", warnings)
    _typed_as_text(shape, warnings)
    _defaults_lost(shape, warnings)
    body = _single_body(shape, {a.name: "{{args}}" for a in shape.holes}, warnings)
    lines = []
    if _described(shape.prompt):
        lines.append(f"description = {json.dumps(_described(shape.prompt), ensure_ascii=False)}")
    # A TOML multi-line literal string keeps the text byte for byte, unless it holds ''' itself.
    if "'''" in body:
        lines.append(f"prompt = {json.dumps(body, ensure_ascii=False)}")
    else:
        lines.append(f"prompt = '''\n{body}'''")
    return Written(shape.prompt.name, f".gemini/commands/{_folders(shape.prompt)}.toml", "\n".join(lines) + "\n",
                   warnings)


_JINJA_SYNTAX = re.compile(r"\{\{|\{%|\{#")
#: A line Prompty's parser takes for the start of a message (a role name and a colon, alone on its line).
_PROMPTY_ROLE_LINE = re.compile(r"(?im)^\s*#?\s*(system|user|assistant|developer)\s*:\s*$")


def _prompty(shape: Shape) -> Written:
    warnings: list[str] = []
    inputs: dict[str, Any] = {}
    for arg in shape.holes:
        spec: dict[str, Any] = {"kind": {"path": "string"}.get(arg.type, arg.type)}
        if arg.description:
            spec["description"] = arg.description
        if arg.default is not MISSING:
            spec["default"] = arg.default
        if arg.required:
            spec["required"] = True
        if arg.enum is not None:
            spec["enumValues"] = list(arg.enum)
        inputs[arg.name] = spec

    def literal(text: str) -> str:
        # Text is text: anything that looks like jinja2 is kept from being read as such.
        return "{% raw %}" + text + "{% endraw %}" if _JINJA_SYNTAX.search(text) else text

    blocks = []
    for role, parts in shape.messages:
        text = "".join(literal(p) if isinstance(p, str) else "{{" + p.name + "}}" for p in parts)
        line = _PROMPTY_ROLE_LINE.search(text)
        if line is not None:
            warnings.append(f"the line {line.group(0).strip()!r} would start a new message in Prompty")
        blocks.append(f"{role}:\n{text}")
    front = _front({"name": shape.prompt.name, "description": _described(shape.prompt),
                    "model": _model(shape.prompt, ("model",)).get("model"), "inputs": inputs or None,
                    "template": {"format": "jinja2", "parser": "prompty"}})
    return Written(shape.prompt.name, f"{shape.prompt.name}.prompty", front + "\n\n".join(blocks) + "\n", warnings)


def _dotprompt(shape: Shape) -> Written:
    warnings: list[str] = []
    schema: dict[str, Any] = {}
    for arg in shape.holes:
        kind = {"path": "string"}.get(arg.type, arg.type)
        key = arg.name + ("" if arg.required else "?")
        if arg.enum is not None:
            schema[f"{key}(enum)"] = list(arg.enum)
        else:
            schema[key] = f"{kind}, {arg.description}" if arg.description else kind
    defaults = {a.name: a.default for a in shape.holes if a.default is not MISSING}

    def literal(text: str) -> str:
        return text.replace("{{", "\\{{")  # Handlebars reads \{{ as the text {{

    several = len(shape.messages) > 1 or any(role != "user" for role, _ in shape.messages)
    blocks = []
    for role, parts in shape.messages:
        text = "".join(literal(p) if isinstance(p, str) else "{{" + p.name + "}}" for p in parts)
        # dotprompt calls the assistant "model".
        spoken = "model" if role == "assistant" else role
        blocks.append((f'{{{{role "{spoken}"}}}}\n' if several else "") + text)
    front = _front({"model": _model(shape.prompt, ("model",)).get("model"),
                    "input": {"schema": schema, **({"default": defaults} if defaults else {})} if schema else None})
    return Written(shape.prompt.name, f"{shape.prompt.name}.prompt", front + "\n\n".join(blocks) + "\n", warnings)


#: promptdeck's model settings (``model: {name: ..., temperature: ...}``) that GitHub Models' modelParameters name
_GITHUB_PARAMETERS = {"temperature": "temperature", "top_p": "topP", "topP": "topP", "max_tokens": "maxTokens",
                      "maxTokens": "maxTokens"}


def _github_models(shape: Shape) -> Written:
    warnings: list[str] = []
    prompt = shape.prompt
    _clashes(shape, r"\{\{[A-Za-z_][A-Za-z0-9_]*\}\}", "GitHub Models", warnings)
    _typed_as_text(shape, warnings)
    _defaults_lost(shape, warnings)
    for arg in shape.holes:
        if not arg.required and arg.default is MISSING:
            warnings.append(f"argument {arg.name!r} must be given: GitHub Models leaves {{{{{arg.name}}}}} as "
                            f"written when its test data has no value for it")
    described = [a.name for a in shape.holes if a.description and a.description != f"fills {{{{{a.name}}}}}"]
    if described:
        warnings.append(f"the descriptions of {', '.join(map(repr, described))} are left out: the format has no "
                        f"place for them")
    own = _model(prompt, (), "github-models")  # every setting a prompt read from such a file had
    roles = own.pop("roles", None)
    if not own:
        settings = prompt.meta.get("promptdeck.dev/model")
        own = _model(prompt, ("model", "modelParameters"))
        parameters = {_GITHUB_PARAMETERS[k]: v for k, v in (settings or {}).items() if k in _GITHUB_PARAMETERS}
        if parameters and "modelParameters" not in own:
            own["modelParameters"] = parameters
        lost = sorted(k for k in settings or {} if k not in (*_GITHUB_PARAMETERS, "name", "model", "modelParameters"))
        if lost:
            warnings.append(f"model settings {', '.join(map(repr, lost))} are left out: the format has no place "
                            f"for them")
        if prompt.tests is not None:
            warnings.append(f"its {len(prompt.tests.cases)} test cases are left out: they check the rendered "
                            f"prompt, GitHub Models' evaluators the model's answer")
    fill = {a.name: "{{" + a.name + "}}" for a in shape.holes}
    spoken = [role for role, _ in shape.messages]
    if isinstance(roles, list) and len(roles) == len(spoken) and all(
            (r == "assistant") == (s == "assistant") for r, s in zip(roles, spoken, strict=True)):
        spoken = roles  # the system messages the file had, which MCP sent as the user's
    messages = [{"role": role, "content": shape.message_text(parts, fill)}
                for role, (_, parts) in zip(spoken, shape.messages, strict=True)]
    head = {"name": prompt.title or prompt.name, "description": prompt.description,
            "model": own.pop("model", None), "modelParameters": own.pop("modelParameters", None)}
    document = {**{k: v for k, v in head.items() if v not in (None, "", {})}, "messages": messages, **own}
    return Written(prompt.name, f"{prompt.name}.prompt.yml", _yaml_document(document), warnings)


def _yaml_document(fields: dict[str, Any]) -> str:
    """YAML as people write these files: text of several lines as a literal block (``|``), where YAML allows
    one (PyYAML quotes the text otherwise: trailing blanks, control characters)."""
    import yaml  # not at import time: the CLI imports this module for its list of targets

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)

    Dumper.add_representer(str, text)
    return yaml.dump(fields, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1000)


def _promptfoo(shape: Shape) -> Written:
    path, text, warnings = promptfoo.prompt_file(shape)
    return Written(shape.prompt.name, path, text, warnings)


def project_files(target: str, written: list[Written]) -> list[tuple[str, str]]:
    """The files a target writes for a whole library besides its prompts' (promptfoo's config with the tests),
    as (path, text); the warnings about each prompt's tests go to its ``Written``."""
    if target != "promptfoo":
        return []
    text, warned = promptfoo.config((w.shape, w.path) for w in written if w.shape is not None)
    for item in written:
        item.warnings += warned.get(item.prompt, [])
    return [(promptfoo.CONFIG, text)]


def _model(prompt: Prompt, keys: tuple[str, ...], own: str = "") -> dict[str, Any]:
    """The model settings a prompt carries in ``_meta`` (docs/native-formats.md), as the target's keys.

    A prompt read from the target's own format (``own``, its format id) gets back every setting it had;
    any other gets the ``keys`` the target knows, a promptdeck ``model: {name: ...}`` giving ``model``.
    """
    from ..sources.files.native import META_FORMAT, META_MODEL  # not at import: the CLI imports this for its targets

    settings = prompt.meta.get(META_MODEL)
    if not isinstance(settings, dict):
        return {}
    if own and prompt.meta.get(META_FORMAT) == own:
        return {k: v for k, v in settings.items() if k not in ("argument-hint", "arguments", "name")}
    picked = {key: settings[key] for key in keys if key in settings}
    if "model" in keys and "model" not in picked and isinstance(settings.get("name"), str):
        picked["model"] = settings["name"]
    return picked


_WRITERS: dict[str, Callable[[Shape], Written]] = {
    "claude-code": _claude_code,
    "copilot": _copilot,
    "cursor": _cursor,
    "codex": _codex,
    "gemini": _gemini,
    "prompty": _prompty,
    "dotprompt": _dotprompt,
    "promptfoo": _promptfoo,
    "github-models": _github_models,
}
