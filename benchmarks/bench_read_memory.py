"""The server's memory under many reads of a large resource at once: ``promptdeck serve --http`` on a library with
one 10 MiB material file, ``--reads`` clients reading it together as one principal, and the server's peak
resident memory (``VmHWM``) before and after.

    .venv/bin/python benchmarks/bench_read_memory.py [--reads 24 96]

Prints, per count, the reads refused by the read budget (-32600 with ``retryAfter``: docs/resources.md,
Bounds) and the peak memory. Each count runs against a server of its own, so each peak is its own. Linux only
(``/proc``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench_http import MODES, PD, ServerProc

MIB = 1024 * 1024
SIZE = 10 * MIB  # the largest file served as a resource (paths.MAX_EMBED_BYTES)
PROMPT = "---\narguments:\n  - {name: f, type: path, pattern: '_m/.*'}\n---\nuser: {resource: \"{{ f }}\"}\n"
READ = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "promptdeck:///_m/big.txt"}}
HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


def peak(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"no VmHWM for process {pid}")


def measure(library: Path, reads: int) -> tuple[int, int, int]:
    """(refused, peak before, peak after) for ``reads`` reads at once against a fresh server: bench_http's
    ``ServerProc`` in its stateless JSON mode."""
    server = ServerProc(PD, MODES["stateless"], library, library)
    asyncio.run(server.start(60))
    endpoint = f"http://127.0.0.1:{server.port}/mcp"
    try:
        before = peak(server.pid)

        def read(_: int) -> bool:
            answer = httpx.post(endpoint, json=READ, headers=HEADERS, timeout=300).json()
            if "error" in answer:
                return True
            if len(answer["result"]["contents"][0]["text"]) != SIZE:
                raise SystemExit("a read came back short")
            return False

        with ThreadPoolExecutor(reads) as pool:
            refused = sum(pool.map(read, range(reads)))
        return refused, before, peak(server.pid)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, nargs="+", default=[24, 96])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        library = Path(folder)
        (library / "peek.md").write_text(PROMPT)
        (library / "_m").mkdir()
        (library / "_m/big.txt").write_bytes(b"x" * SIZE)
        print(f"{'reads':>6} {'refused':>8} {'peak before':>12} {'peak after':>11}")
        for reads in options.reads:
            refused, before, after = measure(library, reads)
            print(f"{reads:>6} {refused:>8} {before / MIB:>9.0f} MiB {after / MIB:>7.0f} MiB")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
