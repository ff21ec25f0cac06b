"""Prompts and rendered messages as terminal text (cli/render_text.py): one block per message with its role,
binary content summarised, every control sequence the server sent escaped, and listings as aligned columns."""

from __future__ import annotations

import base64

from promptdeck.cli.render_text import WIDTH, arguments_summary, describe_content, format_messages, format_table
from promptdeck.client.types import ArgumentInfo, PromptInfo, RenderedPrompt
from promptdeck.protocol.content import Text, user


def test_messages_as_blocks_with_their_role_and_the_description() -> None:
    wire = {"description": "A greeting", "messages": [
        {"role": "user", "content": {"type": "text", "text": "line 1\nline 2"}},
        {"role": "assistant", "content": {"type": "text", "text": "ok"}}]}
    assert format_messages(wire, color=False).split("\n") == [
        "── user ".ljust(WIDTH, "─"), "line 1", "line 2", "── assistant ".ljust(WIDTH, "─"), "ok", "(A greeting)"]


def test_typed_results_read_the_same_as_wire_ones() -> None:
    typed = RenderedPrompt(messages=(user("hi"),), description="d")
    wire = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "description": "d"}
    assert format_messages(typed, color=False) == format_messages(wire, color=False)
    assert isinstance(user("x").content, Text)


def test_what_the_server_sent_cannot_reach_the_terminal_raw() -> None:
    wire = {"description": "d\x1b[2J\nforged", "messages": [
        {"role": "user\x1b[31m", "content": {"type": "text", "text": "body\x1b]0;title\x07\nkept"}}]}
    text = format_messages(wire, color=False)
    assert "\x1b" not in text and "\x07" not in text
    assert "body\\u001b]0;title\\u0007\nkept" in text
    assert text.endswith("(d\\u001b[2J\\nforged)")  # a description is one line


def test_binary_content_is_summarised() -> None:
    data = base64.b64encode(b"x" * 1234).decode()
    assert describe_content({"type": "image", "mimeType": "image/png", "data": data}) == \
        "[image image/png, 1,234 bytes]"
    assert describe_content({"type": "audio", "data": "not base64!"}) == "[audio ?, invalid base64]"
    text = {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "body"}
    assert describe_content({"type": "resource", "resource": text}) == "[resource file:///a.txt (text/plain)]\nbody"
    assert describe_content({"type": "resource", "resource": {"uri": "x://b", "blob": data}}) == \
        "[resource x://b (?)] 1,234 bytes"
    assert describe_content({"type": "resource_link", "name": "n", "uri": "x://c"}) == "[link n: x://c]"
    assert describe_content({"type": "resource_link", "name": "n", "title": "T", "uri": "x://c"}) == "[link T: x://c]"
    assert describe_content({"type": "hologram", "v": 1}) == '{"type": "hologram", "v": 1}'


def test_a_listing_as_aligned_columns_cut_to_width() -> None:
    prompts = [PromptInfo(name="code-review", title="Review code",
                          arguments=(ArgumentInfo(name="code", required=True), ArgumentInfo(name="language"))),
               PromptInfo(name="x", title="T" * 60)]
    assert arguments_summary(prompts[0]) == "code*, language"
    lines = format_table(prompts).split("\n")
    assert lines[0].startswith("NAME         TITLE") and lines[0].endswith("ARGUMENTS (* required)")
    assert lines[1].startswith("code-review  Review code ") and lines[1].endswith("code*, language")
    assert lines[2] == "x            " + "T" * 39 + "…"
    assert all(len(line) <= 30 for line in format_table(prompts, width=30).split("\n"))
    assert format_table([]) == "(no prompts)"
    assert "\x1b" not in format_table([PromptInfo(name="a", title="\x1b[31mred")])
