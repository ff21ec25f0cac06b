"""The files prompts send, read as resources: ``promptdeck serve`` against the official SDK serving the same
files as resources, over stdio, side by side in one run.

    .venv/bin/python benchmarks/bench_resources.py [--files 100] [--reads 2000] [--rounds 3]

The library is made for the run: ``--files`` text files of ~4 KiB and one binary file of 16 KiB in
``_material/``, and one prompt whose ``path`` argument may name any of them (so promptdeck serves them
all). The SDK server is ``sdk_server.py --resources``: each material file registered as a ``FileResource``
under the URI promptdeck gives it (the server a developer would write). Both are driven by bench_stdio's
JSON-RPC client on raw pipes, at 2025-11-25. Per round, for each server:

- ``resources/list``: the median time of 50 reads of the first page;
- ``resources/read`` of a text file: reads a second, sequential (each awaited before the next), and with
  50 in flight;
- ``resources/read`` of the binary file: reads a second, sequential.

Every answer is checked after the timed part (no error; the text, or the decoded blob, is the file's).
Medians over the rounds; the last column is how many times faster promptdeck is (target: 5x).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_stdio import (
    PD,
    SDK_SERVER,
    BenchError,
    RpcProcess,
    alternating_rounds,
    check_result,
    initialized,
    parse_line,
    print_side_by_side,
)

IN_FLIGHT = 50
TARGET = 5.0
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64


def make_library(root: Path, files: int) -> tuple[list[str], str]:
    """The library of the run: its text files' URIs and the binary file's."""
    material = root / "_material"
    material.mkdir(parents=True)
    (root / "read.md").write_text("---\narguments:\n  - {name: file, type: path, required: true}\n---\n"
                                  "user: {resource: \"{{ file }}\"}\n")
    texts = []
    for i in range(files):
        line = f"line of note {i:04d}: the quick brown fox jumps over the lazy dog, again and again.\n"
        (material / f"note-{i:04d}.txt").write_text(line * 48)
        texts.append(f"promptdeck:///_material/note-{i:04d}.txt")
    (material / "diagram.png").write_bytes(PNG)
    return texts, "promptdeck:///_material/diagram.png"


def command(server: str, library: Path) -> list[str]:
    if server == PD:
        return [sys.executable, "-m", "promptdeck", "serve", str(library), "--no-watch"]
    return [sys.executable, str(SDK_SERVER), str(library), "--resources"]


def check_read(raw: bytes, req_id: int, uri: str, library: Path) -> None:
    contents = check_result(raw, req_id, "resources/read")["contents"]
    if len(contents) != 1 or contents[0].get("uri") != uri:
        raise BenchError(f"resources/read of {uri} answered {contents!r:.200}")
    path = library / uri.removeprefix("promptdeck:///")
    if "blob" in contents[0]:
        if base64.b64decode(contents[0]["blob"]) != path.read_bytes():
            raise BenchError(f"resources/read of {uri}: the blob is not the file")
    elif contents[0].get("text") != path.read_text():
        raise BenchError(f"resources/read of {uri}: the text is not the file")


async def reads(conn: RpcProcess, uris: list[str], count: int, library: Path, in_flight: int) -> float:
    """Reads a second of ``count`` reads cycling over ``uris``, ``in_flight`` at a time; checked afterwards."""
    rate, answers = await timed_reads(conn, uris, count, in_flight)
    for req_id, uri, line in answers:
        check_read(line, req_id, uri, library)
    return rate


async def timed_reads(conn: RpcProcess, uris: list[str], count: int,
                      in_flight: int) -> tuple[float, list[tuple[int, str, bytes]]]:
    """(reads a second, (id, uri, raw answer) of each) of ``count`` reads cycling over ``uris``, ``in_flight`` at a
    time; the answers are for the caller to check, after the timed part."""
    answers: list[tuple[int, str, bytes]] = []
    start = time.perf_counter()
    done = 0
    while done < count:
        wave = [(conn.new_id(), uris[(done + k) % len(uris)]) for k in range(min(in_flight, count - done))]
        for req_id, uri in wave:
            conn.write(conn.encode("resources/read", {"uri": uri}, req_id))
        if in_flight > 1:
            await conn.drain()
            raw = {parse_line(line)["id"]: line for line in await conn.read_responses(len(wave))}
        else:
            raw = {wave[0][0]: await conn.read_response()}
        answers.extend((req_id, uri, raw[req_id]) for req_id, uri in wave)
        done += len(wave)
    return count / (time.perf_counter() - start), answers


async def measure(server: str, library: Path, texts: list[str], blob: str, count: int,
                  stderr_dir: Path) -> dict[str, float]:
    async with initialized(server, library, stderr_dir, command(server, library)) as conn:
        listed = await conn.request("resources/list", {})
        shown = {entry["uri"] for entry in listed["resources"]}
        if not shown or not shown <= {*texts, blob}:
            raise BenchError(f"{server}: resources/list shows {sorted(shown)[:5]}")
        lists = []
        for _ in range(50):
            start = time.perf_counter()
            await conn.request("resources/list", {})
            lists.append(time.perf_counter() - start)
        return {
            "list_ms": statistics.median(lists) * 1000,
            "text_s": await reads(conn, texts, count, library, 1),
            "text_flight_s": await reads(conn, texts, count, library, IN_FLIGHT),
            "blob_s": await reads(conn, [blob], count // 2, library, 1),
        }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100, help="text files of ~4 KiB in the library")
    parser.add_argument("--reads", type=int, default=2000, help="resources/read requests per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-resources-") as scratch:
        library = Path(scratch) / "library"
        texts, blob = make_library(library, args.files)
        results = await alternating_rounds(
            args.rounds, lambda server: measure(server, library, texts, blob, args.reads, Path(scratch)))
    rows = (("resources/list first page (ms, lower is better)", "list_ms", False),
            ("resources/read text, sequential (reads/s)", "text_s", True),
            (f"resources/read text, {IN_FLIGHT} in flight (reads/s)", "text_flight_s", True),
            ("resources/read 16 KiB blob, sequential (reads/s)", "blob_s", True))
    print(f"{args.files} text files + 1 binary file as resources, {args.reads} reads, median of {args.rounds} "
          f"rounds, stdio, 2025-11-25; target: {TARGET:g}x")
    print_side_by_side(results, rows)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
