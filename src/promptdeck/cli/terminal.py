"""The terminal gate: the one way the CLI writes to a terminal, and the one rule for text it did not write.

A server's prompt text, a store's save messages, names, completion values and error messages come from
someone else. Sent raw, an ESC starts a CSI or OSC sequence (recolour, retitle, rewrite what is on the
screen, a hyperlink that lies), a CR or a newline inside one field forges a line of its own (a history
line "by" someone else), and a BiDi override shows text in another order than it is. So:

- ``shown(text)`` is one field on one line: every control character, the line separators, lone
  surrogates and the BiDi controls become escapes (``\\n``, ``\\r``, ``\\t``, ``\\u001b``, ``\\u202e``).
  The escapes are JSON's, so a JSON document passes the gate unchanged in meaning.
- ``shown(text, lines=True)`` is a body of text (a rendered prompt, a diff): newlines and tabs stay,
  everything else above is escaped as for a field.
- ``echo`` (and ``write``, for a stream of our own, and ``formatted``, for the picker's prompt_toolkit
  text) are the only writers: whatever they are given goes through ``shown(lines=True)``, so a path
  that forgot to escape a field can at worst run a field onto a new line, never send the terminal a
  control sequence. Styling is ours alone: ``styled`` escapes the text and then adds the style, and
  the writers pass a ``Shown`` (text that has been through the gate) as it is.

``tests/attack/test_terminal_gate.py`` checks that no other module of cli/ writes to a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import FormattedText

# click is imported where it is used: the plain stdio ``serve`` (cli/entry.py) writes its one error line
# through this gate without loading click.
__all__ = ["CLEAR_LINE", "Shown", "echo", "formatted", "shown", "styled", "write"]

#: C0 and C1 controls and DEL, the line and paragraph separators (some terminals break the line there),
#: the BiDi embeddings, overrides, isolates and marks (Trojan Source, CVE-2021-42574), and lone surrogates
#: (which a terminal's encoder cannot write at all).
_OTHERS = r"\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_FIELD = re.compile(r"[\x00-\x1f" + _OTHERS + "]")
_BODY = re.compile(r"[\x00-\x08\x0b-\x1f" + _OTHERS + "]")  # a body keeps its tabs and newlines
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


class Shown(str):
    """Text that has been through the gate (and may carry our own styling): ``echo`` writes it as it is."""

    __slots__ = ()


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def shown(text: object, *, lines: bool = False) -> str:
    """``text`` safe to print: one field on one line, or with ``lines`` a body whose newlines and tabs stay."""
    if isinstance(text, Shown):
        return text
    return (_BODY if lines else _FIELD).sub(_escape, str(text))


def styled(text: object, **style: Any) -> Shown:
    """``text`` through the gate (a body: newlines stay), then styled as ``click.style`` would."""
    import click

    return Shown(click.style(shown(text, lines=True), **style))


#: Clears the line a progress count was written on (our own control sequence).
CLEAR_LINE = Shown("\r\033[K")


def echo(message: object = "", *, err: bool = False, nl: bool = True, file: IO[str] | None = None,
         color: bool | None = None) -> None:
    """Write ``message`` (through the gate unless it is ``Shown`` already) and a newline, as ``click.echo``."""
    import click

    click.echo(shown(message, lines=True), err=err, nl=nl, file=file, color=color)


def write(stream: IO[str], text: object) -> None:
    """Write ``text`` (through the gate unless it is ``Shown``) to ``stream`` as it is, and flush."""
    stream.write(shown(text, lines=True))
    stream.flush()


def formatted(parts: Iterable[tuple[str, str]]) -> FormattedText:
    """prompt_toolkit text of (style, text) parts, each text through the gate as a body."""
    from prompt_toolkit.formatted_text import FormattedText

    return FormattedText([(style, shown(text, lines=True)) for style, text in parts])
