"""Library files that would explode when loaded or rendered (issue 13, items 4 and 10).

Each runs in a real ``promptdeck`` process held to 1 GiB of address space, so a
regression fails here (MemoryError, or a killed process) instead of taking the
machine: the bombs below cost gigabytes and minutes before they were refused.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.http_rpc import init
from tests.support.modern import legacy, notification, stdio_line

LIMIT_BYTES = 1024**3


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def _promptdeck(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], input=stdin, capture_output=True,
                          timeout=120, preexec_fn=_limited)


def _laughs() -> str:
    lines = ["---", "description: nine to the tenth", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join([*lines, "arguments: *a9", "---", "Hi"]) + "\n"


YAML_BOMBS = {
    "laughs.md": (_laughs(), 4, "YAML aliases (*a0) are not allowed"),
    "flow.md": ("---\ndescription: deep\ntags: " + "[" * 600 + "]" * 600 + "\n---\nHi\n", 3,
                "nested deeper than 32 levels"),
    "unclosed.md": ("---\ndescription: deep\narguments:\n  - name: x\n    enum: " + "[" * 600 + "\n---\nHi\n", 5,
                    "nested deeper than 32 levels"),
    "block.md": ("---\ndescription: deep\ntags:\n" + "".join(" " * i + "-\n" for i in range(600)) + "---\nHi\n",
                 None, "nested deeper than 32 levels"),
    "role.md": ("user: {image: &x [*x, *x]}\nHi\n", 1, "YAML aliases (*x) are not allowed"),
}

CONSTANT_BOMBS = {
    "format.md": "{{ '%0999999999d'|format(1) }}",
    "modulo.md": "x\n{{ '%0999999999d' % 1 }}",
    "brace.md": "{{ '{:>999999999}'.format(1) }}",
    "ljust.md": "{{ 'x'.ljust(999999999) }}",
    "center.md": "{{ 'x'|center(999999999) }}",
    "repeat.md": "{{ 'x' * 999999999 }}",
}

WIDTH = "---\narguments:\n  - {name: w, type: integer, default: 999999999}\n---\n"
DOUBLING = "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(60) %}{% set ns.s = STEP %}{% endfor %}{{ ns.s }}"
RUNTIME_BOMBS = {
    "replace": "---\narguments:\n  - {name: s, default: aaaaaaaaaaaaaaaa}\n---\n"
               "{{ (s * 200000)|replace('a', s * 100) }}",
    "tilde": DOUBLING.replace("STEP", "ns.s ~ ns.s"),
    "plus": DOUBLING.replace("STEP", "ns.s + ns.s"),
    "join-filter": DOUBLING.replace("STEP", "[ns.s, ns.s]|join"),
    "join-method": DOUBLING.replace("STEP", "''.join([ns.s, ns.s])"),
    "format": WIDTH + "{{ ('%0' ~ w ~ 'd')|format(1) }}",
    "str-format": WIDTH + "{{ ('{:>' ~ w ~ '}').format(1) }}",
    "nested-format": WIDTH + "{{ '{:{}}'.format(1, w) }}",
    "star-width": WIDTH + "{{ '%*d' % (w, 1) }}",
    "indent": WIDTH + "{{ 'a\nb'|indent(w) }}",
    "center": WIDTH + "{{ 'a'|center(w) }}",
    "ljust": WIDTH + "{{ 'a'.ljust(w) }}",
    "wordwrap": "{{ ('ab ' * 100000)|wordwrap(1, wrapstring='x' * 1000) }}",
    "batch": WIDTH + "{{ [1]|batch(w, 'x')|list|length }}",
    "slice": WIDTH + "{{ [1]|slice(w, 'x')|list|length }}",
    "sum": "{{ ([range(100000)|list] * 42)|sum(start=[])|length }}",
    "extend": "{% set l = [1] %}{% for i in range(60) %}{{ l.extend(l) }}{% endfor %}",
    "expandtabs": "{{ ('\t' * 1000000).expandtabs(100) }}",
}


def test_check_reports_yaml_bombs_at_their_line(tmp_path: Path) -> None:
    for name, (text, _, _) in YAML_BOMBS.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "fine.md").write_text(
        "---\ndescription: fine & *well*\narguments: [{name: a, enum: [x, y]}]\n---\n{{ a }}\n")
    done = _promptdeck("check", str(tmp_path))
    out = done.stdout.decode()
    assert done.returncode == 1, (out, done.stderr.decode())
    assert "Traceback" not in done.stderr.decode()
    for name, (_, line, words) in YAML_BOMBS.items():
        [report] = [row for row in out.splitlines() if row.startswith(name)]
        assert words in report, report
        if line is not None:
            assert report.startswith(f"{name}:{line}: "), report
    assert done.stderr.decode().startswith("1 prompt ok; 5 problems in 5 files")


def test_check_reports_constant_template_bombs(tmp_path: Path) -> None:
    for name, text in CONSTANT_BOMBS.items():
        (tmp_path / name).write_text(text + "\n")
    done = _promptdeck("check", str(tmp_path))
    out = done.stdout.decode()
    assert done.returncode == 1, done.stderr.decode()
    for name in CONSTANT_BOMBS:
        line = 2 if name == "modulo.md" else 1
        [report] = [row for row in out.splitlines() if row.startswith(f"{name}:")]
        assert report.startswith(f"{name}:{line}: template error: ") and "limit" in report, report


def test_runtime_bombs_are_refused_and_the_server_serves_on(tmp_path: Path) -> None:
    for name, text in RUNTIME_BOMBS.items():
        (tmp_path / f"{name}.md").write_text(text + "\n")
    (tmp_path / "fine.md").write_text("{{ [[1], [2]]|sum(start=[]) }} {{ '%05d'|format(3) }} {{ 'a' ~ 1 }}\n")
    for name, (text, _, _) in YAML_BOMBS.items():
        (tmp_path / f"yaml-{name}").write_text(text)
    names = [*RUNTIME_BOMBS, "fine"]
    requests = [stdio_line(init("2025-06-18")), stdio_line(notification("notifications/initialized")),
                stdio_line(legacy("list", "prompts/list"))]
    requests += [stdio_line(legacy(name, "prompts/get", {"name": name})) for name in names]
    done = _promptdeck("serve", str(tmp_path), "--no-watch", stdin=b"".join(requests))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert sorted(p["name"] for p in answers["list"]["result"]["prompts"]) == sorted(names)  # YAML bombs skipped
    for name in RUNTIME_BOMBS:
        assert answers[name].get("error", {}).get("code") == -32603, (name, str(answers[name])[:300])
    assert answers["fine"]["result"]["messages"][0]["content"]["text"] == "[1, 2] 00003 a1"
    log = done.stderr.decode()
    assert "MemoryError" not in log and "Traceback" not in log
    for name in RUNTIME_BOMBS:
        assert f"prompt {name!r}" in log, name


@pytest.mark.parametrize("transport", ["http"])
def test_serve_http_starts_beside_yaml_bombs(tmp_path: Path, transport: str) -> None:
    import httpx

    from tests.support.http_server import http_server

    for name, (text, _, _) in YAML_BOMBS.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "fine.md").write_text("Hi\n")
    with http_server(str(tmp_path), "--no-watch", "--stateless", "--json-response") as url:
        listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
                            headers={"accept": "application/json, text/event-stream",
                                     "mcp-protocol-version": "2025-06-18"}, timeout=30).json()
    assert [p["name"] for p in listed["result"]["prompts"]] == ["fine"]
