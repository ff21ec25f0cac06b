"""A stdio server that takes a while to start, as ``npx -y`` servers and the SDK's own do on a first run.

    python slow_start.py SECONDS -- CMD [ARGS...]

Sleeps SECONDS without reading its input (whatever the client sends waits in the pipe, as it would for a
server still loading), then becomes CMD (``os.execv``), which reads everything sent so far in order.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    seconds, sep, *command = sys.argv[1:]
    assert sep == "--" and command, "usage: slow_start.py SECONDS -- CMD ..."
    time.sleep(float(seconds))
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
