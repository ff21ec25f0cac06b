"""Log lines an attacker cannot forge (logs.py): values escaped onto one line, key=value fields that cannot
pose as more fields, JSON lines with the record's extras, and tracebacks indented so only a real record
starts a line."""

from __future__ import annotations

import io
import json
import logging
import sys

import pytest

from promptdeck.logs import JsonFormatter, TextFormatter, announce, escape, field, setup_logging


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.makeLogRecord({"name": "promptdeck.test", "levelno": logging.WARNING, "levelname": "WARNING",
                                  "msg": message, "args": args, "created": 0.0, "msecs": 5.0})
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_escape_keeps_every_value_on_one_line() -> None:
    assert escape("a\nb\rc\x1b[0m\x7f\x85") == "a\\x0ab\\x0dc\\x1b[0m\\x7f\\x85"
    assert escape("rtl\u202eiso\u2066sep\u2028") == "rtl\\u202eiso\\u2066sep\\u2028"
    assert escape("caf\u00e9 \u2603") == "caf\u00e9 \u2603"


def test_a_field_is_bare_when_plain_and_quoted_otherwise() -> None:
    assert field("alice@example.com") == "alice@example.com"
    assert field(42) == "42"
    assert field("two words") == '"two words"'
    assert field("x user=admin") == '"x user=admin"'
    assert field("") == '""'


def test_text_lines_escape_the_message_and_indent_tracebacks() -> None:
    formatter = TextFormatter()
    assert formatter.format(record("prompt %s", "evil\npromptdeck ERROR forged")) == \
        "promptdeck WARNING prompt evil\\x0apromptdeck ERROR forged"
    try:
        raise ValueError("bad\nline")
    except ValueError:
        failed = record("failed")
        failed.exc_info = sys.exc_info()
    lines = formatter.format(failed).split("\n")
    assert lines[0] == "promptdeck WARNING failed"
    assert all(line.startswith("    | ") for line in lines[1:])
    assert lines[-2:] == ["    | ValueError: bad", "    | line"]  # the message's own line cannot pose as a record


def test_json_lines_carry_the_extras_as_fields() -> None:
    line = json.loads(JsonFormatter().format(record("got %s", "p\n1", prompt="p\n1", principal=None)))
    assert line == {"time": "1970-01-01T00:00:00.005Z", "level": "warning", "logger": "promptdeck.test",
                    "message": "got p\n1", "prompt": "p\n1", "principal": None}


@pytest.mark.usefixtures("kept_logging")
def test_setup_logging_levels_and_the_announcement(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    logging.getLogger("promptdeck").handlers.clear()
    setup_logging(1)
    logger = logging.getLogger("promptdeck")
    assert logger.level == logging.INFO
    logger.getChild("x").debug("not shown")
    logger.getChild("x").info("shown\nescaped")
    announce("serving on http://127.0.0.1:1/mcp")
    assert stderr.getvalue() == ("promptdeck INFO shown\\x0aescaped\n"
                                 "promptdeck: serving on http://127.0.0.1:1/mcp\n")
    assert logging.getLogger("uvicorn").propagate is False


@pytest.mark.usefixtures("kept_logging")
def test_setup_logging_in_json(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    logging.getLogger("promptdeck").handlers.clear()
    setup_logging(0, "json")
    logging.getLogger("promptdeck.y").info("quiet by default")
    logging.getLogger("promptdeck.y").warning("loud", extra={"prompt": "a"})
    [line] = stderr.getvalue().splitlines()
    assert json.loads(line)["prompt"] == "a" and json.loads(line)["message"] == "loud"


def test_text_log_lines_escape_controls_and_indent_tracebacks() -> None:
    assert escape("a\nb\r\x1b[2J\x85\u2028\u202e") == "a\\x0ab\\x0d\\x1b[2J\\x85\\u2028\\u202e"
    assert field("alice") == "alice" and field("eve outcome=ok") == '"eve outcome=ok"'
    # A call site that passes a client's value raw: the formatter still keeps the record on one line.
    raw = logging.LogRecord("promptdeck.server", logging.ERROR, __file__, 1, "method %s failed", ("x\ny",), None)
    assert TextFormatter().format(raw) == "promptdeck ERROR method x\\x0ay failed"
    try:
        raise ValueError("bad\npromptdeck INFO forged")
    except ValueError:
        raw.exc_info = sys.exc_info()
        raw.exc_text = None
    lines = TextFormatter().format(raw).splitlines()
    assert lines[0] == "promptdeck ERROR method x\\x0ay failed" and len(lines) > 2
    assert all(line.startswith("    | ") for line in lines[1:]), lines
    parsed = json.loads(JsonFormatter().format(raw))
    assert parsed["message"] == "method x\ny failed" and "forged" in parsed["exception"]
