"""promptdeck's stdio start-up against a stdlib floor server, started by the same interpreter in one run.

    .venv/bin/python benchmarks/bench_start.py [--repeats 30] [--small 10] [--json FILE] [--baseline SRC]

Two figures an MCP client feels every time it launches a server, each from the spawn of the process:

- cold start: ``initialize`` answered;
- first get: then ``notifications/initialized`` and a ``prompts/get`` answered.

The floor is ``floor_stdio.py``: ~60 lines of stdlib Python (``json``, ``re``) that read the same
library and answer the same requests, no more; what is left is the interpreter's own start and a
little work. promptdeck runs as bench_stdio.py runs it (``python -m promptdeck serve DIR``, default
options, the working tree's ``src`` on ``PYTHONPATH``). Starts alternate (floor, promptdeck, promptdeck,
floor, ...) so drift on a shared machine hits both; the table gives medians and promptdeck / floor.
The target of issue 29: promptdeck within 2.5x of the floor on both. RSS is read after the first get.
Every answer is checked (the right id, a result, the argument sent in the rendered text).
``--baseline SRC`` starts promptdeck from another source tree as well (a worktree of an older commit),
in the same alternation, for a before and after in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_stdio import PD, BenchError, RpcProcess, check_result, vm_rss_bytes
from libgen import ensure_library, prompt_names

HERE = Path(__file__).resolve().parent
FLOOR = "floor"
BASELINE = "baseline"
LABELS = {FLOOR: "stdlib floor", PD: "promptdeck", BASELINE: "baseline"}
TARGET = 2.5
#: --serve-option: more options for promptdeck serve (e.g. --no-watch, to see what the watcher costs)
EXTRA: list[str] = []
#: --baseline SRC: promptdeck from another source tree (an older commit's worktree), started in the same run
BASELINE_SRC: list[str] = []


async def one_start(kind: str, library: Path, name: str, log_dir: Path) -> tuple[float, float, int]:
    """(cold start, first get, RSS after it) of one fresh server."""
    conn = RpcProcess(PD, library, log_dir)
    if kind == FLOOR:
        conn.cmd = [sys.executable, str(HERE / "floor_stdio.py"), str(library)]
    else:
        conn.cmd += EXTRA
    if kind == BASELINE:
        conn.env = {**conn.env, "PYTHONPATH": BASELINE_SRC[0]}
    try:
        async with asyncio.timeout(30):
            await conn.spawn()
            await conn.initialize()
            cold = time.perf_counter() - conn.t_spawn
            conn.initialized()
            req_id = conn.new_id()
            conn.write(conn.encode("prompts/get", {"name": name, "arguments": {"topic": "first-get"}}, req_id))
            raw = await conn.read_response()
            first = time.perf_counter() - conn.t_spawn
            rss = vm_rss_bytes(conn.pid) or 0
        result = check_result(raw, req_id, "prompts/get")
        if "first-get" not in json.dumps(result):
            raise BenchError(f"{LABELS[kind]}: the rendered prompt lacks the argument sent: {result}")
    except (BenchError, TimeoutError) as exc:
        raise BenchError(f"{LABELS[kind]}: {exc}\n{conn.stderr_tail()}") from exc
    finally:
        await conn.close()
    conn.discard_stderr()
    return cold, first, rss


async def run(args: argparse.Namespace) -> dict[str, list[tuple[float, float, int]]]:
    library = ensure_library(args.small)
    name = prompt_names(args.small)[0]
    kinds = (FLOOR, PD, BASELINE) if BASELINE_SRC else (FLOOR, PD)
    samples: dict[str, list[tuple[float, float, int]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="promptdeck-bench-start-") as tmp:
        for kind in kinds:  # untimed: bytecode and file caches
            await one_start(kind, library, name, Path(tmp))
        for i in range(args.repeats):
            order = kinds if i % 2 == 0 else kinds[::-1]
            for kind in order:
                samples[kind].append(await one_start(kind, library, name, Path(tmp)))
    return samples


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="promptdeck's stdio start-up against a stdlib floor server.")
    p.add_argument("--repeats", type=int, default=30, help="starts of each server (default 30)")
    p.add_argument("--small", type=int, default=10, help="prompts in the library (default 10)")
    p.add_argument("--json", type=Path, help="write every sample to this file")
    p.add_argument("--baseline", type=Path, metavar="SRC",
                   help="also start promptdeck from this src folder (an older commit's worktree): before and after")
    p.add_argument("--serve-option", action="append", default=[], metavar="OPTION",
                   help="an option for promptdeck serve, e.g. --serve-option=--no-watch (repeatable)")
    args = p.parse_args(argv)
    EXTRA[:] = args.serve_option
    if args.baseline:
        BASELINE_SRC.append(str(args.baseline.resolve()))
    try:
        samples = asyncio.run(run(args))
    except BenchError as exc:
        print(f"failed: {exc}", file=sys.stderr)
        return 1
    med = {k: [statistics.median(s[i] for s in v) for i in range(3)] for k, v in samples.items()}
    print(f"stdio start-up, {args.small} prompts, medians of {args.repeats} alternating starts ({sys.executable})")
    base = f" {'baseline':>12} {'ratio':>7}" if BASELINE in med else ""
    print(f"{'':32} {'stdlib floor':>12} {'promptdeck':>12} {'ratio':>7}  target{' ' * 10}{base}")
    ok = True
    for i, label in ((0, "cold start: spawn -> initialize"), (1, "first prompts/get from spawn")):
        ratio = med[PD][i] / med[FLOOR][i]
        ok = ok and ratio <= TARGET
        verdict = "PASS" if ratio <= TARGET else "MISS"
        extra = f" {med[BASELINE][i] * 1e3:9.1f} ms {med[BASELINE][i] / med[FLOOR][i]:6.2f}x" if base else ""
        print(f"{label:32} {med[FLOOR][i] * 1e3:9.1f} ms {med[PD][i] * 1e3:9.1f} ms {ratio:6.2f}x  "
              f"<= {TARGET}x {verdict}{extra}")
    extra = f" {med[BASELINE][2] / 2**20:8.1f} MiB {med[BASELINE][2] / med[FLOOR][2]:6.2f}x" if base else ""
    print(f"{'RSS after the first get':32} {med[FLOOR][2] / 2**20:8.1f} MiB {med[PD][2] / 2**20:8.1f} MiB "
          f"{med[PD][2] / med[FLOOR][2]:6.2f}x{' ' * 17}{extra}")
    if args.json:
        args.json.write_text(json.dumps({k: [list(s) for s in v] for k, v in samples.items()}, indent=1))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
