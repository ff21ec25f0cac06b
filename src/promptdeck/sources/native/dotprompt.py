"""Google dotprompt files (``*.prompt``): YAML front matter with a Picoschema input, then Handlebars.

Read and rendered by the format's own library, Google's ``dotpromptz`` (the ``dotprompt`` extra). It is
imported only when a library holds a ``.prompt`` file (it takes about half a second), and only here.

What it lacks, this module adds as a thin layer:

- front matter goes through promptdeck's own bounded YAML reader first, so problems have their line and
  aliases and deep nesting are refused as everywhere else;
- its render is async only: it runs with ``asyncio.run`` on the render pool's thread (``CODE`` work,
  so the server's time limit answers the client);
- it has no output bound: one is worked out before rendering, from the template's size and the longest
  value (values are scalars over MCP, so only ``{{#each}}`` over a text can repeat one), and checked again
  on the result.

How roles, media, inputs and settings map to MCP is in docs/native-formats.md.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re
from typing import Any

from ...prompts.arguments import MISSING, Argument, SpecError, make_argument
from ...prompts.content import Audio, Image, Message, ResourceLink, Role, Text
from ...prompts.execution import CODE
from ...prompts.render import run_bounded
from ...prompts.sandbox import MAX_OUTPUT_CHARS, RenderLimitError
from ...prompts.spec import Prompt, RenderContext
from ._common import META_FORMAT, META_MODEL, Markdown, NativeError, check_name, json_safe, pop_scopes

_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
#: ``{{name}}`` of a template without an input schema: each is an optional argument (helpers excluded).
_SIMPLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_HELPERS = {"role", "media", "history", "section", "json", "else", "this"}
_ROLES: dict[str, Role] = {"user": "user", "model": "assistant", "system": "user", "tool": "user"}


def _library() -> Any:
    try:
        import dotpromptz
    except ImportError:
        raise NativeError("reading dotprompt files needs the dotprompt extra: pip install 'promptdeck[dotprompt]'",
                          1) from None
    return dotpromptz


def read(rel: str, text: str) -> Prompt:
    """``docs/brief.prompt`` is ``docs.brief``; ``description:`` its description."""
    doc = Markdown(text)
    meta = doc.meta
    name = check_name(rel[:-len(".prompt")].replace("/", "."), None, f"from the path {rel}")
    description = doc.text("description")
    dotpromptz = _library()
    try:
        dotpromptz.parse_document(text)
    except Exception as exc:  # noqa: BLE001 - its own refusal of the file, in its words
        # Its front matter errors count lines from the file's first line, the opening ---.
        at = re.search(r"at line (\d+)", str(exc))
        raise NativeError(f"dotprompt refuses the file: {exc}", int(at.group(1)) if at else 1) from None
    arguments = _arguments(dotpromptz, meta.get("input"), doc)
    settings = {k: json_safe(v) for k, v in meta.items() if k not in ("description", "input")}
    scopes = pop_scopes(settings, doc.line)
    body = doc.body
    repeats = "#each" in body

    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        longest = max((len(str(v)) for v in values.values()), default=0)
        bound = len(body) + body.count("{{") * longest + (len(body) * longest if repeats else 0)
        if bound > MAX_OUTPUT_CHARS:
            raise RenderLimitError(f"this template with these values could exceed {MAX_OUTPUT_CHARS} characters")

        def run() -> list[Message]:
            rendered = asyncio.run(dotpromptz.Dotprompt().render(text, dotpromptz.DataArgument(input=values)))
            return _messages(rendered.messages)

        return run_bounded(run, ctx.prompt)  # type: ignore[no-any-return]

    # Load-time check of the template, as `check` does for every format: a Handlebars error is the file's.
    try:
        asyncio.run(dotpromptz.Dotprompt().render(text, dotpromptz.DataArgument(input={})))
    except Exception as exc:  # noqa: BLE001 - its parser's refusal, in its words
        raise NativeError(f"template error: {exc}", doc.body_line) from None
    extra: dict[str, Any] = {META_FORMAT: "dotprompt"}
    if settings:
        extra[META_MODEL] = settings
    return Prompt(name, render, description=description, arguments=arguments, source=rel, work=CODE,
                  scopes=scopes, meta=extra)


def _arguments(dotpromptz: Any, config: object, doc: Markdown) -> tuple[Argument, ...]:
    line = doc.line("input")
    if config is None:
        names = dict.fromkeys(n for n in _SIMPLE.findall(doc.body) if n not in _HELPERS)
        return tuple(make_argument(n, description="used by the template") for n in names)
    if not isinstance(config, dict):
        raise NativeError("input must be a mapping (schema, default)", line)
    defaults = config.get("default") or {}
    if not isinstance(defaults, dict):
        raise NativeError("input.default must be a mapping", line)
    try:
        schema = asyncio.run(dotpromptz.picoschema_to_json_schema(config.get("schema")))
    except Exception as exc:  # noqa: BLE001 - a Picoschema the library refuses
        raise NativeError(f"input.schema: {exc}", line) from None
    if schema is None:
        return ()
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise NativeError("input.schema must describe an object (its fields are the arguments)", line)
    required = set(schema.get("required") or [])
    out = []
    for name, field in (schema.get("properties") or {}).items():
        kind = field.get("type", "string")
        if isinstance(kind, list):  # an optional field is its type or null
            kind = next((k for k in kind if k != "null"), "string")
        enum = [v for v in field.get("enum") or [] if v is not None] or None
        default = defaults.get(name, MISSING)
        try:
            out.append(make_argument(
                name, description=field.get("description"), required=name in required and default is MISSING,
                type=_TYPES.get(kind, "string"),  # type: ignore[arg-type]
                enum=enum, default=default))
        except SpecError as exc:
            raise NativeError(f"input {name!r}: {exc}", line) from None
    return tuple(out)


def _messages(rendered: Any) -> list[Message]:
    """dotpromptz messages as MCP messages: one content block each, roles as MCP has them."""
    out: list[Message] = []
    size = 0
    for message in rendered:
        role = _ROLES.get(getattr(message.role, "value", str(message.role)), "user")
        text: list[str] = []
        for part in message.content:
            if getattr(part, "text", None) is not None:
                text.append(part.text)
                size += len(part.text)
            elif getattr(part, "media", None) is not None:
                _add_text(out, role, text)
                text = []
                out.append(Message(role, _media(part.media.url, part.media.content_type)))
        _add_text(out, role, text)
        if size > MAX_OUTPUT_CHARS:
            raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
    return out


def _add_text(out: list[Message], role: Role, text: list[str]) -> None:
    joined = "".join(text).strip("\n")
    if joined.strip():
        out.append(Message(role, Text(joined)))


def _media(url: str, content_type: str | None) -> Image | Audio | ResourceLink | Text:
    """``{{media url=...}}``: a data: URL is the image or audio itself; an http(s) URL a link; else text."""
    if url.startswith("data:"):
        head, _, data = url[5:].partition(",")
        mime = content_type or head.split(";")[0]
        if head.endswith(";base64") and mime.startswith(("image/", "audio/")):
            try:
                raw = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                return Text(f"[media that is not valid base64: {mime}]")
            return Image(raw, mime) if mime.startswith("image/") else Audio(raw, mime)
        return Text(f"[media of type {mime or 'unknown'}]")
    if url.startswith(("https://", "http://")):
        return ResourceLink(url, url.rsplit("/", 1)[-1] or url, mime_type=content_type)
    return Text(f"[media at {url}]")
