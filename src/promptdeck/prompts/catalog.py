"""The catalog: an immutable, sorted snapshot of every prompt a server offers.

Sources build a new ``Catalog`` and the server swaps it in one assignment, so
readers never lock. List pages are encoded once per revision and position and
kept as bytes: answering ``prompts/list`` is a lookup and a write.

Cursors name the last prompt of the previous page (base64url of its name), not
an offset, so a prompt added or removed between two pages neither repeats nor
skips any other.

A prompt with ``scopes`` is seen only by principals holding one of them:
``view(held)`` is the catalog such a principal sees, built once per distinct
combination of scope groups it can see and cached with the snapshot.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import encode_json
from ..protocol.revisions import LATEST, Revision
from .access import may_see
from .spec import Offered

DEFAULT_PAGE_SIZE = 100
_CURSOR_PREFIX = "n:"


# base64 is imported where a cursor is made or read, not at the top: a one-page library needs none, and this
# module is on the stdio start-up path (issue 29).


def encode_cursor(after: str) -> str:
    import base64

    return base64.urlsafe_b64encode((_CURSOR_PREFIX + after).encode()).decode("ascii").rstrip("=")


def decode_cursor(cursor: object) -> str:
    """The name a cursor points after; ``InvalidParams`` for anything we did not issue."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 1024:
        raise InvalidParams(f"invalid cursor {_show(cursor)}")
    import base64
    import binascii

    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParams(f"invalid cursor {_show(cursor)}") from None
    if not raw.startswith(_CURSOR_PREFIX):
        raise InvalidParams(f"invalid cursor {_show(cursor)}")
    return raw[len(_CURSOR_PREFIX):]


def _show(cursor: object) -> str:
    text = repr(cursor)
    return text if len(text) <= 60 else text[:57] + "..."


class Catalog:
    __slots__ = ("_names", "_prompts", "page_size", "_pages", "_signature", "_groups", "_views")

    def __init__(self, prompts: Iterable[Offered] = (), page_size: int = DEFAULT_PAGE_SIZE) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        by_name: dict[str, Offered] = {}
        for p in prompts:
            if p.name in by_name:
                raise ValueError(f"two prompts are named {p.name!r}: {by_name[p.name].source} and {p.source}")
            by_name[p.name] = p
        self._names = sorted(by_name)
        self._prompts = by_name
        self.page_size = page_size
        #: encoded pages by (revision, where the page starts, extra_key)
        self._pages: dict[tuple[str, int | str, str], bytes] = {}
        self._signature: bytes | None = None
        self._groups = sorted({p.scopes for p in by_name.values() if p.scopes}, key=sorted)
        self._views: dict[tuple[frozenset[str], ...], Catalog] = {}

    @property
    def restricted(self) -> bool:
        """Does what this catalog lists depend on who asks?"""
        return bool(self._scope_groups())

    def view(self, held: frozenset[str] | None) -> Catalog:
        """The prompts a principal holding ``held`` may see (None: every prompt)."""
        if held is None or not self._scope_groups():
            return self
        visible = tuple(g for g in self._groups if may_see(held, g))
        if len(visible) == len(self._groups):
            return self
        view = self._views.get(visible)
        if view is None:
            if len(self._views) >= 256:
                self._views.clear()
            view = self._views[visible] = self._narrowed(visible)
        return view

    def _scope_groups(self) -> list[frozenset[str]]:
        """The distinct scope sets of the prompts (each a prompt's ``scopes``)."""
        return self._groups

    def _narrowed(self, visible: tuple[frozenset[str], ...]) -> Catalog:
        """The catalog of the unscoped prompts and those whose scopes are one of ``visible``."""
        allowed = set(visible)
        return Catalog((p for p in self if not p.scopes or p.scopes in allowed), self.page_size)

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[Offered]:
        return (self._prompts[n] for n in self._names)

    def after(self, name: str) -> Iterator[Offered]:
        """The prompts whose names sort after ``name``, in order (a cursor's continuation)."""
        names, prompts = self._names, self._prompts
        return (prompts[names[i]] for i in range(bisect_right(names, name), len(names)))

    def __contains__(self, name: object) -> bool:
        return name in self._prompts

    @property
    def names(self) -> list[str]:
        return list(self._names)

    def get(self, name: str) -> Offered | None:
        return self._prompts.get(name)

    def require(self, name: object) -> Offered:
        """The prompt called ``name``, or ``InvalidParams`` naming it."""
        if not isinstance(name, str):
            raise InvalidParams('"name" must be a string naming a prompt')
        prompt = self._prompts.get(name)
        if prompt is None:
            raise unknown_prompt(name, self._names)
        return prompt

    def start_of(self, cursor: object) -> int:
        if cursor is None:
            return 0
        return bisect_right(self._names, decode_cursor(cursor))

    def page(self, rev: Revision, cursor: object = None, extra: dict[str, Any] | None = None,
             extra_key: str = "") -> bytes:
        """The encoded ``ListPromptsResult`` for the page after ``cursor``, with ``extra`` fields added.

        ``extra_key`` names ``extra`` in the cache: the same key must always come with the same fields.
        """
        start = self.start_of(cursor)
        key = (rev.version, start, extra_key)
        cached = self._pages.get(key)
        if cached is None:
            cached = self._pages[key] = encode_json({**self.page_result(rev, start), **(extra or {})})
        return cached

    def page_result(self, rev: Revision, start: int) -> dict[str, Any]:
        names = self._names[start:start + self.page_size]
        result: dict[str, Any] = {"prompts": [self._prompts[n].descriptor(rev) for n in names]}
        if start + self.page_size < len(self._names):
            result["nextCursor"] = encode_cursor(names[-1])
        return result

    def signature(self) -> bytes:
        """What ``prompts/list`` shows, as bytes: two catalogs list the same iff these are equal."""
        if self._signature is None:
            self._signature = encode_json([self._prompts[n].descriptor(LATEST) for n in self._names])
        return self._signature


#: An unknown name is compared with at most this many names for "did you mean": the error path is one a
#: client may call at will, so it stays cheap (5 ms for 2,000 varied names, 40 ms for 2,000 that differ
#: only in a number; 10,000 of those took 200 ms).
SUGGEST_LIMIT = 2_000


def close_names(name: str, names: Collection[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` of ``names`` that ``name`` may have meant (case aside), closest first; none when there
    are more than ``SUGGEST_LIMIT`` names to compare with."""
    if len(names) > SUGGEST_LIMIT or len(name) > 128:
        return []
    import difflib  # only on this error path: not on a server's way to its first answer

    by_folded: dict[str, str] = {}
    for known in names:
        by_folded.setdefault(known.casefold(), known)
    found = difflib.get_close_matches(name.casefold(), by_folded, n=limit, cutoff=0.6)
    return [by_folded[folded] for folded in found]


def unknown_prompt(name: str, names: Collection[str]) -> InvalidParams:
    """The -32602 for a prompt ``name`` that is not among ``names`` (those the asking principal may see:
    a name hidden from it is never suggested), with the close ones in its message and ``data``."""
    suggestions = close_names(name, names)
    hint = f"; did you mean {' or '.join(map(repr, suggestions))}?" if suggestions else ""
    return InvalidParams(f"unknown prompt {name!r}{hint}", {"prompt": name, "suggestions": suggestions})
