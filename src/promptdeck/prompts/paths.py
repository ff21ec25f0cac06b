"""Reading files of a prompt library without ever leaving its root.

Every path a template or an argument names goes through ``LibraryRoot.resolve``:
relative only, no ``..``, and after symlinks are followed it must still lie
below the root. Reads are size-capped.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..protocol.errors import InvalidParams

MAX_EMBED_BYTES = 10 * 1024 * 1024

_EXTRA_TYPES = {
    ".md": "text/markdown", ".log": "text/plain", ".txt": "text/plain", ".py": "text/x-python",
    ".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".flac": "audio/flac",
    ".m4a": "audio/mp4", ".webp": "image/webp", ".svg": "image/svg+xml", ".json": "application/json",
    ".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
    ".ts": "text/x-typescript", ".go": "text/x-go", ".rs": "text/x-rust", ".sh": "text/x-shellscript",
    ".csv": "text/csv", ".html": "text/html", ".css": "text/css", ".js": "text/javascript",
}


def guess_mime(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    known = _EXTRA_TYPES.get(ext)
    if known is not None:
        return known
    import mimetypes  # reads the system's type tables: only for extensions we do not know

    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def is_text_mime(mime: str) -> bool:
    return mime.startswith("text/") or mime in (
        "application/json", "application/yaml", "application/toml", "application/xml", "image/svg+xml")


class LibraryRoot:
    """The folder a library lives in; the only way templates reach files."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def resolve(self, rel: str) -> Path:
        """The real path of ``rel``, or ``InvalidParams`` if it would leave the root or does not exist."""
        if not isinstance(rel, str) or not rel or "\x00" in rel:
            raise InvalidParams(f"file path {rel!r} is not valid")
        candidate = Path(rel)
        if candidate.is_absolute() or ".." in candidate.parts:
            raise InvalidParams(f"file path {rel!r} must be relative and stay inside the library")
        real = (self.root / candidate).resolve()
        if real != self.root and self.root not in real.parents:
            raise InvalidParams(f"file path {rel!r} leaves the library")
        if not real.is_file():
            raise InvalidParams(f"file {rel!r} does not exist in the library")
        return real

    def read_bytes(self, rel: str, limit: int = MAX_EMBED_BYTES) -> bytes:
        real = self.resolve(rel)
        with open(real, "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise InvalidParams(f"file {rel!r} is larger than {limit} bytes")
        return data

    def read_text(self, rel: str, limit: int = MAX_EMBED_BYTES) -> str:
        data = self.read_bytes(rel, limit)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidParams(f"file {rel!r} is not UTF-8 text") from None

    def uri(self, rel: str) -> str:
        return "promptdeck:///" + Path(rel).as_posix()

    def files(self, prefix: str = "", limit: int = 1000) -> list[str]:
        """Library files (not prompts, not hidden) whose relative path starts with ``prefix``."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel_dir = os.path.relpath(dirpath, self.root)
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                rel = name if rel_dir == "." else f"{Path(rel_dir).as_posix()}/{name}"
                # A .md outside a _material-style folder is a prompt, not material.
                is_prompt = rel.endswith(".md") and not any(p.startswith("_") for p in rel.split("/"))
                if rel.startswith(prefix) and not is_prompt:
                    out.append(rel)
                    if len(out) >= limit:
                        return out
        return out
