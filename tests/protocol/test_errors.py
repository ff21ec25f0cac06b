"""The one exception tree (protocol/errors.py): codes and HTTP statuses, the wire form of an error, errors read
back from the wire (``from_wire``), the messages that name the file, line or message at fault, and the one error
for what a reader of a file's text refuses at a line (issue 39, item 7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from promptdeck.protocol.errors import (
    ClientError,
    ConnectionFailed,
    ConversionError,
    HeaderMismatch,
    HttpError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    LibraryError,
    LineError,
    McpError,
    MethodNotFound,
    MissingCapability,
    OAuthError,
    ParseError,
    PromptdeckError,
    PromptFileError,
    ProtocolViolation,
    RequestTimeout,
    UnsupportedVersion,
    from_wire,
)
from promptdeck.sources.files.blocks import validate_icons
from promptdeck.sources.files.frontmatter import read_front_matter, split_front_matter
from promptdeck.sources.files.library import TemplateFolder
from promptdeck.sources.files.native import Native, build, claude, codex, gemini
from promptdeck.sources.files.source import stage_file


def test_every_error_is_a_promptdeck_error_in_the_drawn_tree() -> None:
    for kind in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, HeaderMismatch,
                 MissingCapability, UnsupportedVersion):
        assert issubclass(kind, McpError)
    for client_kind in (ConnectionFailed, ProtocolViolation, RequestTimeout, OAuthError):
        assert issubclass(client_kind, ClientError)
    assert issubclass(PromptFileError, LibraryError)
    for root in (McpError, HttpError, ClientError, LibraryError, ConversionError):
        assert issubclass(root, PromptdeckError)
    assert issubclass(ConversionError, ValueError)  # the input given was wrong


def test_the_wire_form_carries_data_only_when_there_is_some() -> None:
    assert InvalidParams("unknown prompt 'x'").to_wire() == {"code": -32602, "message": "unknown prompt 'x'"}
    assert InvalidParams("bad", {"argument": "n"}).to_wire() == {"code": -32602, "message": "bad",
                                                                 "data": {"argument": "n"}}
    assert McpError("odd", code=-32001).to_wire()["code"] == -32001


def test_an_internal_error_keeps_its_detail_off_the_wire() -> None:
    error = InternalError("prompt 'p': KeyError: 'secret path'")
    assert error.to_wire() == {"code": -32603, "message": "Internal error"}
    assert error.detail == "prompt 'p': KeyError: 'secret path'"


def test_http_statuses_of_the_2026_errors_and_an_override() -> None:
    assert (InvalidParams("x").http_status, HeaderMismatch("x").http_status) == (200, 400)
    assert MissingCapability("x").http_status == UnsupportedVersion("x").http_status == 400
    assert InvalidRequest("slow down", http_status=429).http_status == 429
    assert InvalidRequest("x").http_status == 200  # the override is the instance's, not the class's


def test_a_prompt_file_error_names_its_path_and_line() -> None:
    at_line = PromptFileError("review.md", "unknown key 'argz'", 3)
    assert str(at_line) == "review.md:3: unknown key 'argz'"
    assert (at_line.path, at_line.line, at_line.reason) == ("review.md", 3, "unknown key 'argz'")
    assert str(PromptFileError("review.md", "not UTF-8")) == "review.md: not UTF-8"


def test_a_conversion_error_names_the_provider_message_and_role() -> None:
    assert str(ConversionError("openai", 2, "audio is not allowed", role="assistant")) == \
        "openai: message 2 (assistant): audio is not allowed"
    assert str(ConversionError("gemini", 0, "empty")) == "gemini: message 0: empty"
    error = ConversionError("anthropic", None, "no messages")
    assert (str(error), error.provider, error.index) == ("anthropic: no messages", "anthropic", None)


def test_an_http_error_keeps_its_status_headers_and_extra_fields() -> None:
    error = HttpError(429, "too many requests", headers=[(b"retry-after", b"1")], retry=1)
    assert (error.status, error.message, error.headers, error.extra, error.error) == (
        429, "too many requests", [(b"retry-after", b"1")], {"retry": 1}, None)
    assert HttpError(404, "no such path").headers == []


# -- from_wire -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "kind"), [
    (-32700, ParseError), (-32600, InvalidRequest), (-32601, MethodNotFound), (-32602, InvalidParams),
    (-32603, InternalError), (-32020, HeaderMismatch), (-32021, MissingCapability), (-32022, UnsupportedVersion),
])
def test_from_wire_picks_the_class_by_code(code: int, kind: type[McpError]) -> None:
    error = from_wire({"code": code, "message": "the server's words", "data": {"k": [1]}})
    assert type(error) is kind
    assert (error.code, error.message, error.data, str(error)) == (code, "the server's words", {"k": [1]},
                                                                   "the server's words")


@pytest.mark.parametrize("code", [0, -32000, -1, 42])
def test_from_wire_keeps_other_codes_on_the_base_class(code: int) -> None:
    """The official SDK answers some errors with code 0; they stay McpError with that code."""
    error = from_wire({"code": code, "message": "Unknown prompt: x"})
    assert type(error) is McpError and error.code == code and error.message == "Unknown prompt: x"
    assert error.data is None


def test_from_wire_tolerates_a_missing_or_odd_message() -> None:
    assert from_wire({"code": -32602}).message == ""
    assert from_wire({"code": -32602, "message": ["not", "text"]}).message == ""


@pytest.mark.parametrize("error", [None, "boom", [1], {"message": "no code"}, {"code": "-32602"},
                                   {"code": True}, {"code": 1.5}])
def test_from_wire_reports_malformed_error_objects(error: object) -> None:
    exc = from_wire(error)
    assert type(exc) is McpError and exc.code == -32603
    assert exc.message.startswith("malformed error object")

# Each reader of a file's text, given text it refuses, and the line it names (1-based in the file).
REFUSALS: list[tuple[str, Callable[[], object], int | None]] = [
    ("front matter never closed", lambda: split_front_matter("---\nname: x\n"), 1),
    ("front matter that is not YAML", lambda: read_front_matter("a: [\n"), 3),
    ("a message block's field", lambda: validate_icons("not a list"), None),
    ("a Gemini command", lambda: gemini.read(".gemini/commands/x.toml", "a = 1\nb = \n"), 2),
    ("a Codex prompt's front matter", lambda: codex.read(".codex/prompts/x.md", "---\nx: 1\n"), 1),
    ("a Claude command's front matter",
     lambda: claude.read_command(".claude/commands/x.md", "---\nname: [\n---\nhi\n"), 3),
]


@pytest.mark.parametrize(("what", "read", "line"), REFUSALS, ids=[what for what, _, _ in REFUSALS])
def test_every_reader_of_a_files_text_refuses_with_the_one_line_error(what: str, read: Callable[[], object],
                                                                     line: int | None) -> None:
    with pytest.raises(LineError) as caught:
        read()
    assert type(caught.value) is LineError, what  # no reader has its own kind: none is told apart by a caller
    assert caught.value.line == line
    # Part of the tree, and a ValueError as the text given was wrong; not a LibraryError, which has a path.
    assert isinstance(caught.value, PromptdeckError) and isinstance(caught.value, ValueError)
    assert not isinstance(caught.value, LibraryError)


def test_a_line_error_becomes_the_files_problem_at_that_line(tmp_path: Path) -> None:
    staged = stage_file("review.md", b"---\nname: review\n")
    assert staged == [("front matter starts with '---' but has no closing '---' line", 1)]
    prompt, problems = build(TemplateFolder(tmp_path), ".gemini/commands/x.toml", Native("gemini", "a = 1\nb = \n"))
    assert prompt is None and [(p.path, p.line) for p in problems] == [(".gemini/commands/x.toml", 2)]
    assert isinstance(problems[0], PromptFileError)
