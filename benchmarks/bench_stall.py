"""How long other requests wait while a server parses and compiles a large stored template.

A store holding one valid template of about 980 KB is published with the real CLI, then served over HTTP.
While ``/healthz`` is polled every 10 ms by one client, another sends the heavy request once:

- ``get``: the first ``prompts/get`` of the prompt (its parse and compile);
- ``check``: ``POST /api/store/check`` of the same text (the web editor's check).

Printed: the heavy request's time and the worst ``/healthz`` wait. Before the parse left the event loop a
first get held ``/healthz`` for the whole parse (seconds); before compiling left the GIL, about a second.

    .venv/bin/python benchmarks/bench_stall.py [get|check ...]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.http_server import free_port, stop  # noqa: E402

HEAD = "---\ndescription: Big\narguments:\n  - name: topic\n    required: true\n---\n"
UNIT = "{% if topic %}Line about {{ topic | upper }}.{% endif %}\n"
TOKEN = "bench-token-0123456789"
HEADERS = {"authorization": f"Bearer {TOKEN}", "accept": "application/json, text/event-stream",
           "content-type": "application/json", "mcp-protocol-version": "2025-06-18"}


def measure(what: str, folder: Path) -> str:
    text = HEAD + UNIT * ((980_000 - len(HEAD)) // len(UNIT))
    (folder / "lib").mkdir(exist_ok=True)
    (folder / "lib" / "big.md").write_text(text)
    store = f"sqlite:///{folder / f'{what}.db'}"
    subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder / "lib"), "--store", store,
                    "--label", "production"], check=True, capture_output=True)
    (folder / "tokens").write_text(f"bench:{TOKEN} store:write\n")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", "--store", store, "--label", "production",
                               "--http", f"127.0.0.1:{port}", "--token-file", str(folder / "tokens")],
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        time.sleep(1.5)  # the label's files are written by a background thread: let it finish
        worst, done = [0.0], threading.Event()

        def poll() -> None:
            with httpx.Client() as client:
                while not done.is_set():
                    start = time.perf_counter()
                    client.get(f"{base}/healthz", timeout=120)
                    worst[0] = max(worst[0], time.perf_counter() - start)
                    time.sleep(0.01)

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(0.3)
        with httpx.Client(headers=HEADERS, timeout=120) as client:
            if what == "get":
                init = client.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}})
                client.headers["mcp-session-id"] = init.headers["mcp-session-id"]
                start = time.perf_counter()
                answer = client.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                                                          "params": {"name": "big", "arguments": {"topic": "x"}}})
            else:
                start = time.perf_counter()
                answer = client.post(f"{base}/api/store/check", json={"prompt": "big", "text": text})
            took = time.perf_counter() - start
        time.sleep(0.3)
        done.set()
        poller.join()
        return f"{what:6} status {answer.status_code}  took {took:5.2f} s  worst /healthz {worst[0] * 1000:6.0f} ms"
    finally:
        stop(server)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for what in sys.argv[1:] or ["get", "check"]:
            print(measure(what, Path(folder)))


if __name__ == "__main__":
    main()
