"""Running the tests of a stored library (``prompts.testing``): of a label, or of any set of files such as a
position a label is about to move to. ``publish``, ``promptdeck test --store`` and a label move that requires
passing tests all come here.

The files are written to a private temporary folder and read as ``serve`` reads a folder, so a stored
prompt's tests run exactly as that folder's would: the same parse, the same sidecar files, the same renders.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...prompts.catalog import Catalog
from ...prompts.testing import RUN_SECONDS, Report, run_tests
from .model import StoreError
from .reads import Reads


def run_file_tests(files: Mapping[str, bytes], names: Sequence[str] | None = None, *,
                   held: frozenset[str] | None = None, seconds: float = RUN_SECONDS) -> tuple[Report, list[str]]:
    """(the report, the problems of files that do not parse) of the library made of ``files`` (path ->
    bytes, as a store keeps them), its prompts as seen by a principal holding ``held`` (None: every prompt).
    A name in ``names`` that is not there, or hidden from ``held``, is ``InvalidParams``."""
    from ..files.source import FileSource

    with tempfile.TemporaryDirectory(prefix="promptdeck-tests-") as folder:
        root = Path(folder).resolve()
        for path, data in files.items():
            target = (root / path).resolve()
            if not target.is_relative_to(root) or target == root:  # a stored path is never trusted to stay inside
                raise StoreError(f"the store holds a path that leads outside the library: {path!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        source = FileSource(root, skills=False)
        found = source.load(compile_all=True)
        catalog = Catalog(source.prompts()).view(held)
        problems = [str(e) for e in found] + [str(e) for errs in source.errors.values() for e in errs
                                               if str(e) not in {str(f) for f in found}]
        report = run_tests(catalog, names, lookup=catalog.require, seconds=seconds)
        return report, list(dict.fromkeys(problems))


def run_label_tests(store: Reads, label: str, names: Sequence[str] | None = None, *,
                    held: frozenset[str] | None = None, seconds: float = RUN_SECONDS) -> tuple[Report, list[str]]:
    """``run_file_tests`` of the files ``label`` points at now."""
    files = {path: data for path, (_, data) in store.snapshot(label).items()}
    return run_file_tests(files, names, held=held, seconds=seconds)


def run_merge_tests(store: Reads, label: str, proposed: Mapping[str, int], *, held: frozenset[str] | None = None,
                    seconds: float = RUN_SECONDS) -> tuple[Report, list[str]]:
    """``run_file_tests`` of what ``label`` would serve once a proposal's versions ``proposed`` (path -> version;
    a deletion's version removes its file) are merged into it: what a reviewer approves (``review``, the page)."""
    from .reviews import merged

    now = store.position(label)
    files = merged(store.db, now.files if now is not None else {}, dict(proposed))
    return run_file_tests({path: store.content(path, version) for path, version in files.items()}, held=held,
                          seconds=seconds)


def failures(report: Report, problems: list[str], limit: int = 5) -> list[str]:
    """The first failures of a run, then the first problems of files that did not parse: what a summary shows."""
    return [line for prompt in report.prompts if not prompt.passed for line in prompt.failures()][:limit] \
        + problems[:limit]


__all__ = ["failures", "run_file_tests", "run_label_tests", "run_merge_tests"]
