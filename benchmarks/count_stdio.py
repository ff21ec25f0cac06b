"""Instructions a stdio prompts/get costs promptdeck's stdio connection, counted by callgrind.

    .venv/bin/python benchmarks/count_stdio.py [--requests 1000] [--baseline SRC]

bench_stdio.py times requests over a pipe, which moves with whatever else the machine runs; this counts
instructions instead, in-process as count_http.py does for HTTP (a whole ``serve`` process varies by more than
a get costs: its watcher starts when the client pauses). The server and its ``StdioConnection`` are made as
``serve`` makes them and fed the requests in reads of ``serve``'s size, answers written to a file. Each era is
run twice under valgrind's callgrind, after WARMUP gets: one run builds N more requests and feeds none, the
other feeds them; the difference divided by N is what one get costs, from its bytes read to its answer
written. The 2025 era opens a 2025-11-25 session first; the 2026-07-28 era sends every request with the
``_meta`` bench_stdio.py's ``--era modern`` sends (client info included). ``--baseline SRC`` counts
promptdeck from another source tree too (an older commit's ``git archive``), for a before and after.
Needs valgrind.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WARMUP = 200
ERAS = ("2025-11-25", "2026-07-28")


def lines(era: str, count: int) -> bytes:
    """The server's stdin: the era's opening, then COUNT gets (bench_stdio.py's requests and arguments)."""
    from bench_stdio import MODERN_META, PROTOCOL_VERSION
    from libgen import prompt_names

    names = prompt_names(10)
    out: list[dict[str, Any]] = []
    modern = era == "2026-07-28"
    if not modern:
        out.append({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                               "clientInfo": {"name": "promptdeck-bench", "version": "1"}}})
        out.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for req_id in range(1, count + 1):
        params: dict[str, Any] = {"name": names[req_id % len(names)],
                                  "arguments": {"topic": f"topic-{req_id}", "tone": "formal"}}
        if modern:
            params["_meta"] = MODERN_META
        out.append({"jsonrpc": "2.0", "id": req_id, "method": "prompts/get", "params": params})
    return b"".join(json.dumps(message, separators=(",", ":")).encode() + b"\n" for message in out)


def child(era: str, count: int) -> None:
    """The counted process: a server and a stdio connection made as ``serve`` makes them, warmed up with WARMUP
    gets; then |COUNT| more built and, unless COUNT is negative, fed and checked."""
    import threading

    sys.path.insert(0, str(HERE))
    from libgen import ensure_library
    from promptdeck.server.app import PromptServer
    from promptdeck.server.stdio import _READ_SIZE, StdioConnection, _Output

    server = PromptServer("promptdeck")
    server.add_folder(ensure_library(10))
    server.catalog  # noqa: B018 - loads the folder, as the first request would
    with tempfile.TemporaryFile() as answers:
        connection = StdioConnection(server, _Output(answers.fileno(), threading.RLock()))
        requests = lines(era, WARMUP + abs(count))
        cut = requests.index(b"\n", len(lines(era, WARMUP)) - 1) + 1
        warm, todo = requests[:cut], requests[cut:] if count > 0 else b""
        for data in (warm, todo):
            for start in range(0, len(data), _READ_SIZE):  # in reads of the size ``serve_stdio`` makes
                connection.feed(data[start:start + _READ_SIZE])
        connection.finish()
        answers.seek(0)
        answered = sum(b'"messages"' in line and b"topic-" in line for line in answers.read().splitlines())
    if answered != WARMUP + max(count, 0):
        raise SystemExit(f"{era}: {answered} gets answered of {WARMUP + max(count, 0)}")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    from count_http import arguments, instructions

    args = arguments("Instructions per stdio prompts/get (callgrind, in-process).", 1000, argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0

    trees = [("promptdeck", HERE.parent / "src")]
    if args.baseline:
        trees.append(("promptdeck, baseline", args.baseline.resolve()))
    counted: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="promptdeck-count-") as tmp:
        for era in ERAS:
            for label, tree in trees:
                base, more = (instructions(era, n, tree, Path(tmp), __file__) for n in (-args.requests, args.requests))
                counted[label, era] = (more - base) / args.requests
                print(f"{label:>22} {era}: {counted[label, era]:>9,.0f} instructions a get", file=sys.stderr)
    print(f"\nprompts/get over stdio, in-process stdio connection, {args.requests} gets, callgrind:")
    print("| server | " + " | ".join(ERAS) + " |\n|---|" + "---:|" * len(ERAS))
    for label, _ in trees:
        print(f"| {label} | " + " | ".join(f"{counted[label, era]:,.0f}" for era in ERAS) + " |")
    if args.baseline:
        print("| change | " + " | ".join(f"{counted[trees[0][0], era] / counted[trees[1][0], era] - 1:+.1%}"
                                          for era in ERAS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
