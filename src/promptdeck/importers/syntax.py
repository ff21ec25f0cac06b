"""Other tools' template syntax in promptdeck's (Jinja, sandboxed, strict undefined), and what cannot be.

Each ``from_*`` gives a ``Translated``: the text as a promptdeck template, the variables it uses in
order, and what it could not translate, each named as written. What cannot be translated stays in the
text as literal characters (so nothing of the prompt is lost), and the importer names it.

- ``from_mustache``: ``{{var}}`` and ``{{ var }}`` (Langfuse, OpenAI's prompt objects, Humanloop,
  LangChain's ``mustache``, PromptLayer's default). Sections, partials, comments, dotted names and calls
  are named, not translated.
- ``from_fstring``: Python's ``str.format`` fields (LangChain's and PromptLayer's ``f-string``):
  ``{var}`` and ``{{``/``}}`` for braces; a field with a format spec, conversion, index or attribute is named.
- ``from_jinja``: Jinja2 (LangChain's and PromptLayer's ``jinja2``) is promptdeck's own language: kept as
  it is when it parses; else the whole text is literal and named.

Literal text is escaped for Jinja (``{{``, ``{%``, ``{#``), and a line that promptdeck would read as a
role line (``user:``, ``assistant:``) is written so that it is text.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: ``{{{var}}}`` (Mustache's unescaped form) before ``{{var}}``; the inside is judged below.
_MUSTACHE = re.compile(r"\{\{\{(.*?)\}\}\}|\{\{(.*?)\}\}", re.DOTALL)
#: Langfuse's prompt references and PromptLayer's snippets: another prompt's text put in at fetch time.
_REFERENCE = re.compile(r"@@@[^@\n]{1,200}@@@")
_ROLE_LINE = re.compile(r"^(user|assistant)(:[ \t]*(\{.*\})?[ \t]*)$", re.MULTILINE)


@dataclass
class Translated:
    text: str
    variables: list[str] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)

    def add(self, name: str) -> None:
        if name not in self.variables:
            self.variables.append(name)


def literal(text: str) -> str:
    """``text`` as a Jinja template that renders to itself: a ``{`` that would open a tag is printed."""
    out = []
    for i, char in enumerate(text):
        after = text[i + 1] if i + 1 < len(text) else ""
        # A "{" at the end may meet a hole's "{{" after it: printed too.
        out.append('{{ "{" }}' if char == "{" and after in ("{", "%", "#", "") else char)
    return "".join(out)


def hole(name: str) -> str:
    return "{{ " + name + " }}"


def no_role_lines(text: str) -> str:
    """A line that promptdeck reads as a role line (``user:``) is made text: its word printed by Jinja."""
    return _ROLE_LINE.sub(lambda m: '{{ "' + m.group(1) + '" }}' + m.group(2), text)


def _references(text: str, out: Translated) -> None:
    for found in _REFERENCE.findall(text):
        out.untranslated.append(f"{found} (a reference to another prompt's text)")


def from_mustache(text: str) -> Translated:
    out = Translated("")
    parts: list[str] = []
    kept = ""  # text kept as written since the last hole, escaped as one piece
    end = 0
    for match in _MUSTACHE.finditer(text):
        inner = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
        if inner.startswith("&"):  # Mustache's other unescaped form
            inner = inner[1:].strip()
        kept += text[end:match.start()]
        end = match.end()
        if _NAME.match(inner):
            out.add(inner)
            parts += [literal(kept), hole(inner)]
            kept = ""
        else:
            kept += match.group(0)
            out.untranslated.append(match.group(0) + _why_mustache(inner))
    parts.append(literal(kept + text[end:]))
    out.text = no_role_lines("".join(parts))
    _references(text, out)
    return out


def _why_mustache(inner: str) -> str:
    kinds = {"#": "a section", "^": "an inverted section", "/": "a section's end", "!": "a comment",
             ">": "a partial", "=": "a delimiter change"}
    if inner[:1] in kinds:
        return f" ({kinds[inner[:1]]})"
    if "(" in inner:
        return " (a call)"
    if "." in inner:
        return " (a dotted name)"
    return " (not a variable name)"


def from_fstring(text: str) -> Translated:
    out = Translated("")
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError as exc:  # unbalanced braces: LangChain refuses such a template too
        out.text = no_role_lines(literal(text))
        out.untranslated.append(f"the whole text ({exc})")
        return out
    parts: list[str] = []
    kept = ""  # text kept as written since the last hole ("{{" is "{" by now), escaped as one piece
    for text_part, name, spec, conversion in fields:
        kept += text_part
        if name is None:
            continue
        if _NAME.match(name) and not spec and conversion is None:
            out.add(name)
            parts += [literal(kept), hole(name)]
            kept = ""
            continue
        written = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        kept += written
        out.untranslated.append(written + (" (a format spec or conversion)" if spec or conversion else
                                           " (an index or attribute)" if name else " (a positional field)"))
    parts.append(literal(kept))
    out.text = no_role_lines("".join(parts))
    _references(text, out)
    return out


def from_jinja(text: str) -> Translated:
    from jinja2 import TemplateSyntaxError, meta
    from jinja2.sandbox import SandboxedEnvironment

    out = Translated(text)
    try:
        parsed = SandboxedEnvironment().parse(text)
    except TemplateSyntaxError as exc:
        out.text = no_role_lines(literal(text))
        out.untranslated.append(f"the whole text (a Jinja syntax error at line {exc.lineno}: {exc.message})")
        return out
    for name in sorted(meta.find_undeclared_variables(parsed)):
        if _NAME.match(name):
            out.add(name)
    out.text = no_role_lines(text)
    _references(text, out)
    return out


def from_literal(text: str) -> Translated:
    """Text that is no template (a LangChain message given as it is)."""
    return Translated(no_role_lines(literal(text)))


TRANSLATORS = {"mustache": from_mustache, "f-string": from_fstring, "jinja2": from_jinja, "literal": from_literal}


def translate(text: str, syntax: str) -> Translated:
    """``text`` in ``syntax`` (a key of ``TRANSLATORS``); another syntax keeps the text literal, named."""
    translator = TRANSLATORS.get(syntax)
    if translator is None:
        out = Translated(no_role_lines(literal(text)))
        out.untranslated.append(f"the whole text (template format {syntax!r} is not read)")
        return out
    return translator(text)
