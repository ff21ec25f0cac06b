"""Prompts as tools: ``promptdeck serve --tools`` against the official SDK serving the same prompts as
tools, over stdio, side by side in one run.

    .venv/bin/python benchmarks/bench_tools.py [--prompts 16] [--calls 2000] [--rounds 3]

The SDK server is ``sdk_server.py --tools``: each prompt's render function registered with ``add_tool``
too, under the name promptdeck gives it (the server a developer would write). Both are driven by
bench_stdio's JSON-RPC client on raw pipes, at 2025-11-25. Per round, for each server:

- ``tools/list``: the median time of 50 listings of every tool (one page at this size);
- ``tools/call``: calls a second, sequential (each awaited before the next);
- ``tools/call pipelined``: calls a second with 50 in flight.

Every result is checked (no error, no isError, the argument value in the text). Medians over the
rounds; the last column is how many times faster promptdeck is.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_stdio import (
    PD,
    SDK_SERVER,
    BenchError,
    alternating_rounds,
    check_result,
    initialized,
    parse_line,
    print_side_by_side,
)
from libgen import ensure_library

IN_FLIGHT = 50


def tool_command(server: str, library: Path) -> list[str]:
    if server == PD:
        return [sys.executable, "-m", "promptdeck", "serve", str(library), "--tools", "--no-watch"]
    return [sys.executable, str(SDK_SERVER), str(library), "--tools"]


def check_call(raw: bytes, req_id: int, topic: str) -> None:
    result = check_result(raw, req_id, "tools/call")
    if result.get("isError"):
        raise BenchError(f"tools/call answered isError: {result}")
    text = "".join(block.get("text", "") for block in result.get("content", []))
    if topic not in text:
        raise BenchError(f"tools/call result lacks the argument value {topic!r}: {text[:200]!r}")


async def measure(server: str, library: Path, calls: int, stderr_dir: Path) -> dict[str, float]:
    async with initialized(server, library, stderr_dir, tool_command(server, library)) as conn:
        listed = await conn.request("tools/list", {})
        names = [tool["name"] for tool in listed["tools"]]
        if not names:
            raise BenchError(f"{server}: tools/list is empty")
        lists = []
        for _ in range(50):
            start = time.perf_counter()
            await conn.request("tools/list", {})
            lists.append(time.perf_counter() - start)
        # Sequential calls: each waits for its answer.
        start = time.perf_counter()
        for i in range(calls):
            topic = f"topic-{i}"
            req_id = conn.new_id()
            conn.write(conn.encode("tools/call", {"name": names[i % len(names)], "arguments": {"topic": topic}},
                                   req_id))
            check_call(await conn.read_response(), req_id, topic)
        sequential = calls / (time.perf_counter() - start)
        # Pipelined: IN_FLIGHT requests written, then their answers read, in waves.
        start = time.perf_counter()
        done = 0
        while done < calls:
            wave = [(conn.new_id(), f"wave-{done + k}") for k in range(min(IN_FLIGHT, calls - done))]
            for k, (req_id, topic) in enumerate(wave):
                conn.write(conn.encode("tools/call", {"name": names[(done + k) % len(names)],
                                                      "arguments": {"topic": topic}}, req_id))
            await conn.drain()
            answers = {parse_line(raw)["id"]: raw for raw in await conn.read_responses(len(wave))}
            for req_id, topic in wave:
                check_call(answers[req_id], req_id, topic)
            done += len(wave)
        pipelined = calls / (time.perf_counter() - start)
        return {"list_ms": statistics.median(lists) * 1000, "calls_s": sequential, "pipelined_s": pipelined}


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=16, help="library size (promptdeck's default switch-over)")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    library = ensure_library(args.prompts)
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as scratch:
        results = await alternating_rounds(args.rounds,
                                           lambda server: measure(server, library, args.calls, Path(scratch)))
    rows = (("tools/list (ms, lower is better)", "list_ms", False),
            ("tools/call sequential (calls/s)", "calls_s", True),
            (f"tools/call, {IN_FLIGHT} in flight (calls/s)", "pipelined_s", True))
    print(f"{args.prompts} prompts as tools, {args.calls} calls, median of {args.rounds} rounds, stdio, 2025-11-25")
    print_side_by_side(results, rows)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
