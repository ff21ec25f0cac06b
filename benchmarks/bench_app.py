"""``promptdeck.Prompts`` in an application, side by side with its peers, in one run.

    .venv/bin/python benchmarks/bench_app.py [--rounds 5] [--quick] [--renders N] [--json FILE] [--strict]
                                             [--baseline SRC] [--layers]

In-process (no network per render), a plain text prompt of a generated library (``libgen.py``: a
required ``topic``, an optional ``tone``, a two-line body using both):

- ``Prompts(folder).render`` and ``Prompts(sqlite store).render``, warm;
- the Langfuse SDK's warm fetch-and-compile, the peer's own hot path: ``get_prompt`` finding the prompt in
  its ``PromptCache`` (key made, item read, expiry checked) and ``TextPromptClient.compile(**vars)``. Made
  offline from a ``Prompt_Text`` holding the same text (Langfuse's ``{{var}}`` syntax); no server is
  involved (none can run here), so this is Langfuse's floor, not its network path. Skipped when the
  ``langfuse`` package is not installed (it is not in any extra: ``pip install langfuse`` to run it).

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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def langfuse_render(folder: Path, name: str) -> Callable[[], str] | None:
    """Langfuse's warm get_prompt + compile of the same prompt text, or None without langfuse."""
    try:
        from langfuse._utils.prompt_cache import PromptCache
        from langfuse.api.prompts.types.prompt import Prompt_Text
        from langfuse.model import TextPromptClient
    except ImportError:
        return None
    body = (folder / f"{name}.md").read_text().split("---\n", 2)[2]
    cache = PromptCache()
    prompt = TextPromptClient(Prompt_Text(prompt=body.replace("{{ ", "{{").replace(" }}", "}}"), name=name, version=1,
                                          config={}, labels=["production"], tags=[]))
    cache.set(PromptCache.generate_cache_key(name, version=None, label="production"), prompt, 60)

    def render() -> str:
        item = cache.get(PromptCache.generate_cache_key(name, version=None, label="production"))
        assert item is not None and not item.is_expired()
        compiled: str = item.value.compile(topic=TOPIC, tone=TONE)
        return compiled

    return render


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
    args = parser.parse_args()
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
    for mode in ("render", "arender"):
        if ratios[f"remote {mode} vs SDK"] < 4:
            missed.append(f"remote {mode} only {ratios[f'remote {mode} vs SDK']:.2f}x the SDK client's")
    for miss in missed:
        print(f"target missed: {miss}")
    if args.json is not None:
        args.json.write_text(json.dumps({"samples_s": samples, "cpu_s": cpu, "medians_us": medians, "ratios": ratios},
                                        indent=1))
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
