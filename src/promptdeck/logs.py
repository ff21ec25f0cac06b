"""Log lines that a client cannot forge: escaped text, or one JSON object a line.

Values that come from clients reach the log: a token's subject, a prompt name,
a method. Written raw, a newline in one of them starts a line that reads like a
genuine record (a forged audit entry), and an escape sequence can rewrite what
a terminal shows. So:

- ``clean(value)`` is the helper every log call uses for client-supplied
  values: control characters (C0, DEL, C1), Unicode line and paragraph
  separators and bidirectional overrides become ``\\n``, ``\\x1b``,
  ``\\u2028``…, and a backslash becomes ``\\\\``, so the text stays unambiguous.
- ``log_event(logger, level, event, **fields)`` writes one structured record:
  ``event key=value …`` in text (each value cleaned, and quoted when it holds a
  space, ``=`` or ``"``, so a value cannot pose as another field), and the
  fields as JSON keys in JSON mode.
- ``TextFormatter`` is the safety net under call sites that forgot: it escapes
  control characters in every message and indents exception text, so every line
  that starts at column 0 is the start of a genuine record.
- ``JsonFormatter`` (``serve --log-format json``) writes one JSON object a line
  (``ensure_ascii``, so not even U+2028 appears raw).

Secrets are never given to the log: call sites pass principals' names, never
tokens, and never argument values.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

FORMATS = ("text", "json")

#: Characters that must not reach a log line raw: C0 and C1 controls, DEL, the Unicode line and
#: paragraph separators (``str.splitlines`` breaks on them), and the bidirectional controls that can
#: make a terminal show text in another order than it was written.
_UNSAFE = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F),
           *range(0x2066, 0x206A)]
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(code: int) -> str:
    return _NAMED.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


_CONTROLS = {code: _escape(code) for code in _UNSAFE}
_CLEAN = {**_CONTROLS, ord("\\"): "\\\\"}


def clean(value: object) -> str:
    """``value`` as text safe for one log line (see the module docstring)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable() and "\\" not in text:
        return text  # the common case, checked in C
    return text.translate(_CLEAN)


def _field(value: object) -> str:
    if isinstance(value, bool | int | float) or value is None:
        return str(value)
    text = clean(value)
    if not text or any(c in text for c in ' ="'):
        return '"' + text.replace('"', '\\"') + '"'
    return text


def log_event(logger: logging.Logger, level: int, event: str, /, **fields: object) -> None:
    """One record: ``event key=value …``, each value escaped; in JSON mode the fields are keys."""
    if logger.isEnabledFor(level):
        logger.log(level, "%s", _Event(event, fields), extra={"event": event, "fields": fields})


class _Event:
    """The text of an event record, built only if a handler formats it."""

    __slots__ = ("event", "fields")

    def __init__(self, event: str, fields: dict[str, object]) -> None:
        self.event = event
        self.fields = fields

    def __str__(self) -> str:
        return " ".join([clean(self.event), *(f"{k}={_field(v)}" for k, v in self.fields.items())])


class TextFormatter(logging.Formatter):
    """``promptdeck LEVEL message``: one line a record; exception text indented below it."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"promptdeck {record.levelname} {record.getMessage().translate(_CONTROLS)}"
        detail = self._detail(record)
        if detail:
            line += "".join(f"\n    | {part.translate(_CONTROLS)}" for part in detail.splitlines())
        return line

    def _detail(self, record: logging.LogRecord) -> str:
        parts = []
        if record.exc_info:
            parts.append(self.formatException(record.exc_info))
        if record.stack_info:
            parts.append(self.formatStack(record.stack_info))
        return "\n".join(parts)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, and the message or the event's fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out["event"] = getattr(record, "event", "")
            for key, value in fields.items():
                out.setdefault(key, value if isinstance(value, bool | int | float | None) else str(value))
        else:
            out["message"] = record.getMessage()
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, ensure_ascii=True, default=str)


def banner(text: str, log_format: str) -> str:
    """A line the CLI prints to stderr itself (the "serving…" notice), as a record of the chosen format."""
    record = logging.LogRecord("promptdeck", logging.INFO, __file__, 0, "%s", (text,), None)
    return JsonFormatter().format(record) if log_format == "json" else text


def setup_logging(verbose: int, log_format: str = "text") -> None:
    """Log promptdeck's records to stderr: warnings by default, -v info, -vv debug; text or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger("promptdeck")
    root.addHandler(handler)
    root.setLevel(max(logging.WARNING - 10 * verbose, logging.DEBUG))
