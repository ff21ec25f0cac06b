"""The web page's window on the versioned store: history, diffs, checks, and (with the write scope) new
versions, label moves and rollbacks of the label the server serves.

Served on ``/api/store`` by ``serve --http`` when it serves a store label and the page is on. Requests
pass the same Host/Origin checks, authentication and rate limit as ``/mcp`` (``StreamableHttpApp`` does
them before a request reaches this module), so the page has exactly its principal's rights:

- reading needs nothing more than seeing the prompt, and each version is seen by its own scopes
  (``prompts.access``, applied by ``_StoreView``): a prompt or a version that scopes hide from the principal
  is answered exactly as an unknown one (404), a history lists only the versions it may see, a label
  move that changed only what it may not see is shown without its reason or author, and a check of its
  text treats the files it may not see as absent;
- writing needs the write scope (``store:write`` unless ``--write-scope`` says otherwise). A server
  without authentication has anonymous principals, which hold no scope: it serves the store read-only.
  A writer saves only versions it may see, and moves a label (a save's, a pointing, a rollback) only
  through changes it may see.

Running a prompt's tests (``/tests``, and with each ``/check``) needs the write scope too: a run is seconds
of a server's time spent on text the caller chose. A reader is shown the cases, not run (``store_tests``).

A POST must be ``application/json``, which a cross-site form cannot send without a preflight this
server never grants. Every store call runs in a thread under a small quota per principal and in total,
on a connection of its own, and every answer is JSON: ``{"error": …}`` beside the HTTP status that fits.
A test run in a call stops when its client goes away and when the server stops (``stop_runs``), so that
neither holds a slot of the quota for nobody. docs/store-api.md has the whole contract.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import msgspec

from ...prompts.access import may_see, parse_scopes, shown_scopes, viewing
from ...prompts.skills import resolve_skill_uri
from ...prompts.testing import stopping
from ...protocol.errors import HttpError, PromptFileError
from ...protocol.jsonrpc import encode_json
from ...sources.files.frontmatter import line_of_key, split_front_matter
from ...sources.files.library import file_scopes
from ...sources.files.paths import is_prompt_path
from ...sources.files.skills import skill_md_front
from ...sources.files.source import MAX_PROMPT_FILE_BYTES, build_prompt, stage_file
from ...sources.store.catalog import META_LABEL
from ...sources.store.database import Store
from ...sources.store.model import (
    Position,
    Recorded,
    StoreConflict,
    StoreError,
    StoreMissing,
    TestsFailed,
    in_skill,
    is_label,
    listing_of,
    no_version,
)
from ...sources.store.seen import Seen
from ...sources.store.source import StoreSource
from ...sources.store.versions import TooLargeToDiff, argument_schema, is_text, schema_text, side_by_side, text_of
from ..asgi import Disconnected, Receive, Scope, Send, headers_of, media_type, read_body, respond
from ..security.principals import DEFAULT_WRITE_SCOPE, Principal, may_write
from ..security.quotas import Quota
from . import store_bundle, store_tests, store_usage
from . import store_governance as governance
from . import store_proposals as proposals
from .store_runs import Runs, current_stop

if TYPE_CHECKING:
    from ...prompts.spec import Offered, Prompt
    from ..app import PromptServer

log = logging.getLogger("promptdeck.store")
T = TypeVar("T")

PREFIX = "/api/store"
#: A request body: a prompt file's largest text, JSON-escaped (a quote or backslash takes two bytes).
MAX_BODY_BYTES = 2 * MAX_PROMPT_FILE_BYTES + 64 * 1024
MAX_MESSAGE_CHARS = 2000
_GETS = {"": "GET", "/history": "GET", "/version": "GET", "/diff": "GET", "/tests": "GET", "/moves": "GET",
         store_usage.ROUTE: "GET", store_bundle.ROUTE: "GET",
         **dict.fromkeys(proposals.GETS, "GET")}
_POSTS = {"/check": "POST", "/publish": "POST", "/label": "POST", "/rollback": "POST", "/rollout": "POST",
          "/promote": "POST",
          **dict.fromkeys(proposals.POSTS, "POST")}


class _Edit(msgspec.Struct, forbid_unknown_fields=True):
    prompt: str
    text: str
    message: str = ""
    label: str | None = None
    #: the version the edit started from: a newer one in the store refuses the save (409)
    base: Version | None = None
    #: save even if the text's tests fail (the version's message says so)
    skip_tests: bool = False
    #: propose the saved version for ``label`` rather than move it (``store_proposals``)
    propose: bool = False
    #: push the saved version to this open proposal instead (its label's; no label moves)
    proposal: Version | None = None


#: A version number as the API takes it: what the databases' integers hold, and no more.
Version = Annotated[int, msgspec.Meta(ge=0, le=2**53)]


class _Point(msgspec.Struct, forbid_unknown_fields=True):
    prompt: str
    version: Version
    label: str
    message: str = ""


class _Back(msgspec.Struct, forbid_unknown_fields=True):
    label: str
    message: str = ""


class StoreApi:
    """``/api/store`` for the label ``source`` serves (see the module docstring)."""

    def __init__(self, server: PromptServer, source: StoreSource, write_scope: str = DEFAULT_WRITE_SCOPE,
                 total: int = 4, per_principal: int = 2) -> None:
        self.server = server
        self.source = source
        self.write_scope = write_scope
        #: store calls running: each holds a thread and a store connection
        self.calls = Quota("store requests", total, per_principal)
        #: the stops of the requests being answered (``store_runs``)
        self.runs = Runs()

    @staticmethod
    def serves(path: str) -> bool:
        return path == PREFIX or path.startswith(PREFIX + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        """Answer one call; a refusal is an ``HttpError``, which the endpoint answers as ``{"error": …}``."""
        route, method = scope["path"][len(PREFIX):], scope["method"]
        allowed = _GETS.get(route) or _POSTS.get(route)
        if allowed is None:
            raise HttpError(404, f"no such store call: {scope['path']}")
        if method != allowed:
            raise HttpError(405, f"{scope['path']} takes {allowed}", headers=[(b"allow", allowed.encode())])
        try:
            body = await self._body(scope, receive) if method == "POST" else b""
            async with self.runs.watching(receive):
                if method == "POST":
                    answer = await self._post(route, body, principal)
                else:
                    answer = await self._get(route, _query(scope), principal)
        except Disconnected:
            return
        await _send(send, 200, answer)

    def stop_runs(self) -> None:
        """Stop every test run of a call being answered, and those of calls still to come: the server stops.
        Idempotent; the calls answer at once, their runs' cases left failing as not run."""
        self.runs.stop_all()

    # -- reading ---------------------------------------------------------------------------------

    async def _get(self, route: str, query: dict[str, str], principal: Principal) -> dict[str, Any]:
        if route == "":
            return await self._run(principal, self._overview, principal)
        if route == "/moves":
            before = _number(query, "before") if "before" in query else None
            return await self._run(principal, governance.audit, _label(_field(query, "label")), before)
        if route == proposals.RUNS_TESTS:
            refused = None if self._may_write(principal) else f"running tests needs the scope {self.write_scope}"
            return await self._run(principal, proposals.shown, query, refused)
        if route in proposals.GETS:
            return await self._run(principal, proposals.GETS[route], query)
        if route == store_usage.ROUTE:
            return await store_usage.get(self, query, principal)
        if route == store_bundle.ROUTE:
            return await store_bundle.get(self, principal, self.source.label)
        if "skill" in query and "prompt" not in query:
            uri = _field(query, "skill")
            path = self._visible_skill_file(principal, uri)
            if route == "/history":
                return await self._run(principal, self._skill_history, uri, path)
            if route == "/version":
                return await self._run(principal, self._skill_version, uri, path, _number(query, "version"))
            return await self._run(principal, self._skill_diff, uri, path, _number(query, "from"),
                                   _number(query, "to"))
        prompt = self._visible(principal, _field(query, "prompt"))
        if route == "/tests":
            return await self._run(principal, self._tests, prompt, self._may_write(principal))
        if route == "/history":
            return await self._run(principal, self._history, prompt)
        if route == "/version":
            return await self._run(principal, self._version, prompt, _number(query, "version"))
        return await self._run(principal, self._diff, prompt, _number(query, "from"), _number(query, "to"))

    def _overview(self, sight: _StoreView, principal: Principal) -> dict[str, Any]:
        labels = []
        for now, before in sight.store.reads.label_moves():
            # Each move is shown as its change allows: the positions before it say what it changed.
            at = [sight.store.reads.position(now.label, back) for back in range(3)]
            protection = sight.store.governance.protection(now.label)
            labels.append({**sight.move(now, at[1], at[0]), "name": now.label,
                           "previous": sight.move(before, at[2], at[1]) if before else None,
                           "protected": None if protection is None else {"scope": protection.scope},
                           # whether this principal may move the label (the page offers moves only then)
                           "move": self._may_write(principal) and governance.may_move(principal.scopes, protection),
                           "rollouts": governance.rollouts(sight, now.label)})
        return {"label": self.source.label, "write": self._may_write(principal), "writeScope": self.write_scope,
                "labels": labels}

    def _tests(self, sight: _StoreView, prompt: Offered, run: bool) -> dict[str, Any]:
        """The served version's tests and how they fare (``store_tests``), run only when ``run``."""
        return {"prompt": prompt.name, "tests": self._tested(sight, prompt.parsed(), run)}

    def _tested(self, sight: _StoreView, prompt: Prompt, run: bool) -> dict[str, Any] | None:
        """``store_tests.shown`` of ``prompt``: run for a writer, its cases alone (and why) for a reader."""
        if not run:
            return store_tests.not_run(prompt, f"running tests needs the scope {self.write_scope}")
        return store_tests.shown(prompt, store_tests.run_for(prompt, sight.held))

    def _history(self, sight: _StoreView, prompt: Offered) -> dict[str, Any]:
        return {"prompt": prompt.name, "path": prompt.source, "versions": _versions(sight, prompt.source)}

    def _version(self, sight: _StoreView, prompt: Offered, version: int) -> dict[str, Any]:
        found, data = sight.content(prompt, version)
        with viewing(sight.held):
            arguments = argument_schema(prompt.source, data, self.source.library)
        return {"prompt": prompt.name, "path": prompt.source, "version": found,
                "text": None if data is None else text_of(data), "arguments": arguments}

    def _diff(self, sight: _StoreView, prompt: Offered, first: int, second: int) -> dict[str, Any]:
        path = prompt.source
        _, old = sight.content(prompt, first)
        _, new = sight.content(prompt, second)
        library = self.source.library
        with viewing(sight.held):
            old_args, new_args = (schema_text(argument_schema(path, data, library)) for data in (old, new))
        try:
            rows = side_by_side(text_of(old), text_of(new))
            argument_rows = side_by_side(old_args, new_args)
        except TooLargeToDiff as exc:
            raise HttpError(413, str(exc)) from None
        return {"prompt": prompt.name, "path": path, "from": first, "to": second, "source": rows,
                "arguments": argument_rows, "same": old == new}

    # -- a skill's files (docs/skills.md) ---------------------------------------------------------

    def _skill_history(self, sight: _StoreView, uri: str, path: str) -> dict[str, Any]:
        return {"skill": uri, "path": path, "versions": _versions(sight, path)}

    def _skill_version(self, sight: _StoreView, uri: str, path: str, version: int) -> dict[str, Any]:
        found, data = sight.file_content(path, version, uri)
        binary = not is_text(data)
        return {"skill": uri, "path": path, "version": found, "binary": binary,
                "text": None if data is None or binary else text_of(data),
                "size": None if data is None else len(data),
                "digest": None if data is None else "sha256:" + hashlib.sha256(data).hexdigest()}

    def _skill_diff(self, sight: _StoreView, uri: str, path: str, first: int, second: int) -> dict[str, Any]:
        _, old = sight.file_content(path, first, uri)
        _, new = sight.file_content(path, second, uri)
        binary = not (is_text(old) and is_text(new))
        try:
            rows = [] if binary else side_by_side(text_of(old), text_of(new))
        except TooLargeToDiff as exc:
            raise HttpError(413, str(exc)) from None
        return {"skill": uri, "path": path, "from": first, "to": second, "binary": binary, "source": rows,
                "same": old == new}

    # -- checking and writing --------------------------------------------------------------------

    async def _post(self, route: str, body: bytes, principal: Principal) -> dict[str, Any]:
        if route == "/check":
            edit = _decode(body, _Edit)
            prompt = self._visible(principal, edit.prompt)
            return await self._run(principal, self._problems, prompt, _text(edit), self._may_write(principal))
        if not self._may_write(principal):
            raise HttpError(403, f"writing to the store needs the scope {self.write_scope}", scope=self.write_scope)
        if route in proposals.POSTS:
            return await self._run(principal, proposals.act, route, _decode(body, proposals.ProposalCall),
                                   principal.name)
        if route == "/publish":
            edit = _message(_decode(body, _Edit))
            prompt = self._visible(principal, edit.prompt)
            label = _label(edit.label) if edit.label is not None else None
            if edit.propose and label is None and edit.proposal is None:
                raise HttpError(400, "propose: a proposal is aimed at a label; give label")
            return await self._run(principal, self._publish, prompt, _text(edit), edit, label, principal.name)
        if route == "/label":
            point = _decode(body, _Point)
            prompt = self._visible(principal, _message(point).prompt)
            return await self._run(principal, self._point, prompt, point.version, _label(point.label),
                                   principal.name, point.message)
        if route == "/rollout":
            call = _decode(body, governance.RolloutCall)
            prompt = self._visible(principal, _message(call).prompt)
            return await self._run(principal, governance.rollout, prompt.source, call, _label(call.label),
                                   principal.name)
        if route == "/promote":
            promotion = _message(_decode(body, governance.PromoteCall))
            return await self._run(principal, governance.promote, promotion, _label(promotion.source),
                                   _label(promotion.label), principal.name)
        back = _decode(body, _Back)
        return await self._run(principal, self._rollback, _label(_message(back).label), principal.name, back.message)

    def _problems(self, sight: _StoreView, prompt: Offered, data: bytes, run: bool) -> dict[str, Any]:
        """What a check of the editor's text answers: its problems, and when it has none, its tests' report
        (when ``run``: the caller may write)."""
        checked, problems = self._check(sight, prompt, data)
        tested = self._tested(sight, checked, run) if checked is not None and not problems else None
        return {"problems": _shown(problems), **({"tests": tested} if tested is not None else {})}

    def _check(self, sight: _StoreView, prompt: Offered, data: bytes) -> tuple[Prompt | None, list[PromptFileError]]:
        """What ``check`` finds in ``data`` as ``prompt``'s file in the served label, as its principal may
        know it: the file's own problems (its material read from the label; a file the principal may not
        see is absent; a skill's ``SKILL.md`` is held to the skill's rules too), a version the principal
        could not see, and its name taken by another prompt."""
        library = self.source.library
        if library is None:
            raise HttpError(503, "the label is not loaded yet; try again")
        path = prompt.source
        with viewing(sight.held):
            parsed = build_prompt(library, path, stage_file(path, data), compile_now=True)
        checked = parsed.prompt
        as_skill = _skill_md_problems(path, data)
        if checked is None or as_skill:
            return None, list(dict.fromkeys([*parsed.errors, *as_skill]))
        if not may_see(sight.held, checked.scopes):
            front = split_front_matter(data.decode("utf-8"))[0] or ""  # it parsed: it has front matter
            return None, [PromptFileError(path, f"scopes: {shown_scopes(checked.scopes)}: you could not see this "
                                                "version; save only versions your own scopes show you",
                                          line_of_key(front, "scopes"))]
        if checked.name == prompt.name:
            return checked, parsed.errors
        position = sight.store.reads.require_position(self.source.label)
        for other in sight.store.reads.listed(position, name=checked.name):
            if other.path != path:
                # A name is one namespace for everyone: a hidden prompt's is refused too, but never named.
                where = other.path if may_see(sight.held, parse_scopes(other.scopes)) else None
                reason = f"is already used by {where}" if where else "cannot be used here; choose another"
                return None, [PromptFileError(path, f"prompt name {checked.name!r} {reason}")]
        return checked, parsed.errors

    def _publish(self, sight: _StoreView, prompt: Offered, data: bytes, edit: _Edit, label: str | None,
                 author: str) -> dict[str, Any]:
        into = proposals.pushable(sight, edit.proposal, label) if edit.proposal is not None else None
        checked, problems = self._check(sight, prompt, data)
        if problems:
            raise HttpError(422, f"nothing saved: {len(problems)} problem{'s' * (len(problems) != 1)} in "
                                f"{prompt.source}", problems=_shown(problems))
        message = edit.message
        if checked is not None and edit.skip_tests:
            message = f"{message} [tests skipped: saved with skip_tests]".lstrip()
        elif checked is not None:
            report = store_tests.run_for(checked, sight.held)
            if report is not None and not report.passed:
                raise HttpError(422, f"nothing saved: {report.failed_cases} test case"
                                     f"{'s' * (report.failed_cases != 1)} of {prompt.source} failed",
                                problems=[], tests=store_tests.shown(checked, report))
        listed = listing_of(checked) if checked is not None else None
        path = prompt.source
        proposing = edit.propose or into is not None
        version, publish = sight.store.publish_file(
            path, data, listed, author=author, message=message, base=edit.base, label=None if proposing else label,
            seen=lambda number: sight.version(path, number), allow=sight.allow_move, guard=governance.guard(sight.held))
        log.info("%s saved %s version %d%s", author, path, version, f" (label {label})" if label else "")
        target = into.label if into is not None else label
        proposed = {"proposal": proposals.propose_saved(sight, target, path, version, author, message, into)} \
            if proposing and target is not None else {}  # (checked before the save)
        return {"prompt": prompt.name, "path": path, "version": version, "publish": publish,
                "changed": publish is not None, **proposed}

    def _point(self, sight: _StoreView, prompt: Offered, version: int, label: str, author: str,
               message: str) -> dict[str, Any]:
        if not sight.version(prompt.source, version):
            raise no_version(prompt.source, version)
        found = sight.store.label(prompt.source, version, label, author=author, allow=sight.allow_move,
                                  message=message, guard=governance.guard(sight.held))
        log.info("%s pointed label %s at %s version %d", author, label, prompt.source, found)
        return {"label": label, "prompt": prompt.name, "version": found}

    def _rollback(self, sight: _StoreView, label: str, author: str, message: str) -> dict[str, Any]:
        before = sight.store.rollback(label, author=author, allow=sight.allow_move, message=message,
                                      guard=governance.guard(sight.held))
        log.info("%s rolled label %s back to position %d", author, label, before.id)
        return {"label": label, "position": before.id, "reason": before.reason}

    # -- shared ----------------------------------------------------------------------------------

    def _may_write(self, principal: Principal) -> bool:
        return may_write(principal.scopes, self.write_scope)

    def _visible(self, principal: Principal, name: str) -> Offered:
        """The served prompt ``name`` from this label, if the principal may see it; else 404, the same answer
        for a prompt hidden by scopes as for one that does not exist."""
        prompt = self.server.catalog.view(principal.scopes).get(name)
        if prompt is None or prompt.meta.get(META_LABEL) != self.source.label:
            raise HttpError(404, f"no prompt {name!r} in label {self.source.label}")
        return prompt

    def _visible_skill_file(self, principal: Principal, uri: str) -> str:
        """The store path of the file ``uri`` names of a skill this label serves, if the principal may see the
        skill; else 404, in the same words for a hidden skill as for no skill at all."""
        target = resolve_skill_uri(uri, self.source.skills(), principal.scopes)
        if target is None or target.directory:
            raise HttpError(404, f"no skill file {uri[:300]!r} in label {self.source.label}")
        return f"{target.skill.origin}/{target.rel}"

    async def _run(self, principal: Principal, call: Callable[..., T], *args: Any) -> T:
        """``call(store, *args)`` in a thread, on a connection of its own, within the quota."""
        refusal = self.calls.refusal(principal.name)
        if refusal is not None:
            raise refusal

        stop = current_stop()

        def opened() -> T:
            with stopping(stop), Store(self.source.url) as store:
                return call(_StoreView(store, principal.scopes), *args)

        with self.calls.hold(principal.name):
            try:
                return await asyncio.to_thread(opened)
            except StoreMissing as exc:
                raise HttpError(404, str(exc)) from None
            except TestsFailed as exc:
                raise governance.tests_refusal(exc, principal.scopes) from None
            except StoreConflict as exc:
                raise HttpError(409, str(exc)) from None
            except StoreError as exc:
                # Readers learn only that it failed: the details (which host, which driver error) are the
                # operator's, in the server log, with the URL's secrets masked by ``Store``.
                log.error("store call failed: %s", exc)
                raise HttpError(503, "store unavailable") from None

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        if media_type(headers_of(scope).get(b"content-type")) != b"application/json":
            raise HttpError(415, "send the body as application/json")
        return await read_body(receive, MAX_BODY_BYTES, headers_of(scope).get(b"content-length"))


class _StoreView:
    """One store call's view of the store, as one principal may see it: the access rule
    (``prompts.access.may_see``) applied to each version by its own scopes."""

    __slots__ = ("store", "held", "_seen", "_rule")

    def __init__(self, store: Store, held: frozenset[str] | None) -> None:
        self.store = store
        self.held = held
        self._seen: dict[tuple[str, int], bool] = {}
        #: the store's rule of who sees a version (``sources.store.seen``), with its reads cached
        self._rule = Seen(store.reads)

    def version(self, path: str, version: int, recorded: Recorded | None = None) -> bool:
        """Whether the principal may see ``version`` of ``path`` (``Seen.may_see``: a prompt file's version by
        its own scopes, a skill's file only by whoever may see every skill it lies in)."""
        key = (path, version)
        if key not in self._seen:
            self._seen[key] = self._rule.may_see(self.held, path, version, recorded)
        return self._seen[key]

    def content(self, prompt: Offered, version: int) -> tuple[int, bytes | None]:
        """(version, bytes) of a version of ``prompt`` the principal may see; a hidden one is unknown. The
        bytes must agree with the recorded scopes, so a forged row cannot show a hidden version."""
        return self.file_content(prompt.source, version, prompt.name)

    def file_content(self, path: str, version: int, shown: str) -> tuple[int, bytes | None]:
        """``content`` of any file, named ``shown`` in what is said of a version it has not."""
        if not self.version(path, version):
            raise no_version(shown, version)
        found, data = self.store.reads.file_version(path, version, shown)
        if data is not None and is_prompt_path(path):
            own = file_scopes(path, data)
            if own is None or not may_see(self.held, own):
                raise no_version(shown, version)
        return found, data

    def _changed(self, before: dict[str, int], after: dict[str, int]) -> tuple[int, int]:
        """(visible, hidden): the paths whose version differs between two positions' files, counted by
        whether the principal may see both their versions."""
        pairs = {(path, version) for path, version in before.items() if after.get(path) != version}
        pairs |= {(path, version) for path, version in after.items() if before.get(path) != version}
        recorded = self.store.reads.recorded(pairs)
        hidden = {path for path, version in pairs if not self.version(path, version, recorded.get((path, version)))}
        return len({path for path, _ in pairs} - hidden), len(hidden)

    def allow_move(self, before: dict[str, int], after: dict[str, int]) -> None:
        """A label move's rule (``Store.MoveRule``): never through a change the principal cannot see."""
        if self._changed(before, after)[1]:
            raise HttpError(403, "this label move would change versions outside your scopes; nothing changed. "
                                "Someone who holds their scopes must make it")

    def move(self, move: Any, before: Position | None, after: Position | None) -> dict[str, Any]:
        """A label move as the overview shows it. One that changed only what the principal may not see
        keeps only its position and time: its reason may name what it changed, its author is its history.
        (A move of several files names none of them.)"""
        shown = _move(move)
        if after is not None:
            visible, hidden = self._changed(before.files if before is not None else {}, after.files)
            if hidden and not visible:
                shown.update(reason="label moved", author=None)
        return shown


def _skill_md_problems(path: str, data: bytes) -> list[PromptFileError]:
    """What breaks the Agent Skills format in ``data`` as the ``SKILL.md`` at ``path``, if it is a skill's."""
    if not (path.endswith("/SKILL.md") and in_skill(path)):
        return []
    found = skill_md_front(data, path.rsplit("/", 2)[-2]).problems
    return [PromptFileError(path, message, line) for message, line in found]


def _versions(sight: _StoreView, path: str) -> list[dict[str, Any]]:
    """The versions of ``path`` the principal may see, newest first, with the labels at each now."""
    labels = sight.store.reads.labels_at(path)
    return [{"version": v.version, "publish": v.publish, "author": v.author, "message": v.message,
             "created": v.created, "deleted": v.digest is None, "labels": labels.get(v.version, []),
             "git": None if v.git is None else v.git._asdict()}
            for v in sight.store.reads.history(path)
            if sight.version(path, v.version, Recorded(v.prompt, v.digest, v.scopes, v.publish))]


def _query(scope: Scope) -> dict[str, str]:
    from urllib.parse import parse_qsl

    try:
        pairs = parse_qsl(scope.get("query_string", b"").decode("utf-8"), keep_blank_values=True,
                          strict_parsing=False, max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        raise HttpError(400, "the query string is not valid") from None
    return dict(pairs)


def _field(query: dict[str, str], name: str) -> str:
    value = query.get(name)
    if not value:
        raise HttpError(400, f"the query needs {name}=…")
    return value


def _number(query: dict[str, str], name: str) -> int:
    value = _field(query, name)
    if not value.isdigit() or len(value) > 12:
        raise HttpError(400, f"{name} must be a version number, not {value[:40]!r}")
    return int(value)


def _decode(body: bytes, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as exc:
        raise HttpError(400, f"the body is not what this call takes: {exc}") from None
    except msgspec.DecodeError as exc:
        raise HttpError(400, f"the body is not JSON: {exc}") from None


def _text(edit: _Edit) -> bytes:
    data = edit.text.encode("utf-8")  # msgspec refuses a lone surrogate (\ud800) as not JSON
    if len(data) > MAX_PROMPT_FILE_BYTES:
        raise HttpError(413, f"text: a prompt file is at most {MAX_PROMPT_FILE_BYTES} bytes")
    return data


def _label(value: str) -> str:
    if not is_label(value):
        raise HttpError(400, f"label {value[:80]!r} is not valid: use 1-64 letters, digits, '_', '-' and '.'")
    return value


def _message(body: T) -> T:
    """``body`` if its ``message`` (why, kept in the label's history) is within bounds; else 400."""
    if len(getattr(body, "message", "")) > MAX_MESSAGE_CHARS:
        raise HttpError(400, f"message: at most {MAX_MESSAGE_CHARS} characters")
    return body


def _shown(problems: list[PromptFileError]) -> list[dict[str, Any]]:
    """Problems as the API gives them: the line in the text sent (None: the whole file) and the reason."""
    return [{"line": problem.line, "message": problem.reason} for problem in problems]


def _move(move: Any) -> dict[str, Any]:
    return {"position": move.position, "reason": move.reason, "author": move.author, "created": move.created}


async def _send(send: Send, status: int, body: dict[str, Any]) -> None:
    # The answers carry prompt text: never cached by a shared cache, never sniffed as something else (the
    # refusals carry the same headers: ``asgi.respond_refusal``).
    await respond(send, status, encode_json(body), headers=[(b"cache-control", b"no-store"),
                                                            (b"x-content-type-options", b"nosniff")])
