"""``promptdeck pick``: a slash-command palette and an argument form over any MCP server (the cli layer's).

The steps, each a prompt_toolkit prompt on the terminal: list the prompts (with progress on long
listings), choose one from a palette (type ``/`` and part of a name or title), answer its arguments
one by one with the server's completions offered as you type, render it with ``prompts/get``, show
the messages, then copy them to the clipboard or print them to stdout.

The terminal side (prompts, preview, progress) goes to stdout when it is a terminal, else to stderr,
so ``promptdeck pick TARGET > prompt.txt`` works: only the chosen result reaches the file.

Live completion talks to the server from one background task per argument: it waits until typing
pauses (``DEBOUNCE``), asks ``completion/complete`` for the text so far (with the arguments already
answered as context), caches the answer by prefix, and reopens the menu. Until the answer comes, the
menu shows the cached answer for the longest shorter prefix, filtered here, so the menu keeps up
with the keyboard and the server gets one request per pause, never a queue of them.
"""

from __future__ import annotations

import asyncio
import base64
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer
from prompt_toolkit.completion import Completion as Choice
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output, create_output
from prompt_toolkit.shortcuts import CompleteStyle, print_formatted_text
from prompt_toolkit.styles import Style
from prompt_toolkit.validation import Validator

from ..client.session import Client
from ..client.types import ArgumentInfo, Completion, PromptInfo, RenderedPrompt, TextContent
from ..protocol.errors import ClientError, InvalidParams, McpError, MethodNotFound
from .render_text import arguments_summary, format_messages
from .terminal import CLEAR_LINE, Shown, echo, formatted, shown, write

__all__ = ["clipboard_text", "copy_to_clipboard", "osc52", "rank", "run", "terminal_problem"]

#: Exit codes: Esc (or Ctrl-D) leaves with 1, Ctrl-C with 130 (as a shell reports SIGINT).
EXIT_LEFT = 1
EXIT_INTERRUPTED = 130
#: How long typing must pause before the server is asked for completions.
DEBOUNCE = 0.15
#: How long a completion answer may take before the picker stops asking this server.
COMPLETE_TIMEOUT = 5.0
#: Palette entries shown at most (the best matches first).
MAX_MATCHES = 500
#: Clipboard programs, in order of preference; each reads the text on stdin.
CLIPBOARDS: tuple[tuple[str, ...], ...] = (
    ("wl-copy",),
    ("xclip", "-selection", "clipboard"),
    ("xsel", "-b", "-i"),
    ("pbcopy",),
)

_STYLE = Style.from_dict({
    "name": "bold",
    "title": "",
    "required": "fg:ansired bold",
    "dim": "fg:ansibrightblack",
    "error": "fg:ansired",
    "bottom-toolbar": "noreverse bg:default fg:ansibrightblack",
    "toolbar.head": "fg:default bold",
})


class _Left(Exception):
    """The user pressed Esc (or Ctrl-D on an empty line): leave without a result."""


def terminal_problem() -> str | None:
    """Why the picker cannot run here (no terminal to talk to), or None."""
    if not sys.stdin.isatty() or not (sys.stdout.isatty() or sys.stderr.isatty()):
        return "pick needs a terminal (stdin, and stdout or stderr)"
    return None


async def run(client: Client) -> int:
    """List, pick, fill in, render, then copy or print; returns the exit code."""
    ui = sys.stdout if sys.stdout.isatty() else sys.stderr
    output = create_output(stdout=ui)
    try:
        prompts = await _list(client, ui)
        name = client.server_info.get("name") or "the server"
        _say(output, [("class:name", shown(name)),
                      ("class:dim", f"  {len(prompts):,} prompts · MCP {client.protocol_version}")])
        prompt = await _palette(prompts, output)
        result = await _fill_and_render(client, prompt, output)
        echo(format_messages(result, color=True), file=ui, color=True)
        action = await _ask_action(output, default="copy" if sys.stdout.isatty() else "print")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except (_Left, EOFError):
        return EXIT_LEFT
    if action == "print":
        echo(format_messages(result, color=sys.stdout.isatty()))
        return 0
    text = clipboard_text(result)
    how = copy_to_clipboard(text, ui)
    _say(output, [("class:dim", f"copied {len(text):,} characters ({how})")])
    return 0


def _say(output: Output, parts: list[tuple[str, str]]) -> None:
    print_formatted_text(formatted(parts), output=output, style=_STYLE)


async def _list(client: Client, ui: TextIO) -> tuple[PromptInfo, ...]:
    shown = False

    def progress(prompts: int, pages: int) -> None:
        # Only listings of more than a couple of pages take long enough to be worth a counter.
        nonlocal shown
        if pages >= 3:
            write(ui, Shown(f"\rlisting: {prompts:,} prompts, {pages:,} pages"))
            shown = True

    prompts = await client.list_prompts(progress=progress)
    if shown:
        write(ui, CLEAR_LINE)
    if not prompts:
        raise ClientError("the server lists no prompts")
    return prompts


def _keys() -> KeyBindings:
    """Esc leaves at once (eager: it does not wait to see whether a longer binding follows)."""
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit(exception=_Left(), style="class:aborting")

    return keys


def _width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


def _cut(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


# -- the palette ----------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")


def rank(prompts: Sequence[PromptInfo], query: str) -> list[PromptInfo]:
    """The prompts that match ``query`` (a leading ``/`` is ignored), best first.

    Best is an exact name, then a name that starts with the query (as typed, or word by word: ``cr``
    for ``code-review``), then a word of the name or title
    that does, then the query anywhere in name or title, then its letters in order (fuzzy, tighter
    spans first); ties keep the server's order. An empty query (after the slash) matches everything.
    """
    q = query.strip().removeprefix("/").casefold()
    if not q:
        return list(prompts)
    scored: list[tuple[int, int, int, PromptInfo]] = []
    for index, prompt in enumerate(prompts):
        score = _score(prompt, q)
        if score is not None:
            scored.append((*score, index, prompt))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored]


def _score(prompt: PromptInfo, q: str) -> tuple[int, int] | None:
    name = prompt.name.casefold()
    title = (prompt.title or "").casefold()
    if name == q:
        return 0, 0
    if name.startswith(q) or _prefix_by_words(q, _WORD.findall(name)):
        return 1, 0
    if title.startswith(q) or any(w.startswith(q) for w in _WORD.findall(name) + _WORD.findall(title)):
        return 2, 0
    if q in name or q in title:
        return 3, 0
    spans = [s for s in (_span(q, name), _span(q, title)) if s is not None]
    return (4, min(spans)) if spans else None


def _prefix_by_words(q: str, words: list[str]) -> bool:
    """Whether ``q`` is a prefix of the name read word by word: a start of its first word, then of
    its second, and so on (``cr`` and ``coderev`` for ``code-review``)."""
    reached = {0}  # how much of q the words so far can spell
    for word in words:
        reached = {at + n for at in reached for n in range(1, min(len(word), len(q) - at) + 1)
                   if q[at:at + n] == word[:n]}
        if len(q) in reached:
            return True
        if not reached:
            return False
    return False


def _span(q: str, text: str) -> int | None:
    """The length of the shortest stretch of ``text`` holding the letters of ``q`` in order."""
    best: int | None = None
    for start in (i for i, c in enumerate(text) if c == q[0]):
        at = start
        for letter in q[1:]:
            at = text.find(letter, at + 1)
            if at < 0:
                break
        else:
            if best is None or at - start < best:
                best = at - start
    return None if best is None else best + 1


class _PromptMatches(Completer):
    """The palette's menu: the prompts matching what was typed, once it starts with ``/``."""

    def __init__(self, prompts: Sequence[PromptInfo]) -> None:
        self.prompts = prompts
        self.by_name = {p.name: p for p in prompts}
        self._last: tuple[str, list[PromptInfo]] = ("", [])

    def matches(self, text: str) -> list[PromptInfo]:
        if not text.strip():
            return []
        if self._last[0] != text:
            self._last = (text, rank(self.prompts, text))
        return self._last[1]

    def resolve(self, text: str) -> PromptInfo | None:
        """What Enter picks: the prompt named exactly, else the best match."""
        exact = self.by_name.get(text.strip().removeprefix("/"))
        if exact is not None:
            return exact
        found = self.matches(text)
        return found[0] if found else None

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Choice]:
        typed = document.text_before_cursor
        if not typed.startswith("/"):
            return
        for prompt in self.matches(typed)[:MAX_MATCHES]:
            yield Choice("/" + prompt.name, start_position=-len(typed), display=shown(prompt.name),
                         display_meta=shown(prompt.title or ""))


async def _palette(prompts: Sequence[PromptInfo], output: Output) -> PromptInfo:
    menu = _PromptMatches(prompts)
    keys = _keys()
    session: PromptSession[str] = PromptSession(
        output=output, style=_STYLE, completer=menu, complete_while_typing=True, key_bindings=keys,
        complete_style=CompleteStyle.COLUMN, reserve_space_for_menu=10, validate_while_typing=False,
        validator=Validator.from_callable(lambda text: menu.resolve(text) is not None,
                                          error_message="no prompt matches that; type / to see them all"))
    buffer = session.default_buffer
    # prompt_toolkit completes while typing, not after a deletion; reopen the menu then as well.
    buffer.on_text_changed += lambda buf: buf.start_completion() if buf.text.startswith("/") else None

    @keys.add("enter")
    def _pick(event: KeyPressEvent) -> None:
        chosen = menu.resolve(buffer.text)
        if chosen is not None and buffer.text != "/" + chosen.name:
            buffer.text = "/" + chosen.name
        buffer.validate_and_handle()

    def toolbar() -> FormattedText:
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            current = menu.by_name.get(state.current_completion.text[1:])
        else:
            found = menu.matches(buffer.text) if buffer.text.startswith("/") else []
            current = found[0] if found else None
        width = _width() - 1
        lines: list[tuple[str, str]] = []
        if current is not None:
            lines.append(("class:toolbar.head", _cut(shown(current.label) + (
                f" — {shown(current.description)}" if current.description else ""), width) + "\n"))
            if current.arguments:
                lines.append(("", _cut(f"arguments: {shown(arguments_summary(current))}  (* required)", width)
                              + "\n"))
        lines.append(("", "type / and part of a name · ↑↓ Tab choose · Enter pick · Esc leave"))
        return formatted(lines)

    text = await session.prompt_async(
        formatted([("class:name", "prompt"), ("", " › ")]), bottom_toolbar=toolbar,
        placeholder=formatted([("class:dim", f"/ to search {len(prompts):,} prompts")]), handle_sigint=False)
    chosen = menu.resolve(text)
    assert chosen is not None  # the validator saw to it
    return chosen


# -- the form -------------------------------------------------------------------------------------


class _Support:
    """Whether this server still gets completion requests (not after it failed one)."""

    def __init__(self) -> None:
        self.available = True


class _ServerValues(Completer):
    """One argument's menu: the server's suggestions for the text typed so far (see the module doc)."""

    def __init__(self, client: Client, prompt: str, argument: str, context: dict[str, str],
                 support: _Support) -> None:
        self.client, self.prompt, self.argument, self.context = client, prompt, argument, context
        self.support = support
        self.answers: dict[str, Completion] = {}
        self.latest: Completion | None = None
        self._typed = asyncio.Event()

    def values(self, prefix: str) -> tuple[str, ...]:
        if prefix in self.answers:
            return self.answers[prefix].values
        shorter = [p for p in self.answers if prefix.startswith(p)]
        if not shorter:
            return ()
        folded = prefix.casefold()
        return tuple(v for v in self.answers[max(shorter, key=len)].values if v.casefold().startswith(folded))

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Choice]:
        typed = document.text_before_cursor
        for value in self.values(typed):
            yield Choice(value, start_position=-len(typed), display=_cut(shown(value), 60))

    def start(self, buffer: Buffer) -> None:
        """Called once the prompt is up: ask for the first suggestions now, and again after each pause."""
        buffer.on_text_changed += lambda _: self._typed.set()
        self._typed.set()
        get_app().create_background_task(self._work(buffer))

    async def _work(self, buffer: Buffer) -> None:
        first = True
        while self.support.available:
            await self._typed.wait()
            self._typed.clear()
            while not first:  # debounce: wait until the keyboard has been quiet for DEBOUNCE
                await asyncio.sleep(DEBOUNCE)
                if not self._typed.is_set():
                    break
                self._typed.clear()
            first = False
            if _navigating(buffer):  # the text is a menu entry being browsed, not something typed
                continue
            prefix = buffer.document.text_before_cursor
            if prefix not in self.answers:
                answer = await self._ask(prefix)
                if answer is None:
                    return
                self.answers[prefix] = answer
            self.latest = self.answers[prefix]
            if buffer.document.text_before_cursor == prefix and not _navigating(buffer):
                buffer.complete_state = None
                buffer.start_completion()
            get_app().invalidate()

    async def _ask(self, prefix: str) -> Completion | None:
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for returns an answer that arrives as the form is
            # cancelled (Ctrl-C), and this task then waited for more typing, holding the picker open for good.
            async with asyncio.timeout(min(COMPLETE_TIMEOUT, self.client.timeout)):
                return await self.client.complete(self.prompt, self.argument, prefix, self.context)
        except MethodNotFound:  # no completion on this server: no menu, and no more asking
            self.support.available = False
        except McpError:  # this argument has none (or the server failed it): no menu here
            pass
        except (ClientError, TimeoutError):  # too slow, or gone (rendering will say so): stop asking
            self.support.available = False
        return None


def _navigating(buffer: Buffer) -> bool:
    state = buffer.complete_state
    return state is not None and state.complete_index is not None


async def _fill_and_render(client: Client, prompt: PromptInfo, output: Output) -> RenderedPrompt:
    """Ask the arguments and render; an argument the server rejects is shown and asked again."""
    head: list[tuple[str, str]] = [("class:name", prompt.name)]
    if prompt.title:
        head.append(("", f" — {prompt.title}"))
    if prompt.description:
        head.append(("class:dim", "\n" + prompt.description.strip()))
    if prompt.arguments:
        head.append(("class:dim", "\n* required; Enter on an empty optional argument skips it"))
    _say(output, head)
    support = _Support()
    values: dict[str, str] = {}
    while True:
        values = await _form(client, prompt, output, values, support)
        try:
            return await client.get_prompt(prompt.name, **values)
        except InvalidParams as exc:
            if not prompt.arguments:
                raise
            _say(output, [("class:error", f"error {exc.code}: {shown(exc.message)}"), ("class:dim", " (Esc leaves)")])


async def _form(client: Client, prompt: PromptInfo, output: Output, previous: dict[str, str],
                support: _Support) -> dict[str, str]:
    values: dict[str, str] = {}
    for argument in prompt.arguments:
        value = await _ask_argument(client, prompt, argument, dict(values), output, previous.get(argument.name, ""),
                                    support)
        if value.strip():
            values[argument.name] = value
    return values


async def _ask_argument(client: Client, prompt: PromptInfo, argument: ArgumentInfo, context: dict[str, str],
                        output: Output, default: str, support: _Support) -> str:
    suggestions = _ServerValues(client, prompt.name, argument.name, context, support)
    message: list[tuple[str, str]] = [("class:name", shown(argument.name))]
    if argument.required:
        message.append(("class:required", "*"))
    if argument.title and argument.title != argument.name:
        message.append(("class:title", f" ({shown(argument.title)})"))
    message.append(("", ": "))

    def toolbar() -> FormattedText:
        width = _width() - 1
        lines: list[tuple[str, str]] = []
        if argument.description:
            lines.append(("class:toolbar.head", _cut(shown(argument.description), width) + "\n"))
        hint = "required" if argument.required else "optional: Enter on empty input skips"
        latest = suggestions.latest
        if latest is not None and latest.values:
            total = latest.total if latest.total is not None else len(latest.values)
            more = "+" if latest.has_more and total <= len(latest.values) else ""
            hint += f" · the server suggests {total:,}{more} (↑↓ Tab choose)"
        lines.append(("", hint + " · Enter accept · Esc leave"))
        return formatted(lines)

    session: PromptSession[str] = PromptSession(
        output=output, style=_STYLE, completer=suggestions if support.available else None,
        complete_while_typing=True, key_bindings=_keys(), complete_style=CompleteStyle.COLUMN,
        reserve_space_for_menu=8, validate_while_typing=False,
        validator=Validator.from_callable(lambda text: bool(text.strip()) or not argument.required,
                                          error_message=f"{shown(argument.name)} is required"))
    buffer = session.default_buffer
    return await session.prompt_async(
        formatted(message), default=default, bottom_toolbar=toolbar, handle_sigint=False,
        pre_run=(lambda: suggestions.start(buffer)) if support.available else None)


# -- the result -----------------------------------------------------------------------------------


async def _ask_action(output: Output, default: str) -> str:
    """One key: c copies, p prints, Enter takes ``default``; other keys are ignored."""
    keys = _keys()

    def choose(key: str, action: str) -> None:
        @keys.add(key)
        def _choose(event: KeyPressEvent) -> None:
            event.current_buffer.text = action
            event.app.exit(result=action)

    for key, action in (("c", "copy"), ("p", "print"), ("enter", default)):
        choose(key, action)

    @keys.add("<any>")
    def _ignore(event: KeyPressEvent) -> None:
        pass

    session: PromptSession[str] = PromptSession(output=output, style=_STYLE, key_bindings=keys)
    return await session.prompt_async(
        formatted([("class:name", "copy"), ("", " to the clipboard (c) or "), ("class:name", "print"),
                       ("", f" to stdout (p)? [{default[0]}] ")]), handle_sigint=False)


def clipboard_text(result: RenderedPrompt) -> str:
    """What to copy: a lone text message as it is (ready to paste), anything else as readable text."""
    if len(result.messages) == 1 and isinstance(result.messages[0].content, TextContent):
        return result.messages[0].content.text
    return format_messages(result, color=False)


def osc52(text: str) -> str:
    """The escape sequence that asks the terminal (even over ssh, or tmux with set-clipboard) to copy."""
    return "\033]52;c;" + base64.b64encode(text.encode()).decode("ascii") + "\a"


def copy_to_clipboard(text: str, terminal: TextIO, programs: Iterable[Sequence[str]] = CLIPBOARDS) -> str:
    """Copy with the first clipboard program present that succeeds, else by OSC 52; says which."""
    for argv in programs:
        path = shutil.which(argv[0])
        if path is None:
            continue
        try:
            done = subprocess.run([path, *argv[1:]], input=text.encode(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return argv[0]
    write(terminal, Shown(osc52(text)))  # ours: the text inside is base64
    return "OSC 52 escape sequence to the terminal"
