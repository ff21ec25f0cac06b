"""A fast reader for the front matter prompt files usually have, with PyYAML behind it.

PyYAML builds its result in Python and costs ~170 us for a typical front
matter, most of a file's load time. ``fast_load`` reads the shapes prompt files
use (block mappings and sequences, flow ``[...]``/``{...}``, plain and simple
quoted scalars) and returns None for anything else, so the caller falls back to
``yaml.safe_load``. Whatever it does return is what ``yaml.safe_load`` returns
for the same text; a property test holds it to that.

Plain scalars it resolves only when the answer is certain under YAML 1.1 as
PyYAML implements it (decimal integers without leading zeros, simple decimals,
true/false/yes/no/on/off, null/~); anything that might be a date, an octal,
a sexagesimal number and so on goes to PyYAML.

It reads a front matter line by line, and keeps each line it has read (by its
text) with its parts and its value: the files of one library repeat most of
their lines (an argument's ``required: true``), so a large library's front
matter costs a dict look-up a line, ~5 us a file against ~30 read afresh.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...protocol.errors import LineError

_KEY_TEXT = r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"
_KEY = re.compile(_KEY_TEXT)
# One line of block YAML: its indent, a sequence item's "-" (with the spaces after it), a key and the rest (trailing
# spaces and all). A line that is neither an item nor a key has its whole content as the rest.
_LINE = re.compile(rf"( *)(- +|-$)?(?:({_KEY_TEXT}):(?: +|$))?(.*)")
# What no text this reader reads holds: what YAML does not allow (PyYAML refuses control characters, surrogates,
# U+FFFE), and what this reader does not read: tabs, CR, the other line breaks (U+0085, U+2028, U+2029) and a
# byte order mark.
_UNSURE_TEXT = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# A plain scalar that is certainly text (or one of the words in ``_WORDS``): it starts with none of ``_NOT_TEXT_START``
# (indicators; digits, signs and dots: numbers, dates, .inf; "<<", "=", "~"); holds no "#" and no ":" but one followed
# by text (checked in ``_inline``). In flow context (``_FLOW_TEXT``) no ",[]{}:" at all.
_NOT_TEXT_START = frozenset("-?:,[]{}#&*!|>'\"%@`0123456789+.<=~ ")
_FLOW_TEXT = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@`0-9+.<=~ ][^#:,\[\]{}]*")
# "[a, b, c]": a flow sequence with no nested collection and no quotes, read by splitting it at its commas.
_FLAT_SEQUENCE = re.compile(r"\[([^\[\]{}'\"]*)\]")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+$")
_BOOLS = {
    "true": True, "True": True, "TRUE": True, "yes": True, "Yes": True, "YES": True,
    "on": True, "On": True, "ON": True,
    "false": False, "False": False, "FALSE": False, "no": False, "No": False, "NO": False,
    "off": False, "Off": False, "OFF": False,
}
_NULLS = {"null", "Null", "NULL", "~"}
#: the plain words YAML 1.1 reads as something other than text
_WORDS: dict[str, bool | None] = {**_BOOLS, **dict.fromkeys(_NULLS)}
_RESERVED_KEYS = set(_BOOLS) | _NULLS
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_MAYBE_NUMBER = set("0123456789+-.")


#: Deepest nesting of mappings and sequences accepted; prompt metadata needs four or five.
MAX_DEPTH = 32


class _Unsure(Exception):
    """The text is outside what this reader is sure about: let PyYAML read it."""


class YamlRefused(ValueError):
    """YAML that is refused rather than loaded; ``line`` counts from 1 within the text given."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def safe_yaml(text: str, *, load: bool = True) -> Any:
    """``yaml.safe_load``, after refusing what could make loading explode.

    An alias (``*name``) repeats a whole subtree, so a few hundred bytes of nested
    aliases expand to gigabytes: aliases are refused. Nesting deeper than
    ``MAX_DEPTH`` is refused too, as PyYAML's constructor recurses per level.
    The check walks libyaml's event stream, which keeps no tree and does not
    recurse, before anything is built. Raises ``YamlRefused`` or ``yaml.YAMLError``. ``load=False``: the
    checks only (and None), for a caller that loads the text with a loader of its own.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(f"YAML aliases (*{event.anchor}) are not allowed here: each one copies a "
                              f"whole value", _line_of(event))
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(f"nested deeper than {MAX_DEPTH} levels", _line_of(event))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.load(text, Loader=loader) if load else None


_CLOSING = re.compile(r"---[ \t]*\r?$", re.MULTILINE)

#: Why a prompt file with no text below its front matter (or none at all) is refused: it would be served,
#: listed and saved as a version, a prompt that sends nothing.
EMPTY_PROMPT = "the prompt is empty: it has no text to send; write it below the front matter"


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """(front matter, body, line number of the body's first line) of a file's text; ``LineError``
    for a front matter that is opened and never closed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None, text, 1
    # The first line from the fifth character on that is the closing fence: tried where a line starts with "---"
    # (found at C speed), not at every character.
    end, start = _CLOSING.match(text, 4), 4
    while end is None:
        start = text.find("\n---", start) + 1
        if not start:
            raise LineError("front matter starts with '---' but has no closing '---' line", 1)
        end = _CLOSING.match(text, start)
    front = text[4:end.start()]
    rest = text[end.end():]
    if rest.startswith("\r\n"):
        rest = rest[2:]
    elif rest.startswith("\n"):
        rest = rest[1:]
    return front, rest, front.count("\n") + 3


def scopes_in(meta: dict[str, Any]) -> frozenset[str] | None:
    """The ``scopes`` a front matter gives (a list of names, or one space-separated string); None when
    the value is not that."""
    scopes = meta.get("scopes") or []
    if isinstance(scopes, str):
        scopes = scopes.split()
    if not isinstance(scopes, list) or not all(isinstance(s, str) and s and " " not in s for s in scopes):
        return None
    return frozenset(scopes)


def line_of_key(front: str, key: str) -> int | None:
    """Line (1-based, in the file) of the top-level front-matter ``key``, not of a value that mentions it."""
    for i, line in enumerate(front.splitlines()):
        if line.startswith(f"{key}:"):
            return i + 2
    return None


def key_line(front: str, key: str | None) -> int | None:
    """Line (1-based, in the file) of ``key``: a top-level key of the front matter, or ``outer.inner`` for a
    key of a mapping written in block style below ``outer:`` (else ``outer``'s line); None for None."""
    if key is None:
        return None
    outer, _, inner = key.partition(".")
    line = line_of_key(front, outer)
    if not inner or line is None:
        return line
    lines = front.splitlines()
    for i in range(line - 1, len(lines)):
        text = lines[i]
        if text.strip() and not text[:1].isspace():
            break  # the next top-level key: ``outer``'s mapping has ended
        if text.strip().startswith((f"{inner}:", f'"{inner}":', f"'{inner}':")):
            return i + 2
    return line


def read_front_matter(front: str) -> dict[str, Any]:
    """The mapping a front matter (the text between the ``---`` lines) holds; empty for blank text.
    ``LineError`` with the file's line for YAML that does not load or is not a mapping."""
    if not front.strip():
        return {}
    loaded = fast_load(front)
    if loaded is None:
        loaded = load_yaml(front, safe_yaml)
    if not isinstance(loaded, dict):
        raise LineError("front matter must be a mapping of keys (name, title, description, ...)", 2)
    return loaded


def load_yaml(front: str, load: Callable[[str], Any]) -> Any:
    """``load(front)``, its refusals and YAML errors as ``LineError`` at the file's line."""
    import yaml  # only for front matter the fast reader leaves to PyYAML

    try:
        return load(front)
    except YamlRefused as exc:
        raise LineError(f"front matter: {exc}", exc.line + 1) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context", None) or ""
        if getattr(exc, "context_mark", None) is not None and ("flow" in context or "quoted" in context):
            # An unclosed bracket or quote fails wherever the parser gives up, often at the end:
            # the line to fix is where it opened.
            mark = exc.context_mark  # type: ignore[attr-defined]
        problem = getattr(exc, "problem", None) or str(exc)
        what = "front matter" if getattr(exc, "no_json", False) else "front matter is not valid YAML"
        raise LineError(f"{what}: {problem}", mark.line + 2 if mark else 2) from None


def load_yaml_file(text: str, what: str) -> Any:
    """A whole file of YAML (``what`` names it in messages: "tests file"), loaded as ``load_yaml`` loads a
    front matter (aliases and deep nesting refused), its problems as ``LineError`` at the file's own line."""
    try:
        return load_yaml(text, safe_yaml)
    except LineError as exc:  # ``load_yaml`` counts from a front matter's first line, one below the fence
        raise LineError(str(exc).replace("front matter", what, 1),
                        None if exc.line is None else exc.line - 1) from None


def read_json_front_matter(front: str) -> dict[str, Any]:
    """The mapping a front matter holds, as JSON carries it and as the author wrote it (a skill's
    ``frontmatter``, served verbatim): ``LineError`` at its line for what JSON cannot carry
    unchanged, rather than a silent change of it.

    YAML 1.1 as PyYAML's safe loader reads it (``yes`` is true), with aliases and deep nesting refused as
    ``safe_yaml`` refuses them, and:

    - a date or timestamp stays the text written (``2025-01-31``), JSON having no dates;
    - a key given twice, a key that is not text, a merge key (``<<``), infinity or NaN, an integer outside
      64 bits, and binary, set and ordered-map values are refused.
    """
    if not front.strip():
        return {}
    loaded = load_yaml(front, _json_yaml)
    if not isinstance(loaded, dict):
        raise LineError("front matter must be a mapping of keys (name, description, ...)", 2)
    return loaded


def _json_yaml(text: str) -> Any:
    safe_yaml(text, load=False)  # aliases and depth, checked on the event stream before anything is built
    import yaml

    return yaml.load(text, Loader=_json_loader())


_JSON_LOADER: Any = None


def _json_loader() -> Any:
    """The PyYAML loader of ``read_json_front_matter``, made (and PyYAML imported) on first use."""
    global _JSON_LOADER
    if _JSON_LOADER is not None:
        return _JSON_LOADER
    import math

    import yaml
    from yaml.constructor import ConstructorError, SafeConstructor

    def refuse(node: Any, what: str) -> ConstructorError:
        refused = ConstructorError(None, None, what, node.start_mark)
        refused.no_json = True  # type: ignore[attr-defined]  # valid YAML that a JSON front matter cannot carry as written
        return refused

    class JsonLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
            if not isinstance(node, yaml.MappingNode):
                raise refuse(node, "expected a mapping")
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise refuse(key_node, "merge keys ('<<') are not allowed here: write the keys out")
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, str):
                    raise refuse(key_node, f"key {key!r} is not text (JSON keys are text: quote it)")
                if key in out:
                    raise refuse(key_node, f"key {key!r} is given twice")
                out[key] = self.construct_object(value_node, deep=deep)
            return out

    def as_written(loader: Any, node: Any) -> str:
        return str(loader.construct_scalar(node))

    def number(loader: Any, node: Any) -> float:
        value = SafeConstructor.construct_yaml_float(loader, node)
        if not math.isfinite(value):
            raise refuse(node, f"{node.value!r} is not a number JSON can carry: quote it")
        return value

    def integer(loader: Any, node: Any) -> int:
        value = SafeConstructor.construct_yaml_int(loader, node)
        if not -(2 ** 63) <= value < 2 ** 64:
            raise refuse(node, f"integer {node.value} is outside 64 bits: quote it")
        return value

    def no_json(loader: Any, node: Any) -> Any:
        raise refuse(node, f"a {node.tag.rsplit(':', 1)[-1]} value has no JSON form")

    JsonLoader.add_constructor("tag:yaml.org,2002:timestamp", as_written)
    JsonLoader.add_constructor("tag:yaml.org,2002:float", number)
    JsonLoader.add_constructor("tag:yaml.org,2002:int", integer)
    for tag in ("binary", "set", "omap", "pairs"):
        JsonLoader.add_constructor(f"tag:yaml.org,2002:{tag}", no_json)
    _JSON_LOADER = JsonLoader
    return JsonLoader


def _line_of(event: Any) -> int:
    mark = event.start_mark
    return mark.line + 1 if mark is not None else 1


def fast_load(text: str) -> dict[str, Any] | None:
    """The mapping ``yaml.safe_load(text)`` would give, or None when PyYAML must decide."""
    lines: _Lines = []
    tokens = _TOKENS
    for raw in text.split("\n"):
        token = tokens.get(raw)
        if token is None:
            token = _token(raw)
        if token is not _BLANK:
            if token is _REFUSED:  # the whole text is PyYAML's
                return None
            lines.append(token)
    if not lines or lines[0][0]:
        return None
    try:
        value, end = _mapping(lines, 0, 0, 1)
    except (_Unsure, IndexError, RecursionError):
        return None
    return value if end == len(lines) else None


#: A line, read: (indent, "- " of an item with the spaces after it, key, the rest, the rest's value). A value that is
#: a collection (mutable, so never shared) is ``_AGAIN`` and read from the rest each time, but for a flat flow
#: sequence ("[a, b]"), kept as a tuple and given out as a new list.
_Token = tuple[int, str, str, str, Any]
_Lines = list[_Token]
#: The lines read so far, by their text: the lines of a library's front matters repeat from file to file
#: ("  - name: topic", "    required: true"), and a line read once is read again from here (a dict look-up,
#: against a regular expression and a value's checks).
_TOKENS: dict[str, _Token] = {}
_MAX_TOKENS = 4096
_BLANK: _Token = (0, "", "", "", None)  # a blank line or a whole-line comment
_REFUSED: _Token = (-1, "", "", "", None)  # a line that leaves the whole text to PyYAML (``_token``)
_AGAIN = object()
_UNSURE = object()  # a rest this reader is not sure of: reading it raises ``_Unsure``
_NOT_TEXT = object()  # the rest of a line that is neither a key nor an item (which no reader takes)
_SCALARS = {str, int, float, bool, type(None)}


def _token(raw: str) -> _Token:
    """``raw`` read as a line (``_Token``), and kept in ``_TOKENS``."""
    # Left to PyYAML: what it refuses or this reader does not read (``_UNSURE_TEXT``). Printable as Python (checked
    # at C speed) is printable as YAML with none of those; only other text needs the expression. Checked here, a
    # line at a time, so a line seen before is not checked again.
    if "&" in raw or "*" in raw or "\\" in raw or " #" in raw or (not raw.isprintable() and _UNSURE_TEXT.search(raw)):
        return _keep(raw, _REFUSED)
    match = _LINE.match(raw)
    assert match is not None  # every part of it may be empty
    indent, dash, key, rest = match.group(1, 2, 3, 4)
    dash, key, rest = dash or "", key or "", rest.rstrip(" ")
    value: Any = None
    if not (dash or key):
        value = _NOT_TEXT
    elif rest:
        try:
            value = _inline(rest)
        except (_Unsure, IndexError, RecursionError):
            value = _UNSURE
        if type(value) is list and all(type(v) in _SCALARS for v in value):
            value = tuple(value)
        elif type(value) not in _SCALARS and value is not _UNSURE:
            value = _AGAIN
    blank = value is _NOT_TEXT and (not rest or rest[0] == "#")
    return _keep(raw, _BLANK if blank else (len(indent), dash, key, rest, value))


def _keep(raw: str, token: _Token) -> _Token:
    if len(_TOKENS) >= _MAX_TOKENS:
        _TOKENS.clear()
    _TOKENS[raw] = token
    return token


def _value(value: Any, rest: str, depth: int) -> Any:
    """The value of a line's rest, from what ``_token`` kept of it, as a collection at ``depth``."""
    if type(value) in _SCALARS:
        return value
    if type(value) is tuple and depth <= MAX_DEPTH:
        return list(value)
    if value is _AGAIN:
        return _inline(rest, depth)
    raise _Unsure


def _mapping(lines: _Lines, i: int, indent: int, depth: int) -> tuple[dict[str, Any], int]:
    if depth > MAX_DEPTH:
        raise _Unsure  # PyYAML's check names the line
    out: dict[str, Any] = {}
    count = len(lines)
    while i < count:
        ind, dash, key, rest, value = lines[i]
        if ind != indent:
            if ind < indent:
                break
            raise _Unsure
        if dash or not key or key in _RESERVED_KEYS:
            raise _Unsure
        i += 1
        if rest:
            out[key] = value if type(value) in _SCALARS else _value(value, rest, depth + 1)
        elif i < count and lines[i][0] > indent:
            out[key], i = (_sequence if lines[i][1] else _mapping)(lines, i, lines[i][0], depth + 1)
        elif i < count and lines[i][0] == indent and lines[i][1]:
            out[key], i = _sequence(lines, i, indent, depth + 1)
        else:
            out[key] = None
    return out, i


def _sequence(lines: _Lines, i: int, indent: int, depth: int) -> tuple[list[Any], int]:
    if depth > MAX_DEPTH:
        raise _Unsure
    out: list[Any] = []
    count = len(lines)
    while i < count:
        ind, dash, key, rest, value = lines[i]
        if ind != indent or not dash:
            if ind > indent:
                raise _Unsure
            break
        if key:
            # "- key: value" opens a mapping whose keys line up with "key".
            column = indent + len(dash)
            lines[i] = (column, "", key, rest, value)
            mapping, i = _mapping(lines, i, column, depth + 1)
            out.append(mapping)
        elif rest:
            out.append(value if type(value) in _SCALARS else _value(value, rest, depth + 1))
            i += 1
        else:
            i += 1
            if i < count and lines[i][0] > indent:
                block: Any
                block, i = (_sequence if lines[i][1] else _mapping)(lines, i, lines[i][0], depth + 1)
                out.append(block)
            else:
                out.append(None)
    return out, i


def _inline(text: str, depth: int = 1) -> Any:
    """The value ``text`` (the rest of a line) gives; a collection, at ``depth`` (a block's count theirs)."""
    if text[0] not in _NOT_TEXT_START and "#" not in text and ": " not in text and text[-1] != ":":
        return _WORDS.get(text, text)  # the common case, at C speed: text for certain, but for a few words
    first = text[0]
    if first == "[" and depth <= MAX_DEPTH:
        flat = _FLAT_SEQUENCE.fullmatch(text)
        if flat:
            items = flat.group(1)
            return [_plain(item.strip(" "), flow=True) for item in items.split(",")] if items.strip(" ") else []
    if first in "[{":
        value, pos = _flow(text, 0, depth)
        if text[pos:].strip(" "):
            raise _Unsure
        return value
    if first in "\"'":
        value, pos = _quoted(text, 0)
        if pos != len(text):
            raise _Unsure
        return value
    return _plain(text, flow=False)


def _quoted(text: str, pos: int) -> tuple[str, int]:
    quote = text[pos]
    if quote == '"':
        end = text.find('"', pos + 1)
        if end < 0:
            raise _Unsure
        return text[pos + 1:end], end + 1
    out: list[str] = []
    pos += 1
    while True:
        end = text.find("'", pos)
        if end < 0:
            raise _Unsure
        out.append(text[pos:end])
        if text.startswith("''", end):
            out.append("'")
            pos = end + 2
            continue
        return "".join(out), end + 1


def _plain(token: str, *, flow: bool) -> Any:
    if flow and _FLOW_TEXT.fullmatch(token):
        return _WORDS.get(token, token)
    if not token or token[0] in _INDICATORS or token.endswith(":") or ": " in token or "#" in token:
        raise _Unsure
    if flow and any(c in token for c in ",[]{}:"):
        raise _Unsure
    if token in _BOOLS:
        return _BOOLS[token]
    if token in _NULLS:
        return None
    if token[0] in _MAYBE_NUMBER:
        if _INT.match(token):
            return int(token)
        if _FLOAT.match(token):
            return float(token)
        raise _Unsure  # dates, octals, 1_000, .inf, 1:30 ...: PyYAML knows best
    if token.lower() in (".inf", ".nan", "<<", "="):
        raise _Unsure
    return token


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] == " ":
        pos += 1
    return pos


def _flow(text: str, pos: int, depth: int = 1) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise _Unsure  # PyYAML's check names the line
    opener = text[pos]
    closer = "]" if opener == "[" else "}"
    pos = _skip(text, pos + 1)
    seq: list[Any] = []
    mapping: dict[str, Any] = {}
    if pos < len(text) and text[pos] == closer:
        return (seq if opener == "[" else mapping), pos + 1
    while True:
        if opener == "{":
            colon = text.find(":", pos)
            if colon < 0:
                raise _Unsure
            key = text[pos:colon].rstrip(" ")
            if not _KEY.fullmatch(key) or key in _RESERVED_KEYS:
                raise _Unsure
            if colon + 1 >= len(text) or text[colon + 1] != " ":
                raise _Unsure
            value, pos = _flow_value(text, _skip(text, colon + 1), depth)
            mapping[key] = value
        else:
            value, pos = _flow_value(text, pos, depth)
            seq.append(value)
        pos = _skip(text, pos)
        if pos >= len(text):
            raise _Unsure
        if text[pos] == closer:
            return (seq if opener == "[" else mapping), pos + 1
        if text[pos] != ",":
            raise _Unsure
        pos = _skip(text, pos + 1)
        if pos >= len(text) or text[pos] in ",]}":
            raise _Unsure  # trailing or doubled commas


def _flow_value(text: str, pos: int, depth: int) -> tuple[Any, int]:
    if pos >= len(text):
        raise _Unsure
    if text[pos] in "[{":
        return _flow(text, pos, depth + 1)
    if text[pos] in "\"'":
        return _quoted(text, pos)
    end = pos
    while end < len(text) and text[end] not in ",]}":
        end += 1
    return _plain(text[pos:end].strip(" "), flow=True), end
