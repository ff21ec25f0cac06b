"""Instructions a 2026-07-28 prompts/get costs the ASGI app, counted by callgrind: stable where CPU time is not.

    .venv/bin/python benchmarks/count_http.py [--requests 2000] [--baseline SRC]

floor_http.py measures CPU time over loopback, which moves with whatever else the machine runs. This counts
the instructions of the app alone, called in-process in a loop (no sockets, no uvicorn) under valgrind's
callgrind, for promptdeck as ``serve --http --stateless --json-response`` makes it and for floor_http.py's
essential floor (the same app as there), with the same requests as bench_http.py's 2026-07-28 JSON mode.
Each figure is a run answering N requests minus a run that builds the same N requests and answers none,
both after 200 untimed ones, divided by N. ``--baseline SRC`` counts promptdeck from another source tree too.
Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROMPTDECK, ESSENTIAL = "promptdeck", "essential"
WARMUP = 200


def requests(count: int, start: int) -> list[tuple[dict[str, Any], bytes]]:
    """(ASGI scope, body) of COUNT prompts/get as bench_http.py sends them, ids from START."""
    from bench_http import HOST, PATH, Call, http_head
    from bench_stdio import MODERN_VERSION
    from libgen import prompt_names

    names = prompt_names(10)
    out = []
    for req_id in range(start, start + count):
        call = Call.of(req_id, names)
        body = call.body(req_id, True)
        head = http_head(8000, MODERN_VERSION, None, "prompts/get", call.name)
        lines = (head + b"Content-Length: %d\r\n" % len(body)).split(b"\r\n")[1:]
        headers = [(name.strip().lower(), value.strip()) for name, value in (line.split(b":", 1)
                                                                            for line in lines if line)]
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "server": (HOST, 8000), "client": ("127.0.0.1", 40000), "scheme": "http", "method": "POST",
                 "root_path": "", "path": PATH, "raw_path": PATH.encode(), "query_string": b"",
                 "headers": headers, "state": {}}
        out.append((scope, body))
    return out


def make_app(kind: str) -> Any:
    from libgen import ensure_library

    library = ensure_library(10)
    if kind == ESSENTIAL:
        from floor_http import floor_app

        return floor_app(ESSENTIAL, library)
    from promptdeck.server.app import PromptServer
    from promptdeck.server.http.app import create_app

    server = PromptServer("promptdeck")
    server.add_folder(library)
    server.catalog  # noqa: B018 - loads the folder, as the lifespan's startup does
    return create_app(server, stateless=True, json_response=True, ui=True, watch=False)


async def answer(app: Any, todo: list[tuple[dict[str, Any], bytes]]) -> list[Any]:
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    for scope, body in todo:
        async def receive(body: bytes = body) -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, receive, send)
    return sent


def child(kind: str, count: int) -> None:
    """The counted process: warm up, build |COUNT| requests, answer them unless COUNT is negative."""
    import uvloop

    sys.path.insert(0, str(HERE))
    app = make_app(kind)

    async def main() -> None:
        await answer(app, requests(WARMUP, 1))
        todo = requests(abs(count), WARMUP + 1)
        if count < 0:
            return
        sent = await answer(app, todo)
        bodies = [m["body"] for m in sent if m["type"] == "http.response.body"]
        if len(bodies) != count or not all(b'"resultType":"complete"' in b and b"topic-" in b for b in bodies):
            raise SystemExit(f"{kind}: wrong answers, e.g. {bodies[-1][:200]!r}")

    uvloop.run(main())


def instructions(kind: str, count: int, src: Path, out: Path, script: str = __file__) -> int:
    """Instructions of one run of ``script --child KIND COUNT`` (this one's ``child``) under callgrind."""
    path = out / f"{kind}-{count}.callgrind"
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={path}", sys.executable, script,
                    "--child", kind, str(count)], env=env, check=True, capture_output=True)
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no total in {path}")


def arguments(description: str, requests: int, argv: list[str] | None) -> argparse.Namespace:
    """The options of a counting script (this one, count_stdio.py); ``--child`` is how it runs itself."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--requests", type=int, default=requests, help=f"requests counted (default {requests})")
    p.add_argument("--baseline", type=Path, metavar="SRC", help="also count promptdeck from this src folder")
    p.add_argument("--child", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.child and shutil.which("valgrind") is None:
        p.error("valgrind is not installed")
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments("Instructions per 2026-07-28 prompts/get (callgrind, in-process).", 2000, argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    src = HERE.parent / "src"
    runs = [(ESSENTIAL, "essential floor", src), (PROMPTDECK, "promptdeck", src)]
    if args.baseline:
        runs.append((PROMPTDECK, "promptdeck, baseline", args.baseline.resolve()))
    counted: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="promptdeck-count-") as tmp:
        for kind, label, tree in runs:
            both = [instructions(kind, n, tree, Path(tmp)) for n in (-args.requests, args.requests)]
            counted[label] = (both[1] - both[0]) / args.requests
            print(f"{label:>22}: {counted[label]:>9,.0f} instructions a request", file=sys.stderr)
    print(f"\nprompts/get, 2026-07-28, in-process ASGI app, {args.requests} requests, callgrind:")
    print("| app | instructions a request | of the essential floor's |\n|---|---:|---:|")
    for label, value in counted.items():
        print(f"| {label:<22} | {value:>9,.0f} | {value / counted['essential floor']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
