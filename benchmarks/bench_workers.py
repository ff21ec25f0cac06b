"""``serve --http --workers 2`` against one worker, on prompts whose render costs about 1 ms of CPU.

    .venv/bin/python benchmarks/bench_workers.py [--rounds 3] [--duration 5] [--concurrency 32]

With a trivial prompt the load client and the kernel fill this machine before the server does, and
one and two workers measure the same; a prompt that costs the server about a millisecond makes the
server the bottleneck, so what a second worker adds shows. Both runs use bench_http.py's load client
and checks (stateless JSON, every answer verified), one after the other in an order that swaps every
round. Each round also says how the two workers shared the load (their CPU time), since with
SO_REUSEPORT the kernel, not the workers, spreads the connections.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

from bench_http import MODES, PD, ServerProc, run_load
from libgen import DEFAULT_TONE, TONES
from procfs import children, cpu_ticks

HERE = Path(__file__).resolve().parent
#: Empty loop iterations in each prompt: about a millisecond of rendering on this machine.
SPIN = 8000
PROMPTS = 10
TARGET = 1.6

_TEMPLATE = """\
---
description: A prompt that costs about a millisecond to render.
arguments:
  - name: topic
    required: true
  - name: tone
    enum: [{tones}]
    default: {default}
---
Write a short note about {{{{ topic }}}} in a {{{{ tone }}}} tone.{{% for i in range({spin}) %}}{{% endfor %}}
"""


def library() -> tuple[Path, list[str]]:
    folder = HERE / ".work" / f"lib-busy-{SPIN}"
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"p{i:04d}" for i in range(PROMPTS)]
    for name in names:
        (folder / f"{name}.md").write_text(_TEMPLATE.format(tones=", ".join(TONES), default=DEFAULT_TONE,
                                                             spin=SPIN))
    return folder, names


async def measure(folder: Path, names: list[str], workers: int, args: argparse.Namespace,
                  log_dir: Path) -> tuple[float, list[int]]:
    """(requests a second, CPU ticks each worker spent) for one server run."""
    mode = MODES["stateless"]
    server = ServerProc(PD, mode, folder, log_dir)
    server.cmd += ["--no-watch"] + (["--workers", str(workers)] if workers > 1 else [])
    await server.start(30)
    try:
        pids = [server.pid]
        if workers > 1:
            for _ in range(100):
                pids = children(server.pid)
                if len(pids) == workers:
                    break
                await asyncio.sleep(0.1)
        before = [cpu_ticks(pid) for pid in pids]
        result = await run_load(server.port, mode, names, args.concurrency, args.warmup, args.duration, server.pid)
        spent = [cpu_ticks(pid) - b for pid, b in zip(pids, before, strict=True)]
    finally:
        server.stop()
    if result.errors:
        raise SystemExit(f"{workers} worker(s): {result.errors} failed answers: {result.error_samples}")
    return result.rps, spent


async def main(args: argparse.Namespace) -> int:
    folder, names = library()
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as logs:
        for round_number in range(args.rounds):
            order = (1, 2) if round_number % 2 == 0 else (2, 1)
            rates: dict[int, float] = {}
            shares: list[int] = []
            for workers in order:
                rates[workers], spent = await measure(folder, names, workers, args, Path(logs))
                if workers == 2:
                    shares = spent
            ratio = rates[2] / rates[1]
            ratios.append(ratio)
            total = sum(shares) or 1
            split = " / ".join(f"{100 * s / total:.0f}%" for s in shares)
            print(f"round {round_number + 1}: 1 worker {rates[1]:,.0f} req/s, 2 workers {rates[2]:,.0f} req/s: "
                  f"{ratio:.2f}x; the two workers' CPU: {split}", flush=True)
    median = statistics.median(ratios)
    verdict = "PASS" if median >= TARGET else "MISS"
    print(f"median over {len(ratios)} round(s): {median:.2f}x (target >= {TARGET}x): {verdict}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=32)
    sys.exit(asyncio.run(main(parser.parse_args())))
