"""Skills served: ``promptdeck serve`` against the official SDK serving the same skill files as resources, over
stdio, side by side in one run.

    .venv/bin/python benchmarks/bench_skills.py [--skills 1000] [--reads 2000] [--rounds 3]

The library is made for the run: ``--skills`` skills below ``skills/``, each a ``SKILL.md`` (front matter and
~1 KiB of instructions) and a ``references/guide.md`` of ~4 KiB. The SDK has no skills extension: its server
is ``sdk_server.py --skills``, every file of every skill registered as a ``FileResource`` under the URI
promptdeck gives it (``skill://NAME/PATH``), the server a developer would write with it. So its side of the
listing row is its ``resources/list`` of the same files (one page, no digests), against promptdeck's
``skills/list`` walked whole (pages of 100 skills, each entry with its front matter and every file's SHA-256
digest and size). Both are driven by bench_stdio's JSON-RPC client on raw pipes, at 2025-11-25. Per round, for
each server:

- the listing: the median of 20 full walks (promptdeck: ``skills/list``, every page; SDK: ``resources/list``),
  and promptdeck's first ``skills/list`` page alone;
- ``resources/read`` of a skill's reference file: reads a second, sequential (each awaited before the next),
  and with 50 in flight; and of ``SKILL.md`` files, sequential.

Every answer is checked after the timed part: promptdeck's listing names every skill with the right digests,
the SDK's every file; each read is the file's text. Medians over the rounds; the last column is how many
times faster promptdeck is (target: 5x).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from bench_resources import timed_reads
from bench_stdio import (
    PD,
    SDK_SERVER,
    BenchError,
    RpcProcess,
    alternating_rounds,
    check_result,
    initialized,
    print_side_by_side,
)

IN_FLIGHT = 50
WALKS = 20
TARGET = 5.0


def make_library(root: Path, count: int) -> list[str]:
    """The library of the run: ``count`` skills; their names."""
    names = []
    for i in range(count):
        name = f"skill-{i:04d}"
        folder = root / "skills" / name
        (folder / "references").mkdir(parents=True)
        body = f"Step {i}: read references/guide.md, then follow it to the letter, checking each result.\n" * 12
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill number {i}, for the benchmark; "
                                         f"use it when asked for skill {i}.\nlicense: MIT\n---\n\n{body}")
        (folder / "references/guide.md").write_text(f"guide line of skill {i}: the quick brown fox jumps.\n" * 80)
        names.append(name)
    return names


def command(server: str, library: Path) -> list[str]:
    if server == PD:
        return [sys.executable, "-m", "promptdeck", "serve", str(library), "--no-watch"]
    return [sys.executable, str(SDK_SERVER), str(library), "--skills"]


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


class _Entry(msgspec.Struct):
    uri: str


class _Page(msgspec.Struct):
    skills: list[_Entry] = []
    resources: list[_Entry] = []
    nextCursor: str | None = None  # noqa: N815 (the wire's name)


class _Reply(msgspec.Struct):
    id: int
    result: _Page


#: As bench_stdio's walks: the client decodes only what it needs (each entry's URI, the cursor) while timed,
#: with msgspec, for both servers; json.loads of every page would cost about as much as the servers' side.
_DECODE = msgspec.json.Decoder(_Reply).decode


async def walk(conn: RpcProcess, server: str) -> tuple[float, list[Any]]:
    """One whole listing (seconds, entries): promptdeck's skills/list, page by page; the SDK's resources/list.
    The pages are decoded whole, and checked, after the timed part."""
    method, field = ("skills/list", "skills") if server == PD else ("resources/list", "resources")
    raw: list[tuple[int, bytes]] = []
    cursor = None
    start = time.perf_counter()
    while True:
        req_id = conn.new_id()
        conn.write(conn.encode(method, {} if cursor is None else {"cursor": cursor}, req_id))
        line = await conn.read_response()
        raw.append((req_id, line))
        page = _DECODE(line).result
        cursor = page.nextCursor
        if cursor is None:
            elapsed = time.perf_counter() - start
            break
    entries: list[Any] = []
    for req_id, line in raw:
        entries.extend(check_result(line, req_id, method)[field])
    return elapsed, entries


def check_listing(server: str, entries: list[Any], library: Path, names: list[str]) -> None:
    if server == PD:
        if [entry["uri"] for entry in entries] != [f"skill://{name}/SKILL.md" for name in names]:
            raise BenchError(f"skills/list named {len(entries)} skills, not the {len(names)} of the library")
        for entry in entries[:: max(1, len(entries) // 50)]:
            for item in entry["resources"]:
                if item["digest"] != digest(library / "skills" / item["uri"].removeprefix("skill://")):
                    raise BenchError(f"skills/list: the digest of {item['uri']} is not the file's")
    elif len({entry["uri"] for entry in entries}) != 2 * len(names):
        raise BenchError(f"resources/list named {len(entries)} files, not the {2 * len(names)} of the skills")


async def reads(conn: RpcProcess, uris: list[str], count: int, library: Path, in_flight: int) -> float:
    """Reads a second of ``count`` reads cycling over ``uris``, ``in_flight`` at a time; checked afterwards."""
    rate, answers = await timed_reads(conn, uris, count, in_flight)
    for req_id, uri, line in answers:
        contents = check_result(line, req_id, "resources/read")["contents"]
        if len(contents) != 1 or contents[0].get("text") != (library / "skills" / uri[8:]).read_text():
            raise BenchError(f"resources/read of {uri} is not the file's text")
    return rate


async def measure(server: str, library: Path, names: list[str], count: int, stderr_dir: Path) -> dict[str, float]:
    async with initialized(server, library, stderr_dir, command(server, library)) as conn:
        _, entries = await walk(conn, server)  # warm: the first listing builds what later ones reuse
        check_listing(server, entries, library, names)
        walks = [(await walk(conn, server))[0] for _ in range(WALKS)]
        out = {"walk_ms": statistics.median(walks) * 1000}
        if server == PD:
            firsts = []
            for _ in range(WALKS):
                start = time.perf_counter()
                await conn.request("skills/list", {})
                firsts.append(time.perf_counter() - start)
            out["first_ms"] = statistics.median(firsts) * 1000
        guides = [f"skill://{name}/references/guide.md" for name in names]
        skill_mds = [f"skill://{name}/SKILL.md" for name in names]
        out["guide_s"] = await reads(conn, guides, count, library, 1)
        out["guide_flight_s"] = await reads(conn, guides, count, library, IN_FLIGHT)
        out["skill_md_s"] = await reads(conn, skill_mds, count, library, 1)
        return out


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000, help="skills in the library (two files each)")
    parser.add_argument("--reads", type=int, default=2000, help="resources/read requests per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-skills-") as scratch:
        library = Path(scratch) / "library"
        names = make_library(library, args.skills)
        results = await alternating_rounds(
            args.rounds, lambda server: measure(server, library, names, args.reads, Path(scratch)))
    rows = (("listing, whole: skills/list (PD) vs resources/list (SDK) (ms)", "walk_ms", False),
            ("resources/read reference file, sequential (reads/s)", "guide_s", True),
            (f"resources/read reference file, {IN_FLIGHT} in flight (reads/s)", "guide_flight_s", True),
            ("resources/read SKILL.md, sequential (reads/s)", "skill_md_s", True))
    print(f"{args.skills} skills (SKILL.md + references/guide.md each), {args.reads} reads, median of {args.rounds} "
          f"rounds, stdio, 2025-11-25; target: {TARGET:g}x")
    print_side_by_side(results, rows)
    first = statistics.median(r["first_ms"] for r in results[PD])
    pages = -(-args.skills // 100)
    print(f"promptdeck skills/list first page alone: {first:.2f} ms ({pages} pages of up to 100 skills in a walk; "
          f"the SDK has no skills/list, and its resources/list is one page without digests)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
