"""``publish`` and ``pull`` of a 10,000-prompt library in a git work tree, as a team's CI and its people run them
(issue 40): the real ``promptdeck`` commands, spawn to exit, wall clock.

    python benchmarks/bench_publish.py [--prompts 10000] [--changed 100] [--store URL] [--repeats 3]

A generated library (``libgen.py``) is copied into a fresh git repository and published to a label of a fresh
SQLite store (or ``--store``: an empty store, e.g. a PostgreSQL database). Then, each the median of
``--repeats`` runs:

1. **publish, first**: the whole library into the empty store, with its label;
2. **publish, unchanged**: the same folder again (the base checked, nothing recorded);
3. **publish, N changed**: ``--changed`` prompts edited and committed;
4. **pull, into an empty folder**: every file written;
   beside it, ``export --store`` of the label into an empty folder (every file written, nothing compared);
5. **pull, nothing changed**: the folder as the label has it;
6. **pull, N changed in the store**: after another folder published ``--changed`` edits.

Figures go to docs/performance.md with this command. The machine has two cores: run nothing else.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from libgen import ensure_library

PROMPTDECK = [sys.executable, "-m", "promptdeck"]
_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com"}


def run(*args: str, cwd: Path | None = None) -> float:
    """Run a promptdeck command to its end; its wall-clock seconds (a failure stops the benchmark)."""
    start = time.perf_counter()
    done = subprocess.run([*PROMPTDECK, *args], cwd=cwd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"promptdeck {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, env=_GIT_ENV, check=True, capture_output=True)


def edit(folder: Path, count: int, mark: str) -> None:
    """Append a line to the first ``count`` prompt files of ``folder``."""
    files = sorted(p for p in folder.rglob("*.md") if ".git" not in p.parts)[:count]
    for path in files:
        with path.open("a") as out:
            out.write(f"\n{mark}\n")


def median(measure: Callable[[int], float], repeats: int) -> float:
    return statistics.median(measure(i) for i in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--store", default=None, help="an empty store to use (default: a fresh SQLite one)")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    library = ensure_library(options.prompts)
    n, changed = options.prompts, options.changed
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="promptdeck-bench-publish-") as scratch:
        root = Path(scratch)

        def fresh(i: int) -> tuple[Path, str]:
            repo = root / f"repo{i}"
            shutil.copytree(library, repo, ignore=shutil.ignore_patterns(".*"))
            (repo / ".gitignore").write_text(".promptdeck-base\n")
            git(repo, "init", "-q", "-b", "main")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "library")
            return repo, options.store if options.store and i == 0 else f"sqlite:///{root}/store{i}.db"

        stores = []
        firsts = []
        for i in range(options.repeats if options.store is None else 1):
            repo, url = fresh(i)
            firsts.append(run("publish", str(repo), "--store", url, "--label", "production"))
            stores.append((repo, url))
        rows.append((f"publish, first: {n:,} prompts into an empty store", statistics.median(firsts)))
        repo, url = stores[0]
        rows.append((f"publish, unchanged ({n:,})", median(lambda _: run(
            "publish", str(repo), "--store", url, "--label", "production"), options.repeats)))

        def publish_changed(i: int) -> float:
            edit(repo, changed, f"edit {i}")
            git(repo, "commit", "-q", "-am", f"edit {i}")
            return run("publish", str(repo), "--store", url, "--label", "production")

        rows.append((f"publish, {changed:,} changed (of {n:,})", median(publish_changed, options.repeats)))
        rows.append((f"pull into an empty folder ({n:,} files written)", median(lambda i: run(
            "pull", str(root / f"empty{i}"), "--store", url, "--label", "production"), options.repeats)))
        rows.append((f"  beside it: export --store of the label ({n:,} files written)", median(lambda i: run(
            "export", str(root / f"exported{i}"), "--store", url, "--label", "production"), options.repeats)))
        rows.append((f"pull, nothing changed ({n:,})", median(lambda _: run(
            "pull", str(repo), "--store", url, "--label", "production"), options.repeats)))
        other = root / "empty0"

        def pull_changed(i: int) -> float:
            edit(other, changed, f"elsewhere {i}")
            run("publish", str(other), "--store", url, "--label", "production")
            return run("pull", str(repo), "--store", url, "--label", "production")

        rows.append((f"pull, {changed:,} changed in the store (of {n:,})", median(pull_changed, options.repeats)))
    width = max(len(what) for what, _ in rows)
    print(f"{'measure':<{width}}  seconds (median of {options.repeats})")
    for what, took in rows:
        print(f"{what:<{width}}  {took:8.2f}")


if __name__ == "__main__":
    main()
