"""Who may see what: the one access rule, for prompts, their versions, and the files templates read.

A prompt (or one version of a prompt file) with ``scopes`` is seen only by principals holding one of
them; an unscoped one by everyone. Scopes nest on ``:``: holding ``prompts`` grants ``prompts:hr``
and ``prompts:hr:payroll``, never the reverse. A principal whose scopes are None (a local stdio client,
the CLI) is trusted with everything.

Every place that answers about a prompt, a version or a file decides through this module:

- ``may_see``: a principal and an item's scopes. The catalog's views, the store API's history,
  versions, diffs, label moves and rollbacks, and its checks of a writer's text use it;
- ``covers``: a prompt and a file it reads. A template may read another prompt's source only when
  everyone who may see the reading prompt may see the source too, so a render can never carry a file
  past its scopes, whoever saved the template. ``sources._library`` applies it to every file a
  render or a check touches, with the reading prompt's scopes set by ``reading_as``;
- ``viewing``: whom a check answers. A file hidden from that principal is "not in the library", in
  the very words used for a file that is not there, so a check cannot probe for hidden files.

A hidden item answers exactly like an unknown one, everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: Scopes of no one in particular: what an unscoped prompt carries and an anonymous principal holds.
EVERYONE: frozenset[str] = frozenset()

#: The scopes of the prompt whose template is being built or rendered in this context. Unset: an
#: unscoped prompt, the strictest reader (it may read only unscoped prompt files).
_reader: ContextVar[frozenset[str]] = ContextVar("promptdeck_reader", default=EVERYONE)
_UNSET = object()
#: The principal's scopes a check answers to (``viewing``); unset for the CLI and for renders.
_viewer: ContextVar[frozenset[str] | None | object] = ContextVar("promptdeck_viewer", default=_UNSET)


def grants(held: frozenset[str] | None, needed: str) -> bool:
    """Does holding ``held`` grant ``needed``? Scopes nest on ``:``: ``prompts`` grants ``prompts:hr``."""
    if held is None or needed in held:
        return True
    cut = needed.rfind(":")
    while cut > 0:
        if needed[:cut] in held:
            return True
        cut = needed.rfind(":", 0, cut)
    return False


def may_see(held: frozenset[str] | None, scopes: Iterable[str]) -> bool:
    """Whether a principal holding ``held`` (None: trusted) may see an item restricted to ``scopes``
    (empty: everyone)."""
    if held is None:
        return True
    needed = tuple(scopes)
    return not needed or any(grants(held, scope) for scope in needed)


def covers(reader: frozenset[str], part: frozenset[str]) -> bool:
    """Whether everyone who may see a prompt scoped ``reader`` may see a part scoped ``part``.

    Checked against the least a reader's principal may hold, each one scope of ``reader``: holding
    ``r`` grants the part when ``r`` grants one of its scopes, and any principal that sees the reader
    through a broader scope grants that part as well.
    """
    if not part:
        return True
    if not reader:
        return False
    return all(any(grants(frozenset((scope,)), needed) for needed in part) for scope in reader)


def parse_scopes(text: str | None) -> frozenset[str]:
    """Scopes as the store keeps them: space-separated ('' or None: none)."""
    return frozenset(text.split()) if text else EVERYONE


def shown_scopes(scopes: frozenset[str]) -> str:
    return ", ".join(sorted(scopes)) if scopes else "everyone"


def reader_scopes() -> frozenset[str]:
    """The scopes of the prompt being built or rendered here (``reading_as``)."""
    return _reader.get()


class reading_as:  # lower case: it is used as a function, ``with reading_as(scopes):``
    """Files touched inside are read on behalf of a prompt scoped ``scopes``.

    A class rather than a ``@contextmanager`` generator: every render of a file prompt enters it, and
    the generator's machinery cost ~1.2 us of a ~12 us stdio ``prompts/get`` (issue 29)."""

    __slots__ = ("scopes", "token")

    def __init__(self, scopes: frozenset[str]) -> None:
        self.scopes = scopes

    def __enter__(self) -> None:
        self.token = _reader.set(self.scopes)

    def __exit__(self, *exc: object) -> None:
        _reader.reset(self.token)


def viewer() -> tuple[bool, frozenset[str] | None]:
    """(whether a check answers a principal here, that principal's scopes)."""
    held = _viewer.get()
    if held is _UNSET:
        return False, None
    return True, held  # type: ignore[return-value]


@contextmanager
def viewing(held: frozenset[str] | None) -> Iterator[None]:
    """A check inside answers a principal holding ``held``: what it may not see is not there."""
    token = _viewer.set(held)
    try:
        yield
    finally:
        _viewer.reset(token)
