"""A bundle (``sources.store.bundle``) as ``Prompts(source, bundle=FILE)`` serves it until the source answers.

``Bundled`` checks the bundle whole (refused with one ``BundleError`` naming the file and what is wrong),
writes its files into a private folder (0700, through the pull's confined writes) and renders that folder
in-process as ``LocalLibrary`` renders any folder: the server's own render path, so a render equals what
``prompts/get`` gives for the same files. Each render from it says ``stale`` and the bundle's version and
label of the prompt.

``Revalidation`` is the thread that tries the source in the background, every ``refresh`` seconds, until
it answers; then ``Prompts`` swaps its source in (one attribute, read once per render: a render never
waits on this thread nor hops to it).
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..sources.store.bundle import Bundle, read
from ..sources.store.pull import apply, plan
from .local import LocalLibrary
from .rendered import PromptListing

if TYPE_CHECKING:
    from ..prompts.spec import Offered

log = logging.getLogger("promptdeck.application")
#: The bounds of ``Prompts(refresh=)``: often enough to notice the source back, seldom enough not to hammer it.
REFRESH_BOUNDS = (0.05, 3600.0)


class Bundled:
    """The bundle at ``path``, which must stand for ``label`` of ``source`` (as shown: no password), and be
    signed by ``key`` (a PEM Ed25519 public key) when one is given."""

    def __init__(self, path: str, *, source: str, label: str, key: bytes | None = None) -> None:
        self.path = path
        self.bundle: Bundle = read(path, source=source, label=label, key=key)
        self.folder = tempfile.mkdtemp(prefix="promptdeck-bundle-")
        try:
            apply(self.folder, plan(self.folder, self.bundle.contents(), {}))
            self.library = LocalLibrary(self.folder, watch=False)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def listing(self, prompt: Offered, listing: PromptListing) -> PromptListing:
        """``listing`` with the version the bundle holds of ``prompt`` and its label."""
        return dataclasses.replace(listing, version=self.bundle.versions.get(prompt.source),
                                   label=self.bundle.label)

    def close(self) -> None:
        self.library.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def refresh_seconds(refresh: float) -> float:
    low, high = REFRESH_BOUNDS
    if not low <= refresh <= high:
        raise ValueError(f"refresh= is seconds between tries of the source, from {low} to {high}; not {refresh}")
    return refresh


class Revalidation(threading.Thread):
    """Calls ``attempt`` every ``refresh`` seconds until it returns True (the source answered) or ``stop``."""

    def __init__(self, attempt: Callable[[], bool], refresh: float, source: str) -> None:
        super().__init__(name="promptdeck-bundle-refresh", daemon=True)
        self._attempt = attempt
        self._refresh = refresh
        self._source = source
        self._stopped = threading.Event()
        #: set once the source answered
        self.answered = threading.Event()

    def run(self) -> None:
        said = False
        while not self._stopped.is_set():
            try:
                if self._attempt():
                    self.answered.set()
                    return
            except Exception as exc:  # the source is still away; the bundle serves on
                # Said once, not every ``refresh`` seconds of an outage.
                log.log(logging.DEBUG if said else logging.WARNING, "%s cannot be reached (%s); rendering from "
                        "the bundle until it answers", self._source, exc)
                said = True
            self._stopped.wait(self._refresh)

    def stop(self) -> None:
        self._stopped.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(10)

