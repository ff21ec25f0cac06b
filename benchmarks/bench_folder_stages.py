"""A folder load's per-file CPU, stage by stage, in one process (issue 42 item 5).

    .venv/bin/python benchmarks/bench_folder_stages.py [--prompts 10000] [--baseline SRC]

What a worker process does for each file of a large library (``sources/files/source.py``): read it
(``paths.read_confined_all``), stage it (``stage_file``: decode, split, ``frontmatter.fast_load`` of the front
matter, the messages), pickle the staged batch back; and what the parent then does before ``build_prompt``:
unpickle it. Each figure is the CPU time (``time.process_time``, so a busy machine inflates it less than the wall
time) of the best of ``--repeat`` passes over every file, in microseconds a file. ``--baseline SRC`` measures another
source tree too (``git archive COMMIT src | tar -x -C DIR``), in a child process each.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from libgen import ensure_library  # noqa: E402


def child(lib: str, repeat: int) -> dict[str, Any]:
    from promptdeck.sources.files import frontmatter
    from promptdeck.sources.files.paths import read_confined_all
    from promptdeck.sources.files.source import MAX_PROMPT_FILE_BYTES, FileSource, _stage_files, stage_file

    source = FileSource(lib)
    paths = source.scan()
    root = str(source.root)

    def best(work: Callable[[], Any]) -> tuple[float, Any]:
        times, out = [], None
        for _ in range(repeat):
            gc.collect()
            start = time.process_time()
            out = work()
            times.append(time.process_time() - start)
        return round(min(times) / len(paths) * 1e6, 1), out

    gc.disable()  # as a load runs
    read, datas = best(lambda: read_confined_all(root, paths, MAX_PROMPT_FILE_BYTES))
    stage, _ = best(lambda: [stage_file(rel, data) for rel, data in zip(paths, datas, strict=True)])
    fronts = [frontmatter.split_front_matter(data.decode())[0] or "" for data in datas]
    front_matter, _ = best(lambda: [frontmatter.fast_load(front) for front in fronts])
    worker, batches = best(lambda: [_stage_files((root, paths[i:i + 1000], "")) for i in range(0, len(paths), 1000)])
    pickled, blobs = best(lambda: [pickle.dumps(batch, pickle.HIGHEST_PROTOCOL) for batch in batches])
    unpickled, _ = best(lambda: [pickle.loads(blob) for blob in blobs])
    import promptdeck

    return {"code": str(Path(promptdeck.__file__).parent), "files": len(paths), "read_us": read, "stage_us": stage,
            "fast_load_us": front_matter, "read_and_stage_us": worker, "pickle_us": pickled,
            "worker_us": round(worker + pickled, 1), "unpickle_us": unpickled,
            "pickled_bytes": round(sum(map(len, blobs)) / len(paths))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path, metavar="SRC", help="another src tree measured too")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return 0
    lib = ensure_library(args.prompts)
    trees = [("this tree", HERE.parent / "src")]
    if args.baseline is not None:
        trees.append(("baseline", args.baseline.resolve()))
    for name, tree in trees:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
        out = subprocess.run([sys.executable, __file__, "--child", str(lib), "--repeat", str(args.repeat)],
                             check=True, capture_output=True, text=True, env=env).stdout
        print(f"{name}: {out.strip()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
