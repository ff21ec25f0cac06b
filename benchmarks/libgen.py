"""Generate a synthetic promptdeck prompt library for the benchmarks.

    python benchmarks/libgen.py N [DIR]

writes N prompt files (default folder ``benchmarks/.work/lib-N``). Every file has front matter with a
description and two arguments -- a required ``topic`` and an optional ``tone`` with an enum and a
default -- and a short Jinja body that uses both.

Up to 1,000 prompts go straight into the folder (``p0000.md`` ... names ``p0000`` ...). Larger
libraries are spread over subfolders of at most 1,000 files each (``s000/p000000.md``, prompt name
``s000.p000000``), as promptdeck names prompts after their path with ``.`` between folders.

A finished library carries a stamp file (``.libgen.json``; names starting with ``.`` are not prompts),
so asking again for the same library reuses it. The library is written into a temporary sibling folder
and renamed into place, so an interrupted run never leaves a half-written library behind.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

#: Bump when the file layout or content changes, so stale libraries are regenerated.
FORMAT_VERSION = 1
STAMP = ".libgen.json"
PER_FOLDER = 1000
TONES = ("neutral", "friendly", "formal", "playful")
DEFAULT_TONE = "neutral"

_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)

WORK_DIR = Path(__file__).resolve().parent / ".work"

_TEMPLATE = """\
---
description: Benchmark prompt {num} of {total}. Drafts a short note about a topic.
arguments:
  - name: topic
    description: What the note is about
    required: true
  - name: tone
    description: Tone of voice
    enum: [{tones}]
    default: {default}
---
Write a short note about {{{{ topic }}}} in a {{{{ tone }}}} tone.
Keep it under {words} words and end with one question for the reader.
"""


#: ``--varied``: every front matter line and the body name the file, so nothing is declared alike in two files
#: (the worst case for what a load shares between files: arguments, front matter lines).
_VARIED = """\
---
description: Prompt {num} of {total} drafts a note about topic {num}.
arguments:
  - name: topic{arg}
    description: What note {num} is about
    required: true
  - name: tone
    description: Tone of voice for note {num}
    enum: [neutral, friendly, formal, tone{num}]
    default: neutral
---
Write note {num} about {{{{ topic{arg} }}}} in a {{{{ tone }}}} tone.
Keep it under {words} words and end with one question for reader {num}.
"""


def default_dir(n: int, varied: bool = False) -> Path:
    return WORK_DIR / (f"lib-varied-{n}" if varied else f"lib-{n}")


def prompt_paths(n: int) -> list[str]:
    """Relative paths of the N prompt files, in order."""
    if n <= PER_FOLDER:
        width = max(4, len(str(n - 1)))
        return [f"p{i:0{width}d}.md" for i in range(n)]
    width = max(6, len(str(n - 1)))
    folder_width = max(3, len(str((n - 1) // PER_FOLDER)))
    return [f"s{i // PER_FOLDER:0{folder_width}d}/p{i:0{width}d}.md" for i in range(n)]


def prompt_name(rel_path: str) -> str:
    """The prompt name promptdeck derives from a relative path: ``a/b.md`` -> ``a.b``."""
    return rel_path.removesuffix(".md").replace("/", ".")


def prompt_names(n: int) -> list[str]:
    return [prompt_name(p) for p in prompt_paths(n)]


def render_file(num: int, total: int, varied: bool = False) -> str:
    if varied:
        return _VARIED.format(num=num, total=total, arg=num % 97, words=50 + num % 100)
    return _TEMPLATE.format(
        num=num,
        total=total,
        tones=", ".join(TONES),
        default=DEFAULT_TONE,
        words=50 + num % 100,
    )


def _stamp_ok(folder: Path, n: int, varied: bool) -> bool:
    try:
        data = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("n") == n and data.get("format") == FORMAT_VERSION \
        and bool(data.get("varied")) == varied


def ensure_library(n: int, folder: Path | None = None, *, force: bool = False, varied: bool = False) -> Path:
    """Create (or reuse) a library of N prompts and return its folder; ``varied``: no line alike in two files."""
    if n < 1:
        raise ValueError("a library needs at least one prompt")
    folder = (folder or default_dir(n, varied)).resolve()
    if not force and _stamp_ok(folder, n, varied):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    made: set[str] = set()
    for i, rel in enumerate(prompt_paths(n)):
        sub, _, _ = rel.rpartition("/")
        if sub and sub not in made:
            (tmp / sub).mkdir()
            made.add(sub)
        # Raw os.open/os.write: file objects cost about twice as much per file at N=100,000.
        fd = os.open(f"{tmp}/{rel}", _OPEN_FLAGS, 0o644)
        try:
            os.write(fd, render_file(i, n, varied).encode())
        finally:
            os.close(fd)
    with open(tmp / STAMP, "w", encoding="utf-8") as fh:
        json.dump({"n": n, "format": FORMAT_VERSION, "varied": varied,
                   "layout": "flat" if n <= PER_FOLDER else "folders"}, fh)
    if folder.exists():
        # Only ever replace a library this script wrote (or an empty folder), never someone's files.
        if not (folder / STAMP).is_file() and any(folder.iterdir()):
            shutil.rmtree(tmp)
            raise FileExistsError(f"{folder} exists and is not a generated library; not replacing it")
        shutil.rmtree(folder)
    tmp.rename(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a synthetic prompt library.")
    parser.add_argument("n", type=int, help="number of prompt files")
    parser.add_argument("dir", nargs="?", type=Path, help="target folder (default benchmarks/.work/lib-N)")
    parser.add_argument("--force", action="store_true", help="regenerate even if a matching library exists")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("N must be at least 1")
    folder = ensure_library(args.n, args.dir, force=args.force)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
