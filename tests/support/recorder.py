"""A transparent stdio proxy that records every line both ways.

    python tests/support/recorder.py LOG -- CMD [ARGS...]

Runs CMD with pipes, copies our stdin to its stdin and its stdout to ours, and
appends each line to LOG as ``> line`` (client to server) or ``< line``
(server to client). Interop tests put it between the official SDK client and
``promptdeck serve`` so every server message can be checked against the schema.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO


def _pump(src: IO[bytes], dst: IO[bytes], log: IO[bytes], mark: bytes, lock: threading.Lock) -> None:
    for line in iter(src.readline, b""):
        with lock:
            log.write(mark + line if line.endswith(b"\n") else mark + line + b"\n")
            log.flush()
        try:
            dst.write(line)
            dst.flush()
        except (BrokenPipeError, ValueError):
            break
    try:
        dst.close()
    except OSError:
        pass


def main() -> int:
    log_path, sep, *command = sys.argv[1:]
    assert sep == "--", "usage: recorder.py LOG -- CMD ..."
    lock = threading.Lock()
    with open(log_path, "ab") as log:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert child.stdin is not None and child.stdout is not None
        up = threading.Thread(target=_pump, args=(sys.stdin.buffer, child.stdin, log, b"> ", lock), daemon=True)
        down = threading.Thread(target=_pump, args=(child.stdout, sys.stdout.buffer, log, b"< ", lock))
        up.start()
        down.start()
        down.join()
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
