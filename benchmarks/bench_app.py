"""``promptdeck.Prompts`` in an application, side by side with its peers, in one run.

    .venv/bin/python benchmarks/bench_app.py [--rounds 5] [--quick] [--renders N] [--json FILE] [--strict]
                                             [--baseline SRC] [--layers]

In-process (no network per render), a plain text prompt of a generated library (``libgen.py``: a
required ``topic``, an optional ``tone``, a two-line body using both):

- ``Prompts(folder).render`` and ``Prompts(sqlite store).render``, warm;
- the Langfuse SDK's warm ``Langfuse.get_prompt(name).compile(**vars)``, the peer's own hot path: its client
  fetches the prompt once from its prompt API (served here by a small fake on 127.0.0.1 holding the same
  text in Langfuse's ``{{var}}`` syntax: ``GET /api/public/v2/prompts/NAME``), then finds it in its
  ``PromptCache`` on every call (key made, item read, expiry checked) and compiles it. Tracing off
  (``tracing_enabled=False``): nothing is sent. Skipped when the ``langfuse`` package is not installed (the dev
  extra ``make .venv`` installs pins it, for the importers' tests).

``--count`` also counts, under valgrind's callgrind, the instructions of one in-process render of each (a
run of N renders minus a run of none, after the same warm-up, divided by N, as count_http.py does): figures
that do not move with the machine's load.

Remote, one ``promptdeck serve --http`` process on the same library:

- ``Prompts(url).render`` (sync, from the main thread) and ``await Prompts(url).arender`` (on the caller's
  loop), each in a process of its own (``remote_side``), which also reports its CPU time per render, against
- the official MCP SDK's client: ``ClientSession.get_prompt`` over ``streamable_http_client``,
  sequential on its own event loop;
- with ``--baseline SRC``, the same two from another source tree (an older commit's ``git archive``, say):
  before and after in one run, the ratio printed.

Rounds alternate who goes first; the table shows medians of per-render times over rounds, and ratios.
Every result is checked (the topic and tone sent appear in the text).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench_http import HOST, MODES, PD, ServerProc
from libgen import ensure_library, prompt_names

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if (REPO / "src" / "promptdeck").is_dir():
    sys.path.insert(0, str(REPO / "src"))  # benchmark the working tree, installed or not
from promptdeck import Prompts  # noqa: E402 - after the path is set

LIBRARY = 1_000
TOPIC, TONE = "caching", "formal"


def per_call(call: Callable[[], Any], renders: int) -> float:
    """Seconds per call of ``call`` over ``renders`` calls (after 200 untimed ones)."""
    for _ in range(200):
        call()
    started = time.perf_counter()
    for _ in range(renders):
        call()
    return (time.perf_counter() - started) / renders


def check(text: str, who: str) -> None:
    if TOPIC not in text or TONE not in text:
        raise SystemExit(f"{who}: the render lacks the topic or tone sent: {text[:200]!r}")


def fake_langfuse(folder: Path) -> ThreadingHTTPServer:
    """Langfuse's prompt API on 127.0.0.1, enough for its SDK's ``get_prompt``: each library file's body as a
    text prompt in Langfuse's ``{{var}}`` syntax, labelled production. Its address: ``server_address``."""

    class Api(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            name = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
            file = folder / f"{name}.md"
            if not self.path.startswith("/api/public/v2/prompts/") or not file.is_file():
                self.send_error(404)
                return
            text = file.read_text().split("---\n", 2)[2].replace("{{ ", "{{").replace(" }}", "}}")
            body = json.dumps({"type": "text", "name": name, "version": 1, "prompt": text, "config": {},
                               "labels": ["production"], "tags": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, name="fake-langfuse", daemon=True).start()
    return server


def langfuse_render(folder: Path, name: str) -> Callable[[], str] | None:
    """Langfuse's warm ``get_prompt(name).compile(...)`` against ``fake_langfuse``, or None without langfuse."""
    try:
        from langfuse import Langfuse
    except ImportError:
        return None
    api = fake_langfuse(folder)
    client = Langfuse(public_key="pk-lf-bench", secret_key="sk-lf-bench", tracing_enabled=False,
                      base_url=f"http://{api.server_address[0]}:{api.server_address[1]}")

    def render() -> str:
        compiled: str = client.get_prompt(name).compile(topic=TOPIC, tone=TONE)
        return compiled

    render()  # the one fetch; every later call is answered from its cache
    return render


def count_child(side: str, renders: int) -> None:
    """The counted process of ``--count``: one side's warm-up, then ``renders`` renders (none when negative)."""
    folder = ensure_library(LIBRARY)
    name = prompt_names(LIBRARY)[7]
    import langfuse  # noqa: F401 - both sides run with it (and so OpenTelemetry) imported, as in the timed run

    if side == "langfuse":
        found = langfuse_render(folder, name)
        assert found is not None
        call = found
    else:
        prompts = Prompts(str(folder), watch=False)

        def call() -> str:
            return prompts.render(name, topic=TOPIC, tone=TONE).text()
    for _ in range(2_000):
        check(call(), side)
    for _ in range(max(renders, 0)):
        call()


def count(renders: int, work: Path) -> dict[str, float]:
    """Instructions per warm in-process render of each side, counted by callgrind (as count_http.py)."""
    counted: dict[str, float] = {}
    for side in ("promptdeck", "langfuse"):
        both = []
        for n in (-renders, renders):
            out = work / f"{side}-{n}.callgrind"
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
                            __file__, "--count-child", side, str(n)], check=True, capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(REPO / "src")})
            both.append(next(int(line.split()[1]) for line in out.read_text(errors="replace").splitlines()
                             if line.startswith(("summary:", "totals:"))))
        counted[side] = (both[1] - both[0]) / renders
        print(f"{side}: {counted[side]:,.0f} instructions a render", file=sys.stderr)
    return counted


def publish(folder: Path, url: str) -> None:
    subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url, "--label",
                    "production"], check=True, capture_output=True, timeout=600,
                   env={"PYTHONPATH": str(REPO / "src")})


def start_server(folder: Path, log_dir: Path) -> tuple[ServerProc, str]:
    """``promptdeck serve --http`` on the library (stateful, as a legacy client finds it); its MCP URL."""
    server = ServerProc(PD, MODES["stateful"], folder, log_dir)
    asyncio.run(server.start(60))
    return server, f"http://{HOST}:{server.port}/mcp"


async def sdk_per_call(url: str, name: str, renders: int) -> float:
    async with httpx2.AsyncClient(timeout=30) as http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(50):
                await session.get_prompt(name, {"topic": TOPIC, "tone": TONE})
            started = time.perf_counter()
            for _ in range(renders):
                got = await session.get_prompt(name, {"topic": TOPIC, "tone": TONE})
            took = (time.perf_counter() - started) / renders
            check(got.messages[0].content.text, "SDK")  # type: ignore[union-attr]
            return took


#: One side of the remote comparison, run in a process of its own with a given tree's promptdeck on the path:
#: prints the seconds per render, the process's CPU seconds per render, and the last render's text.
REMOTE_SIDE = """
import asyncio, json, sys, time
from promptdeck import Prompts
url, name, renders, mode, topic, tone = sys.argv[1:]
renders = int(renders)


def timed(render):
    for _ in range(200):
        render()
    clock, cpu = time.perf_counter(), time.process_time()
    for _ in range(renders):
        last = render()
    return time.perf_counter() - clock, time.process_time() - cpu, last


async def atimed(render):
    for _ in range(200):
        await render()
    clock, cpu = time.perf_counter(), time.process_time()
    for _ in range(renders):
        last = await render()
    return time.perf_counter() - clock, time.process_time() - cpu, last


async def layer():
    # What a render costs below Prompts: promptdeck's Client, and a bare aiohttp POST of the same request.
    if mode == "client":
        from promptdeck import connect
        async with connect(url) as client:
            took, cpu, last = await atimed(lambda: client.get_prompt(name, topic=topic, tone=tone))
        return took, cpu, last.messages[0].content.text
    import aiohttp
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
        "name": name, "arguments": {"topic": topic, "tone": tone}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}}}).encode()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/get", "mcp-name": name}
    async with aiohttp.ClientSession() as http:
        async def post():
            async with http.post(url, data=body, headers=headers) as response:
                return json.loads(await response.read())
        took, cpu, last = await atimed(post)
    return took, cpu, last["result"]["messages"][0]["content"]["text"]


if mode in ("client", "aiohttp"):
    took, cpu, text = asyncio.run(layer())
else:
    with Prompts(url) as prompts:
        if mode == "render":
            took, cpu, last = timed(lambda: prompts.render(name, topic=topic, tone=tone))
        else:
            took, cpu, last = asyncio.run(atimed(lambda: prompts.arender(name, topic=topic, tone=tone)))
        text = last.text()
print(json.dumps([took / renders, cpu / renders, text]))
"""


def remote_side(tree: Path, url: str, name: str, renders: int, mode: str) -> tuple[float, float]:
    """Seconds and client CPU seconds per ``Prompts(url).render`` (``mode`` "render") or ``.arender`` of the
    promptdeck in ``tree``, in a process of its own."""
    done = subprocess.run([sys.executable, "-c", REMOTE_SIDE, url, name, str(renders), mode, TOPIC, TONE],
                          capture_output=True, text=True, timeout=600, env={"PYTHONPATH": str(tree / "src")})
    if done.returncode != 0:
        raise SystemExit(f"Prompts(url).{mode} from {tree} failed: {done.stderr[-2000:]}")
    took, cpu, text = json.loads(done.stdout.strip().splitlines()[-1])
    check(text, f"{mode} ({tree})")
    return took, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--renders", type=int, default=20_000, help="in-process renders per round")
    parser.add_argument("--remote", type=int, default=500, help="remote renders per round")
    parser.add_argument("--quick", action="store_true", help="1 round, fewer renders")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--baseline", type=Path, help="another promptdeck tree to measure Prompts(url) from too")
    parser.add_argument("--layers", action="store_true",
                        help="time below Prompts too: Client.get_prompt, a bare aiohttp POST")
    parser.add_argument("--count", type=int, metavar="N", help="also count instructions of N in-process renders "
                        "of each side under callgrind (needs valgrind and langfuse)")
    parser.add_argument("--count-child", nargs=2, metavar=("SIDE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_child:
        count_child(args.count_child[0], int(args.count_child[1]))
        return 0
    if args.quick:
        args.rounds, args.renders, args.remote = 1, 5_000, 200
    folder = ensure_library(LIBRARY)
    name = prompt_names(LIBRARY)[7]
    samples: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    trees = {"": REPO, **({f", {args.baseline}": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as work:
        store = f"sqlite:///{work}/prompts.db"
        publish(folder, store)
        server, url = start_server(folder, Path(work))
        try:
            with Prompts(str(folder), watch=False) as local, Prompts(store) as stored:
                sides: dict[str, Callable[[], float]] = {}
                for label, prompts in (("folder", local), ("store", stored)):
                    check(prompts.render(name, topic=TOPIC, tone=TONE).text(), label)
                    sides[f"Prompts({label}).render"] = \
                        lambda p=prompts: per_call(lambda: p.render(name, topic=TOPIC, tone=TONE), args.renders)
                langfuse = langfuse_render(folder, name)
                if langfuse is not None:
                    check(langfuse(), "langfuse")
                    sides["langfuse get_prompt+compile"] = lambda: per_call(langfuse, args.renders)
                for suffix, tree in trees.items():
                    for mode in ("render", "arender"):
                        def remote(side: str = f"Prompts(url).{mode}{suffix}", tree: Path = tree,
                                   mode: str = mode) -> float:
                            took, spent = remote_side(tree, url, name, args.remote, mode)
                            cpu.setdefault(side, []).append(spent)
                            return took

                        sides[f"Prompts(url).{mode}{suffix}"] = remote
                for mode, side in (("client", "Client.get_prompt"), ("aiohttp", "aiohttp POST")) if args.layers else ():
                    def below(side: str = side, mode: str = mode) -> float:
                        took, spent = remote_side(REPO, url, name, args.remote, mode)
                        cpu.setdefault(side, []).append(spent)
                        return took

                    sides[side] = below
                sides["SDK ClientSession.get_prompt"] = lambda: asyncio.run(sdk_per_call(url, name, args.remote))
                for round_ in range(args.rounds):
                    order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
                    for side in order:
                        samples.setdefault(side, []).append(sides[side]())
                    print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            server.stop()
    medians = {side: statistics.median(found) * 1e6 for side, found in samples.items()}
    print(f"\nPrompts in an application: {name} of a {LIBRARY:,}-prompt library, medians of {args.rounds} rounds\n")
    print("| render | µs per render | client CPU µs per render |")
    print("|---|---:|---:|")
    for side, micro in medians.items():
        spent = f"{statistics.median(cpu[side]) * 1e6:,.1f}" if side in cpu else ""
        print(f"| {side} | {micro:,.1f} | {spent} |")
    ratios: dict[str, float] = {}
    if "langfuse get_prompt+compile" in medians:
        for label in ("folder", "store"):
            ours = medians[f"Prompts({label}).render"]
            ratios[f"{label} vs langfuse"] = medians["langfuse get_prompt+compile"] / ours
    sdk = medians["SDK ClientSession.get_prompt"]
    for suffix in trees:
        for mode in ("render", "arender"):
            ratios[f"remote {mode}{suffix} vs SDK"] = sdk / medians[f"Prompts(url).{mode}{suffix}"]
            if suffix:
                ratios[f"remote {mode}: this tree vs{suffix[1:]}"] = \
                    medians[f"Prompts(url).{mode}{suffix}"] / medians[f"Prompts(url).{mode}"]
    print()
    for what, ratio in ratios.items():
        print(f"{what}: {ratio:.2f}x (how many times faster Prompts is)")
    missed = [f"in-process {label} render {medians[f'Prompts({label}).render']:.1f} µs >= 50 µs"
              for label in ("folder", "store") if medians[f"Prompts({label}).render"] >= 50]
    if ratios.get("folder vs langfuse", 1.0) < 1:
        missed.append(f"in-process folder render only {ratios['folder vs langfuse']:.2f}x Langfuse's cached compile")
    for mode in ("render", "arender"):
        if ratios[f"remote {mode} vs SDK"] < 4:
            missed.append(f"remote {mode} only {ratios[f'remote {mode} vs SDK']:.2f}x the SDK client's")
    counted: dict[str, float] = {}
    if args.count:
        if shutil.which("valgrind") is None:
            raise SystemExit("--count needs valgrind")
        with tempfile.TemporaryDirectory() as work:
            counted = count(args.count, Path(work))
        print(f"\ninstructions a warm in-process render (callgrind, {args.count:,} renders): Prompts(folder) "
              f"{counted['promptdeck']:,.0f}, Langfuse {counted['langfuse']:,.0f} "
              f"({counted['langfuse'] / counted['promptdeck']:.2f}x)")
    for miss in missed:
        print(f"target missed: {miss}")
    if args.json is not None:
        args.json.write_text(json.dumps({"samples_s": samples, "cpu_s": cpu, "medians_us": medians, "ratios": ratios,
                                         "instructions": counted}, indent=1))
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
