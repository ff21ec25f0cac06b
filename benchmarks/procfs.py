"""Processes as ``/proc`` shows them, for the benchmarks that measure a server's own processes (bench_workers.py,
bench_replicas.py): who is whose child, and the CPU time and memory they used."""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> tuple[str, list[str]]:
    """(command name, the fields after it) of ``/proc/PID/stat``: the name may hold spaces and parentheses."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def processes() -> dict[int, tuple[int, str]]:
    """{pid: (parent pid, command name)} of every process."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                name, rest = _stat(entry.name)
            except OSError:  # gone since the listing
                continue
            found[int(entry.name)] = (int(rest[1]), name)
    return found


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    return [child for child, (parent, _) in processes().items() if parent == pid]


def tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    table = processes()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += [child for child, (parent, _) in table.items() if parent == pid]
    return found


def cpu_ticks(pid: int) -> int:
    """User and system CPU time ``pid`` has used, in clock ticks (OSError once it has gone)."""
    fields = _stat(pid)[1]
    return int(fields[11]) + int(fields[12])


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds the processes still running among ``pids`` have used."""
    total = 0
    for pid in pids:
        try:
            total += cpu_ticks(pid)
        except OSError:
            continue
    return total / TICKS
