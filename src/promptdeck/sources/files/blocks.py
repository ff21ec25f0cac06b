"""Message blocks of a prompt file: the role line's mapping and the text below it, as templates."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Any

from ...prompts.access import reading_as
from ...prompts.arguments import Argument
from ...prompts.composition import MAX_INCLUDES, NO_USES, Call, Uses
from ...prompts.execution import LIGHT, TEMPLATE
from ...prompts.render import TemplateSyntax, TemplateText, run_bounded
from ...prompts.spec import PlainMessages, RenderContext, RenderFn
from ...protocol.content import (
    ROLES,
    Annotations,
    Audio,
    Content,
    Image,
    Message,
    ResourceLink,
    Text,
    resource,
)
from ...protocol.errors import InvalidParams, LineError
from .frontmatter import YamlRefused, safe_yaml
from .library import TemplateFolder
from .paths import Origin, file_contents, guess_mime, typed_values

log = logging.getLogger("promptdeck.render")

_KINDS = ("image", "audio", "resource", "resource_link")
_SPEC_KEYS = (*_KINDS, "annotations", "mimeType", "prompt", "arguments")
_LINK_KEYS = ("uri", "name", "title", "description", "mimeType", "size")
_RESOURCE_KEYS = ("uri", "mimeType", "text")
_ICON_KEYS = ("src", "mimeType", "sizes", "theme")


Tmpl = TemplateText | dict[str, "Tmpl"] | str | int | float | None


class Block:
    """One message: role, kind, templated fields and the templated text below the role line."""

    __slots__ = ("role", "kind", "fields", "body", "annotations", "line", "file", "uses")

    def __init__(self, role: str, kind: str, fields: Tmpl, body: TemplateText | None,
                 annotations: Annotations | None, line: int, file: str | None = None,
                 uses: Uses = NO_USES) -> None:
        self.role = role
        self.kind = kind
        self.fields = fields
        self.body = body
        self.annotations = annotations
        self.line = line
        #: the library file it sends, when the role line names one as it is (no template): part of its
        #: prompt's ``Reach``
        self.file = file
        #: what its templates compose (``composition.Uses``), known once they are compiled
        self.uses = uses


def validate_icons(raw: object) -> tuple[dict[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise LineError("icons must be a list of {src, mimeType, sizes, theme}")
    icons = []
    for icon in raw:
        if not isinstance(icon, dict) or not isinstance(icon.get("src"), str):
            raise LineError(f"each icon needs a src, got {icon!r}")
        unknown = set(icon) - set(_ICON_KEYS)
        if unknown:
            raise LineError(f"icon has unknown key {sorted(unknown)[0]!r} (known: {', '.join(_ICON_KEYS)})")
        if not icon["src"].startswith(("https://", "data:")):
            raise LineError(f"icon src {icon['src']!r} must be an https: or data: URI")
        sizes = icon.get("sizes")
        if sizes is not None and (not isinstance(sizes, list) or not all(isinstance(s, str) for s in sizes)):
            raise LineError('icon sizes must be a list like ["48x48", "any"]')
        if icon.get("theme") not in (None, "light", "dark"):
            raise LineError("icon theme must be light or dark")
        icons.append(dict(icon))
    return tuple(icons)


def _annotations(raw: object, line: int) -> Annotations | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise LineError("annotations must be a mapping {audience, priority, lastModified}", line)
    unknown = set(raw) - {"audience", "priority", "lastModified"}
    if unknown:
        raise LineError(f"annotations have unknown key {sorted(unknown)[0]!r}", line)
    audience = raw.get("audience")
    if audience is not None:
        if isinstance(audience, str):
            audience = [audience]
        if not isinstance(audience, list) or not all(a in ROLES for a in audience):
            raise LineError("annotations audience must be a list of user and/or assistant", line)
        audience = tuple(audience)
    priority = raw.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int | float)
                                 or not 0 <= priority <= 1):
        raise LineError(f"annotations priority must be a number from 0 to 1, got {priority!r}", line)
    modified = raw.get("lastModified")
    if modified is not None:
        modified = modified.isoformat() if hasattr(modified, "isoformat") else modified
        if not isinstance(modified, str):
            raise LineError("annotations lastModified must be an ISO 8601 date-time", line)
    return Annotations(audience, None if priority is None else float(priority), modified)


def _template(library: TemplateFolder, value: object, line: int, compile_now: bool, known: frozenset[str],
              found: list[Uses]) -> Tmpl:
    if isinstance(value, str):
        tmpl = TemplateText(value, library, line)
        found.append(_compile(library, tmpl, compile_now, known))
        return tmpl
    if isinstance(value, dict):
        return {str(k): _template(library, v, line, compile_now, known, found) for k, v in value.items()}
    if value is None or isinstance(value, int | float):
        return value
    raise LineError(f"unexpected value {value!r} in the role line", line)


def _compile(library: TemplateFolder, tmpl: TemplateText, compile_now: bool, known: frozenset[str]) -> Uses:
    if not compile_now:
        return NO_USES
    try:
        used = tmpl.compile()
    except TemplateSyntax as exc:
        raise LineError(f"template error: {exc.message}", tmpl.line + exc.lineno - 1) from None
    for function, path, line in tmpl.literal_calls:
        if function == "read":  # the author named the file: it must be there (a render would fail)
            try:
                library.root.gate(path, Origin.LITERAL)
            except InvalidParams as exc:
                raise LineError(f"read({path!r}): {_refusal(exc)}", tmpl.line + line - 1) from None
    composed = template_composes(library, tmpl)
    unknown = sorted(used - known)
    if unknown:
        declared = ", ".join(sorted(known)) or "none"
        raise LineError(f"template uses {', '.join(repr(n) for n in unknown)}, which is not an argument "
                         f"(arguments: {declared})", tmpl.line)
    return composed


def template_composes(library: TemplateFolder, tmpl: TemplateText) -> Uses:
    """What the compiled ``tmpl`` composes (``composition.Uses``), its literal partials checked (``partials.analyze``);
    a problem is a ``LineError`` at the line of the include. Lines are the prompt file's."""
    found = tmpl.uses
    if found is None or not (found.partials or found.reads or found.calls or found.dynamic):
        return NO_USES
    files = {path for path, _ in found.reads}
    calls = [call.at(tmpl.line + call.line - 1) for call in found.calls]
    dynamic = found.dynamic
    if found.partials:
        from .partials import PartialProblem, analyze

        memo: dict[str, Any] = {}
        loads = 0
        for target, line in found.partials:
            at = tmpl.line + line - 1
            try:
                part = analyze(library, target, (), memo)
            except PartialProblem as exc:
                raise LineError(f"include {target!r}: {exc}", at) from None
            loads += 1 + part.loads
            if loads > MAX_INCLUDES:
                raise LineError(f"includes load more than {MAX_INCLUDES} partials in one render (an include bomb)",
                                 at)
            files |= part.files
            calls += [call.at(at) for call in part.calls]
            dynamic = dynamic or part.dynamic
    return Uses(frozenset(files), frozenset(call.name for call in calls), dynamic, tuple(calls))


def _refusal(exc: InvalidParams) -> str:
    """What a check says of a file it may not use: the access rule's reason where the author may hear it
    (``detail``), else the error's own words (for a file hidden from whom the check answers, the same as
    for a file that is not there)."""
    return exc.detail or exc.message


def _is_static(value: object) -> bool:
    return isinstance(value, str) and "{" not in value


def build_block(library: TemplateFolder, role: str, spec_text: str | None, body: str, spec_line: int,
                text_line: int, arguments: tuple[Argument, ...], *, compile_now: bool,
                known: frozenset[str] | None = None) -> Block:
    """One message of a prompt file. ``known``: the names of ``arguments``, when the caller has them."""
    if known is None:
        known = frozenset(a.name for a in arguments)
    if spec_text is None:
        # The common message: text under a bare role line, with no mapping to read or check (as the general
        # way below makes it of an empty mapping).
        text_line += len(body) - len(body.lstrip("\n"))
        text = TemplateText(body.strip("\n").rstrip(), library, text_line)
        return Block(role, "text", None, text, None, spec_line, None, _compile(library, text, compile_now, known)
                     or NO_USES)
    import yaml  # role-line mappings are rare: PyYAML loads only for files that have them

    try:
        spec = safe_yaml(spec_text)
    except YamlRefused as exc:
        raise LineError(f"the mapping after '{role}:': {exc}", spec_line) from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise LineError(f"the mapping after '{role}:' is not valid YAML: {problem}", spec_line) from None
    if not isinstance(spec, dict):
        raise LineError(f"after '{role}:' put a mapping like {{image: path.png}}", spec_line)
    unknown = [k for k in spec if k not in _SPEC_KEYS]
    if unknown:
        raise LineError(f"unknown key {unknown[0]!r} after '{role}:' (known: {', '.join(_SPEC_KEYS)})",
                         spec_line)
    kinds = [k for k in (*_KINDS, "prompt") if k in spec]
    if len(kinds) > 1:
        raise LineError(f"a message holds one block; got both {kinds[0]!r} and {kinds[1]!r}", spec_line)
    kind = kinds[0] if kinds else "text"
    if "arguments" in spec and kind != "prompt":
        raise LineError("arguments go with a prompt: {prompt: NAME, arguments: {...}}", spec_line)
    if kind == "prompt":
        _check_prompt_line(role, spec, body, spec_line)
    annotations = _annotations(spec.get("annotations"), spec_line)
    if "mimeType" in spec and kind not in ("image", "audio"):
        raise LineError("mimeType goes inside the resource or resource_link mapping", spec_line)
    value = spec.get(kind)
    # Blank lines under the role line are not part of the text: lines are counted from the first one that is.
    text_line += len(body) - len(body.lstrip("\n"))
    takes_body = kind == "text" or (kind == "resource" and isinstance(value, dict) and "text" not in value)
    if not takes_body and body.strip():
        raise LineError(f"a {kind} message takes no text below its role line; start a new message "
                         f"with 'user:' or 'assistant:'", text_line)
    if kind in ("image", "audio", "resource", "resource_link") and isinstance(value, str):
        if _is_static(value):
            try:
                library.root.gate(value, Origin.LITERAL)
            except InvalidParams as exc:
                raise LineError(_refusal(exc), spec_line) from None
            if kind in ("image", "audio") and "mimeType" not in spec and not guess_mime(value).startswith(kind):
                raise LineError(f"{value!r} does not look like {kind} ({guess_mime(value)}); "
                                 f"set mimeType", spec_line)
    elif kind == "resource":
        if not isinstance(value, dict) or "uri" not in value:
            raise LineError("resource needs a library file or a mapping with a uri", spec_line)
        bad = set(value) - set(_RESOURCE_KEYS)
        if bad:
            raise LineError(f"resource has unknown key {sorted(bad)[0]!r} (known: "
                             f"{', '.join(_RESOURCE_KEYS)})", spec_line)
    elif kind == "resource_link":
        if not isinstance(value, dict) or "uri" not in value or "name" not in value:
            raise LineError("resource_link needs a library file or a mapping with uri and name", spec_line)
        bad = set(value) - set(_LINK_KEYS)
        if bad:
            raise LineError(f"resource_link has unknown key {sorted(bad)[0]!r} (known: "
                             f"{', '.join(_LINK_KEYS)})", spec_line)
        if "size" in value and (not isinstance(value["size"], int) or value["size"] < 0):
            raise LineError("resource_link size must be a whole number of bytes", spec_line)
    elif kind in ("image", "audio"):
        raise LineError(f"{kind} must name a library file", spec_line)
    found: list[Uses] = []
    # A text message's mapping holds at most its annotations: no fields (None, not an empty dict per message).
    fields = None if kind == "text" else _template(library, {k: v for k, v in spec.items() if k != "annotations"},
                                                   spec_line, compile_now, known, found)
    body_tmpl = None
    if takes_body:
        body_tmpl = TemplateText(body.strip("\n").rstrip(), library, text_line)
        found.append(_compile(library, body_tmpl, compile_now, known))
    if kind == "prompt":
        found.append(_prompt_line_uses(spec, spec_line))
    file = value if kind in _KINDS and isinstance(value, str) and _is_static(value) else None
    return Block(role, kind, fields, body_tmpl, annotations, spec_line, file, Uses.union(found))


def _check_prompt_line(role: str, spec: dict[str, Any], body: str, line: int) -> None:
    """The role line ``user: {prompt: NAME, arguments: {...}}``: another prompt's messages, whole."""
    name = spec["prompt"]
    if not isinstance(name, str) or not name:
        raise LineError(f"after '{role}:' prompt names a prompt of the library, got {name!r}", line)
    given = spec.get("arguments", {})
    if not isinstance(given, dict) or not all(isinstance(k, str) for k in given):
        raise LineError("arguments of a prompt line must be a mapping of names to values", line)
    if "annotations" in spec:
        raise LineError("a prompt line brings its prompt's messages as they are; it takes no annotations", line)
    if body.strip():
        raise LineError("a prompt line takes no text below it; start a new message with 'user:' or "
                         "'assistant:'", line)


def _prompt_line_uses(spec: dict[str, Any], line: int) -> Uses:
    name = spec["prompt"]
    if not _is_static(name):
        return Uses(dynamic=True)
    given = spec.get("arguments", {})
    return Uses(prompts=frozenset((name,)), calls=(Call(name, frozenset(given), line),))


#: What an undefined name says when read, in Jinja's StrictUndefined and in the fast path alike.
_UNDEFINED = re.compile(r"'([^']+)' is undefined\Z")


def _refuse_if_left_out(exc: Exception, prompt: str, optional: frozenset[str], values: Mapping[str, Any]) -> None:
    """A template read an optional argument that has no default and that the client left out: a -32602
    naming it, which a client can act on (give the value), rather than a bare -32603. The author's fix
    (a guard, or a default) is in docs/prompt-files.md."""
    found = _UNDEFINED.match(str(exc))
    if found and found.group(1) in optional and found.group(1) not in values:
        name = found.group(1)
        raise InvalidParams(f"prompt {prompt!r} needs argument {name!r} for this render: it is declared optional, "
                            "but its template uses it", {"prompt": prompt, "argument": name}) from None


def _render(value: Tmpl, values: Mapping[str, Any]) -> Any:
    if isinstance(value, TemplateText):
        return value.render(values)
    if isinstance(value, dict):
        return {k: _render(v, values) for k, v in value.items()}
    return value


def _file_content(library: TemplateFolder, kind: str, path: str, fields: dict[str, Any],
                  ann: Annotations | None, origin: Origin) -> Content:
    """The block a role line that names a file sends; ``origin``: whether the file was written in the role line
    (``LITERAL``) or worked out by its template (``EXPRESSION``), which decides what the read gate lets it reach."""
    root = library.root
    if kind in ("image", "audio"):
        mime = fields.get("mimeType") or guess_mime(path)
        if not mime.startswith(kind + "/"):
            # Only a templated path gets here (static ones are checked at load): the argument is at fault.
            raise InvalidParams(f"file {path!r} is not {'an image' if kind == 'image' else 'audio'} ({mime})")
        data = root.read_bytes(path, origin=origin)
        return Image(data, mime, ann) if kind == "image" else Audio(data, mime, ann)
    if kind == "resource":
        data = root.read_bytes(path, origin=origin)
        mime, text = file_contents(path, data)
        if text is not None:
            return resource(root.uri(path), mime, text=text, annotations=ann)
        return resource(root.uri(path), mime, blob=data, annotations=ann)
    real = root.gate(path, origin)
    return ResourceLink(root.uri(path), os.path.basename(path), mime_type=guess_mime(path),
                        size=real.stat().st_size, annotations=ann)


def _composed(library: TemplateFolder, block: Block, values: Mapping[str, Any]) -> list[Message]:
    """A role line ``{prompt: NAME, arguments: {...}}``: the prompt's messages, roles and content as they are."""
    from .compose import render_composed

    fields = _render(block.fields, values)
    assert isinstance(fields, dict)
    return render_composed(library, fields["prompt"], fields.get("arguments") or {})


def _content(library: TemplateFolder, block: Block, values: Mapping[str, Any]) -> Content | None:
    ann = block.annotations
    if block.kind == "prompt":
        return None
    if block.kind == "text":
        assert block.body is not None
        text = block.body.render(values)
        # A message whose text renders empty is left out, so `{% if %}` can drop whole messages.
        return Text(text, ann) if text.strip() else None
    fields = _render(block.fields, values)
    assert isinstance(fields, dict)
    value = fields[block.kind]
    if isinstance(value, str):
        return _file_content(library, block.kind, value, fields, ann,
                             Origin.LITERAL if block.file is not None else Origin.EXPRESSION)
    if block.kind == "resource":
        text = value.get("text")
        if text is None:
            assert block.body is not None
            text = block.body.render(values)
        return resource(str(value["uri"]), str(value.get("mimeType") or "text/plain"), text=text,
                        annotations=ann)
    size = value.get("size")
    return ResourceLink(str(value["uri"]), str(value["name"]), title=value.get("title"),
                        description=value.get("description"), mime_type=value.get("mimeType"),
                        size=int(size) if size is not None else None, annotations=ann)


def work_of(blocks: tuple[Block, ...], path_args: Mapping[str, re.Pattern[str] | None]) -> str:
    """``LIGHT`` when every block is text that only substitutes names; ``TEMPLATE`` otherwise."""
    if path_args:
        return TEMPLATE
    for block in blocks:
        if block.kind != "text" or block.body is None or not block.body.simple:
            return TEMPLATE
    return LIGHT


def plain_messages(blocks: tuple[Block, ...], work: str) -> PlainMessages | None:
    """The blocks as ``PlainMessages`` when each is text that only substitutes names (``work``: their
    ``work_of``), with no annotations; else None. ``render_blocks`` makes of these blocks exactly what
    rendering that plan makes."""
    if work != LIGHT:
        return None
    plain = []
    for block in blocks:
        if block.annotations is not None:
            return None
        if block.body is not None:
            plain.append((block.role, block.body))
    return tuple(plain)


def render_blocks(library: TemplateFolder, blocks: tuple[Block, ...], path_args: Mapping[str, re.Pattern[str] | None],
                  optional: frozenset[str] = frozenset(), scopes: frozenset[str] = frozenset()) -> RenderFn:
    """The render function of a file prompt. ``path_args``: each path argument and its pattern;
    ``optional``: the arguments a client may leave out that have no default; ``scopes``: the prompt's,
    which decide the prompt files it may read (``prompts.access.covers``)."""
    # A bound method, not the object with a ``__call__``: CPython calls a bound method of a Python function as
    # it calls the function, inline, where an object's ``__call__`` costs a trip through C (5% of a render).
    return BlockRender(library, blocks, path_args, optional, scopes).render


class BlockRender:
    """What a file prompt's render function (``render_blocks``) needs: one small object per prompt, where two
    nested closures and their cells took three times its room in each prompt of a large library."""

    __slots__ = ("library", "blocks", "path_args", "optional", "scopes")

    def __init__(self, library: TemplateFolder, blocks: tuple[Block, ...],
                 path_args: Mapping[str, re.Pattern[str] | None], optional: frozenset[str],
                 scopes: frozenset[str]) -> None:
        self.library = library
        self.blocks = blocks
        #: each path argument and its pattern; None when there is none (most prompts), so a render skips them
        self.path_args = path_args or None
        self.optional = optional
        self.scopes = scopes

    def render(self, values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        with reading_as(self.scopes):
            try:
                return self._render_all(values, ctx)
            except InvalidParams as exc:
                if exc.detail is not None:  # refused by the access rule: the client hears "no such file"
                    log.warning("prompt %r: %s", ctx.prompt, exc.detail)
                raise

    def _render_all(self, values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        typed: set[str] = set()
        path_args = self.path_args
        if path_args is not None:
            for name, pattern in path_args.items():
                if name in values:
                    try:
                        self.library.root.gate(values[name], Origin.TYPED, pattern)
                    except InvalidParams as exc:
                        raise InvalidParams(f"prompt {ctx.prompt!r}: argument {name!r}: {exc.message}",
                                            {"argument": name}) from None
                    typed.add(values[name])

        def run() -> list[Message]:  # its cells: self, values and ctx (each one more is a cell made per render)
            library, blocks, optional = self.library, self.blocks, self.optional
            out: list[Message] = []
            total = len(blocks)
            for i, block in enumerate(blocks):
                try:
                    content = _content(library, block, values)
                except Exception as exc:
                    _refuse_if_left_out(exc, ctx.prompt, optional, values)
                    if type(exc).__name__ == "TemplateNotFound":  # a partial an argument named: the client's
                        raise InvalidParams(f"prompt {ctx.prompt!r}: {exc.message}") from None  # type: ignore[attr-defined]
                    raise
                if block.kind == "prompt":
                    out += _composed(library, block, values)
                elif content is not None:
                    out.append(Message(block.role, content))  # type: ignore[arg-type]
                if total > 1:
                    ctx.progress(i + 1, total, None)
            return out

        with typed_values(frozenset(typed)):
            return run_bounded(run, ctx.prompt)  # type: ignore[no-any-return]


def _templates(value: Tmpl) -> list[TemplateText]:
    if isinstance(value, TemplateText):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _templates(v)]
    return []


def uncompiled_simple(block: Block) -> bool:
    """Whether every template of ``block`` only substitutes names: nothing for ``compiled_uses`` to find."""
    return all(tmpl.simple for tmpl in _templates(block.fields)) and (block.body is None or block.body.simple)


def compiled_uses(library: TemplateFolder, blocks: tuple[Block, ...]) -> Uses:
    """What ``blocks`` compose, compiling their templates now: for a prompt of a large library, whose
    templates compile on first use (``Prompt.uses`` asks for it then). A template that does not compile
    composes nothing known: a render reports it."""
    found: list[Uses] = []
    for block in blocks:
        for tmpl in _templates(block.fields) + ([block.body] if block.body is not None else []):
            try:
                tmpl.compile()
                found.append(template_composes(library, tmpl))
            except (TemplateSyntax, LineError):
                found.append(Uses(dynamic=True))
        if block.kind == "prompt" and isinstance(block.fields, dict):
            name = block.fields.get("prompt")
            spec = {"prompt": name.source if isinstance(name, TemplateText) else name,
                    "arguments": block.fields.get("arguments") or {}}
            found.append(_prompt_line_uses(spec, block.line))
    return Uses.union(found)
