"""Other tools' prompt files built to explode in their parsers (issue 28, items 5 and 6).

Each runs in a real ``promptdeck`` process held to 1 GiB of address space, as in test_bombs.py: before
the fix, the dotprompt partial bomb took seconds and hundreds of megabytes per level (and gigabytes one
level on), and a deep Gemini TOML stopped ``check`` and ``serve`` with a traceback.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from promptdeck.prompts.arguments import bind
from promptdeck.prompts.spec import RenderContext
from promptdeck.protocol.errors import InternalError
from promptdeck.sources.files.native import Native, build
from tests.support.files import load, prompts
from tests.support.http_rpc import init
from tests.support.http_server import http_server
from tests.support.modern import legacy, stdio_line

pytest.importorskip("dotpromptz")

LIMIT_BYTES = 1024**3


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def _promptdeck(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], input=stdin, capture_output=True,
                          timeout=120, preexec_fn=_limited)


def _partials(levels: int, wrap: tuple[str, str] = ("", ""), text: str = "xxxxxxxxxx") -> str:
    """Inline partials each including the one before ten times: 10 ** levels copies of ``text``."""
    lines = [f'{{{{#*inline "p0"}}}}{text}{{{{/inline}}}}']
    lines += [f'{{{{#*inline "p{i}"}}}}{f"{{{{> p{i - 1}}}}}" * 10}{{{{/inline}}}}' for i in range(1, levels + 1)]
    return "---\ndescription: bomb\n---\n" + "\n".join([*lines, f"{wrap[0]}{{{{> p{levels}}}}}{wrap[1]}"]) + "\n"


DEEP_TOML = 'prompt = "deep"\nvalue = ' + "[" * 100_000 + "]" * 100_000 + "\n"
#: file -> (text, line, words of the problem)
#: What a render past its limits says: its output grew past the size limit, or it ran past its time.
BOUNDS = ("rendered text is longer than", "rendering took longer than")
LOAD_BOMBS = {
    # 837 bytes; it said "1 prompts ok" after 4 s and 340 MB
    # Whichever render limit it meets first, size or (on a loaded machine) time: both are the limits.
    "bomb.prompt": (_partials(7), 4, BOUNDS),
    # makes nothing, 10 ** 9 times over
    "nothing.prompt": (_partials(9, text=""), 4, "rendering took longer than"),
    # dotpromptz's partial-finding regex backtracks in cubic time over the blanks: 8 s for 3 KB
    "blanks.prompt": ("Hi {{" + " " * 3000 + "x}}\n", 1, "more than 16 blanks"),
    # dotpromptz reads a front matter after license lines, with PyYAML's recursive pure-Python loader
    "licensed.prompt": ("# Copyright\n\n---\nx: " + "[" * 600 + "]" * 600 + "\n---\nHi\n", 4,
                        "nested deeper than 32 levels"),
    # ... at 14 us a byte: 27 s for 900 KB
    "big.prompt": ("---\nitems:\n" + "".join(f"  - k{i}: [a, b]\n" for i in range(2000)) + "---\nHi\n", 1,
                   "front matter is longer than 16 KiB"),
    ".gemini/commands/deep.toml": (DEEP_TOML, 2, "nested deeper than 100 levels"),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_check_reports_format_bombs_at_their_file(tmp_path: Path) -> None:
    _write(tmp_path, {rel: text for rel, (text, _, _) in LOAD_BOMBS.items()})
    _write(tmp_path, {"fine.prompt": "Hello {{who}}\n", ".gemini/commands/hi.toml": 'prompt = "Hi {{args}}"\n',
                      "licensed-ok.prompt": "# Copyright\n---\ndescription: fine\n---\nHi\n"})
    done = _promptdeck("check", str(tmp_path))
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1, (out, err)
    assert "Traceback" not in err and "MemoryError" not in out + err
    for rel, (_, line, words) in LOAD_BOMBS.items():
        [report] = [row for row in out.splitlines() if row.startswith(f"{rel}:")]
        expected = (words,) if isinstance(words, str) else words
        assert report.startswith(f"{rel}:{line}: ") and any(w in report for w in expected), report
    assert err.startswith(f"3 prompts ok; {len(LOAD_BOMBS)} problems in {len(LOAD_BOMBS)} files"), err


GO = "---\ninput:\n  schema:\n    go?: string\n---\n"
RENDER_BOMBS = {
    # passes the check at load (nothing given), explodes when asked
    "later": _partials(7, ("{{#if go}}", "{{/if}}")).replace("description: bomb\n", GO[4:-4]),
    # a value of a million characters makes dotpromptz's marker regex run for minutes
    "markers": "Say {{go}}\n",
}
#: json's indent pads every line, and a billion of it is gigabytes: JSON.stringify stops at 10
PADDED = GO + "{{json this indent=999999999}}\n"


def test_render_bombs_are_refused_and_stdio_serves_on(tmp_path: Path) -> None:
    _write(tmp_path, {f"{name}.prompt": text for name, text in RENDER_BOMBS.items()})
    fine = GO.replace("go?", "who?") + '{{log "not on stdout"}}{{json this indent=2}}\n'
    _write(tmp_path, {"padded.prompt": PADDED, "fine.prompt": fine, ".gemini/commands/deep.toml": DEEP_TOML})
    go = {"later": "yes", "markers": "<<<dotprompt:section" * 50_000, "padded": "x"}
    requests = [stdio_line(init("2025-06-18")), b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n',
                stdio_line(legacy("list", "prompts/list"))]
    requests += [stdio_line(legacy(name, "prompts/get", {"name": name, "arguments": {"go": value}}))
                 for name, value in go.items()]
    requests.append(stdio_line(legacy("fine", "prompts/get", {"name": "fine", "arguments": {"who": "Ada"}})))
    done = _promptdeck("serve", str(tmp_path), "--no-watch", stdin=b"".join(requests))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}  # every line is JSON-RPC
    assert sorted(p["name"] for p in answers["list"]["result"]["prompts"]) == ["fine", "later", "markers", "padded"]
    for name in RENDER_BOMBS:
        assert answers[name]["error"]["code"] == -32603, (name, str(answers[name])[:300])
    assert answers["fine"]["result"]["messages"][0]["content"]["text"] == '{\n  "who": "Ada"\n}'
    assert answers["padded"]["result"]["messages"][0]["content"]["text"] == json.dumps({"go": "x"}, indent=10)
    log = done.stderr.decode()
    assert "Traceback" not in log and "MemoryError" not in log
    assert "deep.toml:2: not valid TOML here" in log


def test_serve_http_starts_beside_a_deep_toml(tmp_path: Path) -> None:
    _write(tmp_path, {".gemini/commands/deep.toml": DEEP_TOML, "fine.md": "Hi\n"})
    with http_server(str(tmp_path), "--no-watch", "--stateless", "--json-response") as url:
        listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
                            headers={"accept": "application/json, text/event-stream",
                                     "mcp-protocol-version": "2025-06-18"}, timeout=30).json()
    assert [p["name"] for p in listed["result"]["prompts"]] == ["fine"]


def test_dotprompt_builds_checks_and_renders_inside_a_running_loop(tmp_path: Path) -> None:
    """dotpromptz is async; promptdeck once drove it with asyncio.run, which refuses on a running loop."""
    source = load(tmp_path, {"hi.prompt": "---\ninput: {schema: {who: string}}\n---\nHello {{who}}\n"})
    prompt = prompts(source)["hi"]

    async def on_the_loop() -> None:
        built, problems = build(source.library, "hi.prompt", Native("dotprompt", "Hello {{who}}\n"))
        assert problems == [] and built is not None
        bomb, found = build(source.library, "bomb.prompt", Native("dotprompt", _partials(7)))
        assert bomb is None and any(limit in str(found[0]) for limit in BOUNDS)
        values = bind(prompt.arguments, {"who": "Ada"}, prompt.name)
        messages = prompt.render(values, RenderContext(prompt.name))
        assert isinstance(messages, list) and messages[0].content.text == "Hello Ada"  # type: ignore[union-attr]
        later = prompts(load(tmp_path / "later", {"later.prompt": RENDER_BOMBS["later"]}))["later"]
        with pytest.raises(InternalError) as refused:
            later.render(bind(later.arguments, {"go": "yes"}, later.name), RenderContext(later.name))
        assert any(limit in str(refused.value.__cause__) for limit in BOUNDS)

    asyncio.run(on_the_loop())
