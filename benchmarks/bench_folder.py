"""Load a large prompt folder: time, memory and the first walk's garbage-collection pauses (issue 42 item 5).

    .venv/bin/python benchmarks/bench_folder.py --prompts 100000 [--varied] [--profile] [--store] [--baseline SRC]

Each measure runs in a fresh child process (so peak RSS is the load's own, not an earlier run's):
``FileSource(lib).load()``'s wall time, the process's peak RSS after it (``ru_maxrss``), then the longest
garbage-collection pause (``gc.callbacks``) during the first listing walk (``prompts()`` and reading every
prompt's name, description and arguments, as ``prompts/list`` does), and the time of a one-file change
(``update([path])``, as server/watch.py calls it). ``--tracemalloc`` adds the traced peak (slower);
``--profile`` prints cProfile's top functions of the load instead.

``--store`` measures the same library published to a SQLite store (``benchmarks/.work/store-N.db``, made once
with ``promptdeck publish`` and reused) in the same run: ``StoreSource(url).load()``, the RSS after it and the
first walk's longest GC pause (a stored prompt is listed from its listing entry and parsed on first use, so
its walk reads each one's ``listing()``). ``--baseline SRC`` also loads the folder with the code of another
source tree (``git archive COMMIT src | tar -x -C DIR``), alternating with this one's, for a before and after.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from libgen import ensure_library  # noqa: E402


def child(lib: str, trace: bool, profile: bool) -> dict[str, Any]:
    from promptdeck.sources.files.source import FileSource

    if trace:
        import tracemalloc

        tracemalloc.start()
    stored = lib.startswith("sqlite:")
    if stored:
        from promptdeck.sources.store.source import StoreSource

        source: Any = StoreSource(lib, "production", skills=False)
    else:
        source = FileSource(lib)
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
    start = time.perf_counter()
    errors = source.load()
    load_s = time.perf_counter() - start
    if profile:
        prof.disable()
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    peak = tracemalloc.get_traced_memory()[1] if trace else None
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pauses: list[float] = []
    began: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        elif began:
            pauses.append(time.perf_counter() - began.pop())

    gc.callbacks.append(on_gc)
    start = time.perf_counter()
    if stored:
        listed = [(p.name, p.listing().get("description"), [a["name"] for a in p.listing().get("arguments", ())])
                  for p in source.prompts()]
    else:
        listed = [(p.name, p.description, [a.name for a in p.arguments]) for p in source.prompts()]
    walk_s = time.perf_counter() - start
    gc.callbacks.remove(on_gc)
    walked_mib = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)  # a store reads its listing here
    import promptdeck

    if stored:
        return {"code": str(Path(promptdeck.__file__).parent), "store": lib, "files": len(listed),
                "errors": len(errors), "load_s": round(load_s, 2), "rss_mib": round(rss_mib),
                "rss_after_walk_mib": walked_mib, "walk_s": round(walk_s, 2), "gc_collections": len(pauses),
                "max_gc_pause_ms": round(max(pauses, default=0) * 1000, 1)}
    one = next(iter(sorted(source._prompts)))
    path = Path(lib) / one
    path.write_bytes(path.read_bytes())
    start = time.perf_counter()
    source.update([str(path)])
    source.prompts()
    update_s = time.perf_counter() - start
    return {"code": str(Path(promptdeck.__file__).parent), "files": len(listed), "errors": len(errors),
            "load_s": round(load_s, 2), "rss_mib": round(rss_mib), "rss_after_walk_mib": walked_mib,
            "traced_peak_mib": None if peak is None else round(peak / 2**20), "walk_s": round(walk_s, 2),
            "gc_collections": len(pauses), "max_gc_pause_ms": round(max(pauses, default=0) * 1000, 1),
            "one_file_update_s": round(update_s, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--store", action="store_true", help="the same library from a SQLite store too")
    parser.add_argument("--baseline", type=Path, metavar="SRC", help="the folder loaded by this src tree too")
    parser.add_argument("--varied", action="store_true", help="a library with no line alike in two files (libgen)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.tracemalloc, args.profile)))
        return 0
    lib = ensure_library(args.prompts, varied=args.varied)
    # the working tree's promptdeck, installed or not, as the other benchmarks measure it
    trees = [("this tree", HERE.parent / "src")]
    if args.baseline is not None:
        trees.append(("baseline", args.baseline.resolve()))
    store = published(lib, args.prompts, args.varied) if args.store else None
    for _ in range(args.runs):
        todo = [(name, tree, str(lib)) for name, tree in trees] + [("store", HERE.parent / "src", store)] * bool(store)
        for name, tree, what in todo:
            cmd = [sys.executable, __file__, "--child", str(what)] + ["--tracemalloc"] * args.tracemalloc
            cmd += ["--profile"] * args.profile
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
            out = subprocess.run(cmd, check=True, capture_output=not args.profile, text=True, env=env).stdout
            print(f"{name}: {out.strip()}" if out else "", flush=True)
    return 0


def published(lib: Path, prompts: int, varied: bool = False) -> str:
    """The URL of a SQLite store holding ``lib`` under the label production, published once and reused."""
    db = HERE / ".work" / f"store-{'varied-' * varied}{prompts}.db"
    stamp = db.with_suffix(".done")
    if not stamp.exists():
        db.unlink(missing_ok=True)
        print(f"publishing {prompts:,} prompts to {db} (once) …", file=sys.stderr, flush=True)
        env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
        subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(lib), "--store", f"sqlite:///{db}",
                        "--label", "production"], check=True, capture_output=True, env=env)
        stamp.touch()
    return f"sqlite:///{db}"


if __name__ == "__main__":
    raise SystemExit(main())
