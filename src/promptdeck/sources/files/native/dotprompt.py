"""Google dotprompt files (``*.prompt``): YAML front matter with a Picoschema input, then Handlebars.

Read and rendered by the format's own library, Google's ``dotpromptz`` (the ``dotprompt`` extra). It is
imported only when a library holds a ``.prompt`` file (it takes about half a second), and only here.

What it lacks, this module and ``_dotpromptz`` add as a thin layer:

- front matter goes through promptdeck's own bounded YAML reader first, so problems have their line and
  aliases and deep nesting are refused as everywhere else; the file is handed to dotpromptz only once
  both read the same front matter, and only a small one, as dotpromptz reads it with PyYAML's
  pure-Python loader (about 15 us a byte);
- its render is async only: it runs on an event loop of its own, on a thread of its own when the
  caller's thread runs a loop already (``_dotpromptz.anywhere``), so a render or a check works from
  any thread;
- it has no bounds: every render, the check at load included, runs under ``run_bounded``'s time limit
  and the output limit, counted as the engine goes (``_dotpromptz``). A cheap bound is also worked out
  before rendering, from the template's size and the longest value (values are scalars over MCP, so
  only ``{{#each}}`` over a text can repeat one).

How roles, media, inputs and settings map to MCP is in docs/native-formats.md.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

from ....prompts.arguments import MISSING, Argument, SpecError, make_argument
from ....prompts.composition import MAX_INCLUDES, Uses
from ....prompts.execution import TEMPLATE
from ....prompts.limits import MAX_OUTPUT_CHARS
from ....prompts.render import run_bounded
from ....prompts.sandbox import RenderLimitError
from ....prompts.spec import Prompt, RenderContext
from ....protocol.content import Audio, Image, Message, ResourceLink, Role, Text
from ....protocol.errors import InternalError, InvalidParams, LineError
from ..partials import read_partial
from ._common import META_FORMAT, META_MODEL, Markdown, check_name, json_safe, pop_scopes
from ._dotpromptz import anywhere, bounded, check_tags, complete, engine, library

if TYPE_CHECKING:
    from ..library import TemplateFolder

_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
#: ``{{name}}`` of a template without an input schema: each is an optional argument (helpers excluded).
_SIMPLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_HELPERS = {"role", "media", "history", "section", "json", "else", "this"}
_ROLES: dict[str, Role] = {"user": "user", "model": "assistant", "system": "user", "tool": "user"}
#: Largest front matter handed to dotpromptz, whose pure-Python YAML loader takes about 0.25 s for this.
MAX_FRONT_CHARS = 16 * 1024
#: dotpromptz's opening of a front matter: license lines (``#``) and blank lines may come before ``---``.
_OPENING = re.compile(r"(?:(?:#[^\r\n]*|[ \t]*)\r?\n)*(---[ \t]*\r?\n)")
_LONE_CR = re.compile(r"\r(?!\n)")


def _as_promptdeck_reads(text: str) -> str:
    """``text`` with dotpromptz's front matter where promptdeck's reader finds it, on the same lines.

    dotpromptz breaks lines at a lone CR as well, and lets license and blank lines come before the opening
    ``---`` (which may end in blanks); promptdeck's reader wants ``---`` first. The lines before it move
    into the front matter, where YAML reads them as comments and blank lines, so every line keeps its
    number, and both readers then read one front matter."""
    text = _LONE_CR.sub("\n", text)
    opening = _OPENING.match(text)
    if opening is None or opening.group() in ("---\n", "---\r\n"):
        return text
    return "---\n" + text[:opening.start(1)] + text[opening.end():]


def read(files: TemplateFolder, rel: str, text: str) -> Prompt:
    """``docs/brief.prompt`` is ``docs.brief``; ``description:`` its description. ``files``: the library its
    partials come from."""
    return anywhere(lambda: _read(files, rel, text))


#: A partial in Handlebars (``{{> name}}``, ``{{~> name}}``, ``{{#> name}}``), as dotpromptz finds them.
_PARTIAL = re.compile(r"\{\{\s*~?\s*#?\s*>\s*([a-zA-Z0-9_.\-/]+)")


def partial_path(name: str) -> str:
    """The library file of the partial ``name``, as Genkit keeps partials: ``tone`` is ``_tone.prompt`` and
    ``shared/tone`` is ``shared/_tone.prompt`` (a ``_`` file is material, never a prompt of its own)."""
    folder, _, base = name.rpartition("/")
    return f"{folder}/_{base}.prompt" if folder else f"_{base}.prompt"


#: A partial defined in the template itself (``{{#*inline "name"}}``): not a library file.
_INLINE = re.compile(r"\{\{~?#\*inline\s+[\"']([^\"']+)[\"']")


def _partials(files: TemplateFolder, doc: Markdown, read: set[str]) -> dict[str, str]:
    """The library partials the body names, and those they name, by name: each read through the library's
    confined partial loader, a problem at the line of the body's reference that led to it. Handed to
    dotpromptz, which checks them for cycles; a name defined inline is the template's own."""
    found: dict[str, str] = {}
    queue = [(match.group(1), doc.body_line_of(match.start()), doc.body) for match in _PARTIAL.finditer(doc.body)]
    while queue:
        name, line, where = queue.pop(0)
        if name in found or name in _INLINE.findall(where) or name in _INLINE.findall(doc.body):
            continue
        if len(found) >= MAX_INCLUDES:
            raise LineError(f"partials name more than {MAX_INCLUDES} partials", line)
        path = partial_path(name)
        try:
            text = read_partial(files, path)
        except InvalidParams as exc:
            raise LineError(f"partial {name!r} ({path}): {exc.detail or exc.message}", line) from None
        found[name] = text
        read.add(path)
        queue += [(match.group(1), line, text) for match in _PARTIAL.finditer(text)]
    return found


def _read(files: TemplateFolder, rel: str, text: str) -> Prompt:
    text = _as_promptdeck_reads(text)
    doc = Markdown(text)
    meta = doc.meta
    name = check_name(rel[:-len(".prompt")].replace("/", "."), None, f"from the path {rel}")
    description = doc.text("description")
    if len(doc.front) > MAX_FRONT_CHARS:
        raise LineError(f"front matter is longer than {MAX_FRONT_CHARS // 1024} KiB, the most handed to dotpromptz",
                          1)
    blank = check_tags(doc.body)
    if blank is not None:
        raise LineError("a tag opens with more than 16 blanks after {{", doc.body_line_of(blank))
    dotpromptz = library()
    try:
        parsed = dotpromptz.parse_document(text)
    except Exception as exc:  # noqa: BLE001 - its own refusal of the file, in its words
        # Its front matter errors count lines from the file's first line, the opening ---.
        at = re.search(r"at line (\d+)", str(exc))
        raise LineError(f"dotprompt refuses the file: {exc}", int(at.group(1)) if at else 1) from None
    arguments = _arguments(dotpromptz, meta.get("input"), doc)
    settings = {k: json_safe(v) for k, v in meta.items() if k not in ("description", "input")}
    scopes = pop_scopes(settings, doc.line)
    body = doc.body
    repeats = "#each" in body
    read: set[str] = set()
    partials = _partials(files, doc, read)
    try:
        renderer = complete(engine(dotpromptz, partials).compile(parsed))
    except Exception as exc:  # noqa: BLE001 - its parser's refusal, in its words
        raise LineError(f"template error: {exc}", doc.body_line) from None

    def run(values: dict[str, Any]) -> list[Message]:
        rendered = bounded(lambda: complete(renderer(dotpromptz.DataArgument(input=values))))
        return _messages(rendered.messages)

    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        longest = max((len(str(v)) for v in values.values()), default=0)
        bound = len(body) + body.count("{{") * longest + (len(body) * longest if repeats else 0)
        if bound > MAX_OUTPUT_CHARS:
            raise RenderLimitError(f"this template with these values could exceed {MAX_OUTPUT_CHARS} characters")
        return anywhere(lambda: run_bounded(lambda: run(values), ctx.prompt))

    # Load-time check of the template, as `check` does for every format, under the bounds of every render:
    # a Handlebars error, or a render too long or too slow with no values, is the file's.
    try:
        run_bounded(lambda: run({}), name)
    except InternalError as exc:
        raise LineError(f"template error: {exc.__cause__ or exc}", doc.body_line) from None
    extra: dict[str, Any] = {META_FORMAT: "dotprompt"}
    if settings:
        extra[META_MODEL] = settings
    return Prompt(name, render, description=description, arguments=arguments, source=rel, work=TEMPLATE,
                  scopes=scopes, meta=extra, composes=Uses(files=frozenset(read)) if read else None)


def _arguments(dotpromptz: Any, config: object, doc: Markdown) -> tuple[Argument, ...]:
    line = doc.line("input")
    if config is None:
        names = dict.fromkeys(n for n in _SIMPLE.findall(doc.body) if n not in _HELPERS)
        return tuple(make_argument(n, description="used by the template") for n in names)
    if not isinstance(config, dict):
        raise LineError("input must be a mapping (schema, default)", line)
    defaults = config.get("default") or {}
    if not isinstance(defaults, dict):
        raise LineError("input.default must be a mapping", line)
    try:
        schema = complete(dotpromptz.picoschema_to_json_schema(config.get("schema")))
    except Exception as exc:  # noqa: BLE001 - a Picoschema the library refuses
        raise LineError(f"input.schema: {exc}", line) from None
    if schema is None:
        return ()
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise LineError("input.schema must describe an object (its fields are the arguments)", line)
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
            raise LineError(f"input {name!r}: {exc}", line) from None
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
