"""Microsoft Prompty files (``*.prompty``): YAML front matter, then a Jinja2 template with role lines.

The template runs in the library's own sandboxed, bounded Jinja environment (the one promptdeck's files
use), so no other template engine comes in; Mustache templates are refused with a clear problem. How
inputs, roles and model settings map to MCP is in docs/native-formats.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ....prompts.arguments import Argument, SpecError, make_argument
from ....prompts.composition import Uses
from ....prompts.execution import TEMPLATE
from ....prompts.render import TemplateSyntax, TemplateText, run_bounded
from ....prompts.spec import Prompt, RenderContext
from ....protocol.content import Message, Text
from ....protocol.errors import LineError
from ..blocks import template_composes
from ._common import META_FORMAT, META_MODEL, Markdown, check_name, json_safe, pop_scopes

if TYPE_CHECKING:
    from ..library import TemplateFolder

#: A role line as Prompty's parser reads one: the role alone on its line, any case, with a colon.
_ROLE = re.compile(r"^\s*#?\s*(system|developer|user|assistant)\s*:\s*$", re.IGNORECASE)
_TYPES = {"string": "string", "str": "string", "number": "number", "float": "number", "integer": "integer",
          "int": "integer", "boolean": "boolean", "bool": "boolean"}
_INPUT_KEYS = {"name", "kind", "type", "description", "required", "default", "enumValues", "sample"}


def read(library: TemplateFolder, rel: str, text: str) -> Prompt:
    """``docs/summarize.prompty`` is ``docs.summarize``; its ``name:`` is the title."""
    doc = Markdown(text)
    meta = doc.meta
    name = check_name(rel[:-len(".prompty")].replace("/", "."), None, f"from the path {rel}")
    title = doc.text("name")
    description = doc.text("description")
    template = meta.get("template", "jinja2")
    kind = template.get("format", "jinja2") if isinstance(template, dict) else template
    if kind != "jinja2":
        raise LineError(f"template format {kind!r} is not read (only jinja2)", doc.line("template"))
    declared = _inputs(meta.get("inputs"), meta.get("sample"), doc.line("inputs"))
    segments = _segments(doc.body, doc.body_line)
    templates: list[tuple[str, TemplateText]] = []
    used: set[str] = set()
    composed: list[Uses] = []
    for role, body, line in segments:
        tmpl = TemplateText(body, library, line)
        try:
            used |= tmpl.compile()
            composed.append(template_composes(library, tmpl))  # its partials checked as promptdeck's files' are
        except TemplateSyntax as exc:
            raise LineError(f"template error: {exc.message}", line + exc.lineno - 1) from None
        templates.append((role, tmpl))
    # Prompty's Jinja leaves a name nobody declared empty: each becomes an optional argument here.
    arguments = tuple(declared) + tuple(make_argument(n, description="used by the template")
                                        for n in sorted(used - {a.name for a in declared}))
    names = [a.name for a in arguments]

    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        filled = {n: values.get(n, "") for n in names}  # left out: empty, as Prompty's Jinja has it

        def run() -> list[Message]:
            out = []
            for role, tmpl in templates:
                rendered = tmpl.render(filled).strip("\n")
                if rendered.strip():
                    out.append(Message("assistant" if role == "assistant" else "user", Text(rendered)))
            return out

        return run_bounded(run, ctx.prompt)  # type: ignore[no-any-return]

    settings = {k: json_safe(v) for k, v in meta.items() if k not in ("name", "description", "inputs")}
    scopes = pop_scopes(settings, doc.line)
    roles = [role for role, _ in templates]
    extra: dict[str, Any] = {META_FORMAT: "prompty"}
    if settings or any(r not in ("user", "assistant") for r in roles):
        extra[META_MODEL] = {**settings, "roles": roles} if roles != ["user"] else settings
    return Prompt(name, render, title=title, description=description, arguments=arguments, source=rel,
                  work=TEMPLATE, scopes=scopes, meta=extra, composes=Uses.union(composed))


def _inputs(raw: object, sample: object, line: int | None) -> list[Argument]:
    """``inputs``: a mapping of name to its spec (or to a sample value), or a list of specs with ``name``."""
    if raw is None:
        raw = {}
    items: list[tuple[object, object]]
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = [(i.get("name") if isinstance(i, dict) else None, i) for i in raw]
    else:
        raise LineError("inputs must be a mapping of names, or a list of inputs with a name", line)
    samples = sample if isinstance(sample, dict) else {}
    out: list[Argument] = []
    for input_name, spec in items:
        if not isinstance(input_name, str):
            raise LineError("each input needs a name", line)
        if not isinstance(spec, dict):  # ``name: value``: a sample value, so a string input
            spec = {"type": "string", "sample": spec}
        spec = dict(spec)
        description, enum = spec.get("description"), spec.get("enumValues")
        if description is not None and not isinstance(description, str):
            raise LineError(f"input {input_name!r}: description must be text", line)
        if enum is not None and not isinstance(enum, list):
            raise LineError(f"input {input_name!r}: enumValues must be a list", line)
        unknown = sorted(set(spec) - _INPUT_KEYS)
        if unknown:
            raise LineError(f"input {input_name!r}: unknown key {unknown[0]!r}", line)
        kind = spec.get("kind", spec.get("type", "string"))
        if kind not in _TYPES:
            kind = "string"  # arrays, objects, files: sent as text over MCP
        example = spec.get("sample", samples.get(input_name))
        try:
            out.append(make_argument(
                input_name, description=description, required=bool(spec.get("required", False)),
                type=_TYPES[kind],  # type: ignore[arg-type]
                enum=enum, default=spec.get("default", None),
                examples=[example] if isinstance(example, str | int | float) and not isinstance(example, bool)
                else []))
        except SpecError as exc:
            raise LineError(f"input {input_name!r}: {exc}", line) from None
    return out


def _segments(body: str, first_line: int) -> list[tuple[str, str, int]]:
    """(role, text, line of its first line) per message; text before any role line is the user's."""
    out: list[tuple[str, str, int]] = []
    role, start, lines = "user", first_line, list[str]()
    for offset, line in enumerate(body.split("\n")):
        match = _ROLE.match(line)
        if match:
            if "\n".join(lines).strip():
                out.append((role, "\n".join(lines), start))
            role, start, lines = match.group(1).lower(), first_line + offset + 1, []
        else:
            lines.append(line)
    if "\n".join(lines).strip():
        out.append((role, "\n".join(lines), start))
    return out

