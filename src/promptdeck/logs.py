"""Log lines an attacker cannot forge: every value escaped, or every line a JSON object.

Values in log records come from clients (a token's ``sub``, a prompt name, a
path) and from prompt authors. A newline or another control character in one
of them would let its sender start a line of their own, for example a fake
audit entry. The text format escapes control characters in the message; the
JSON format (``serve --log-format json``) writes one object per line, where
JSON's own escaping does the same job and fields stay fields.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from typing import Any

# C0, DEL and C1 controls, the Unicode line and paragraph separators some viewers break on, and the
# bidirectional overrides and isolates that make a terminal show text in another order than written.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))} | {
    c: f"\\u{c:04x}" for c in (0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_BARE = re.compile(r"[\w.@:/+-]+")
_RECORD_KEYS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
FORMATS = ("text", "json")


def escape(text: str) -> str:
    """``text`` with every control character written as an escape, so it stays on one line."""
    return text.translate(_CONTROLS)


def field(value: object) -> str:
    """A value for a ``key=value`` log field: bare when it is a plain word, JSON-quoted otherwise,
    so a value holding spaces or ``=`` cannot pose as further fields."""
    text = str(value)
    if _BARE.fullmatch(text):
        return text
    import json  # here, not at the top: this module is on the stdio start-up path, which needs no json (issue 29)

    return json.dumps(text)


class TextFormatter(logging.Formatter):
    """``promptdeck LEVEL message``, the message escaped; tracebacks stay multi-line but indented with
    ``    | `` and escaped, since an exception's message can carry a client's value: a line that starts
    at column 0 is always the start of a genuine record.
    An announcement (see ``announce``) is written as ``promptdeck: message``, as before logging was set up."""

    def __init__(self) -> None:
        super().__init__("promptdeck %(levelname)s %(message)s")

    def formatException(self, ei: Any) -> str:  # noqa: N802 - the logging API
        return "\n".join("    | " + escape(line) for line in super().formatException(ei).splitlines())

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - the logging API
        return "\n".join("    | " + escape(line) for line in stack_info.splitlines())

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - the logging API
        record.message = escape(record.message)
        if getattr(record, "announce", False):
            return f"promptdeck: {record.message}"
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, any ``extra`` fields, and the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        for key, value in vars(record).items():
            if key not in _RECORD_KEYS and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        import json  # see field()

        return json.dumps(line, default=str)


def setup_logging(verbose: int, style: str = "text") -> None:
    """Log promptdeck's records to stderr: warnings by default, -v info, -vv debug."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if style == "json" else TextFormatter())
    root = logging.getLogger("promptdeck")
    root.addHandler(handler)
    root.setLevel(max(logging.WARNING - 10 * verbose, logging.DEBUG))
    # uvicorn's own records (serve --http) go through the same handler, so they are escaped or JSON too;
    # serving.config tells uvicorn not to install handlers of its own.
    uvicorn = logging.getLogger("uvicorn")
    uvicorn.addHandler(handler)
    uvicorn.propagate = False


def announce(message: str) -> None:
    """Write ``message`` to the log whatever its level: what the operator always sees (where we serve)."""
    logger = logging.getLogger("promptdeck")
    record = logger.makeRecord(logger.name, logging.INFO, "", 0, message, (), None, extra={"announce": True})
    for handler in logger.handlers:
        handler.handle(record)
