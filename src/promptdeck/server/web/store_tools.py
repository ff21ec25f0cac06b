"""The store's MCP tools for agents (``serve --store URL --write-tools``, docs/store.md#agents): read a prompt's
versions, a version's text and a diff of two, propose a change, read a proposal and comment on one.

They are ``/api/store`` over MCP, for the same principal with the same rights, so every rule is the store API's
own, called rather than copied (``store_api``, ``store_proposals``):

- who may use them: ``security.principals.may_write`` with the server's write scope (the rule of every write to
  the store). ``tools/list`` shows them only to such a principal; a call from anyone else is -32602 naming the
  scope. A local stdio client is trusted with everything, so it may (it is the user who started the server);
- what a principal reads through them: ``StoreApi._visible`` and ``_StoreView`` (each version by its own
  scopes), so a prompt, a version or a proposal hidden from the principal is answered exactly as one that does
  not exist;
- what a proposal is: its files' new versions are checked as a web save is (``StoreApi._check``: no version
  the principal could not see, no name taken) and saved with their tests run (``StoreApi._publish``), with no
  label given, so **no label moves**; then ``Store.proposals.open`` opens the proposal under the authenticated
  principal's name. It is reviewed like any other: its author cannot approve it, and only a merge, through the
  label's gate, serves it. There is no tool to approve, reject or merge.

Arguments are decoded into typed structs (unknown fields refused) and bounded as the store API bounds its
bodies; what is not what a tool takes is -32602 naming the field. What the store refuses (an unknown prompt, a
conflict, a failing test) is an ``isError`` result the model can read and act on.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from ...protocol.errors import HttpError, InvalidParams, LibraryError
from ...sources.files.source import MAX_PROMPT_FILE_BYTES
from ...sources.store.model import is_label
from ...sources.store.proposals import MAX_COMMENT_CHARS
from ...sources.store.source import StoreSource
from ..security.principals import DEFAULT_WRITE_SCOPE, Principal, may_write
from . import store_proposals as proposals
from .store_api import MAX_MESSAGE_CHARS, StoreApi, Version, _Edit, _shown, _StoreView

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from ...prompts.spec import Offered
    from ...protocol.revisions import Revision
    from ..app import PromptServer

VERSIONS = "prompt_versions"
SOURCE = "prompt_source"
DIFF = "prompt_diff"
PROPOSE = "propose_change"
PROPOSAL = "read_proposal"
COMMENT = "comment_on_proposal"
#: Files one proposal may change: a request holds at most this many prompt files' text.
MAX_FILES = 20
_NAME = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
_ID = Annotated[int, msgspec.Meta(ge=1, le=2**53)]


class _Prompt(msgspec.Struct, forbid_unknown_fields=True):
    prompt: _NAME


class _Source(msgspec.Struct, forbid_unknown_fields=True):
    prompt: _NAME
    version: Version


class _Diff(msgspec.Struct, forbid_unknown_fields=True):
    prompt: _NAME
    from_: Version = msgspec.field(name="from")
    to: Version


class _File(msgspec.Struct, forbid_unknown_fields=True):
    prompt: _NAME
    text: str
    base: Version | None = None


class _Propose(msgspec.Struct, forbid_unknown_fields=True):
    files: Annotated[list[_File], msgspec.Meta(min_length=1, max_length=MAX_FILES)]
    message: Annotated[str, msgspec.Meta(max_length=MAX_MESSAGE_CHARS)] = ""
    label: str | None = None


class _Proposal(msgspec.Struct, forbid_unknown_fields=True):
    proposal: _ID


class _Comment(msgspec.Struct, forbid_unknown_fields=True):
    proposal: _ID
    message: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_COMMENT_CHARS)]


_PROMPT = {"type": "string", "maxLength": 200, "description": "The prompt's name (as prompts/list shows it)."}
_VERSION = {"type": "integer", "minimum": 0}
_PROPOSAL_ID = {"type": "integer", "minimum": 1, "description": "The proposal's number."}


def _tool(name: str, title: str, description: str, properties: dict[str, Any], required: list[str],
          read_only: bool) -> dict[str, Any]:
    return {"name": name, "title": title, "description": description,
            "inputSchema": {"type": "object", "properties": properties, "required": required,
                            "additionalProperties": False},
            "annotations": {"title": title, "readOnlyHint": read_only, "destructiveHint": False,
                            "idempotentHint": read_only, "openWorldHint": False}}


#: The tools, each with its arguments' struct; shown to writers in name order.
TOOLS: dict[str, tuple[dict[str, Any], type[msgspec.Struct]]] = {
    VERSIONS: (_tool(VERSIONS, "A prompt's versions", "Lists the versions of a prompt of the served label in the "
                     "store, newest first: who saved each, when, why, and which labels point at it.",
                     {"prompt": _PROMPT}, ["prompt"], True), _Prompt),
    SOURCE: (_tool(SOURCE, "A version's text", "Returns the text of one version of a prompt's file (its front "
                   "matter and template), to edit and propose back with propose_change.",
                   {"prompt": _PROMPT, "version": _VERSION}, ["prompt", "version"], True), _Source),
    DIFF: (_tool(DIFF, "Diff two versions", "Shows what changed in a prompt's file between two versions.",
                 {"prompt": _PROMPT, "from": _VERSION, "to": _VERSION}, ["prompt", "from", "to"], True), _Diff),
    PROPOSE: (_tool(PROPOSE, "Propose a change", "Saves new text for one or more prompts as new versions and "
                    "opens a proposal to serve them on a label. Nothing served changes: reviewers approve it "
                    "and merge it. Give each prompt's whole file text; base is the version you edited (a newer "
                    "one refuses the change).",
                    {"files": {"type": "array", "minItems": 1, "maxItems": MAX_FILES, "items": {
                        "type": "object", "additionalProperties": False, "required": ["prompt", "text"],
                        "properties": {"prompt": _PROMPT,
                                       "text": {"type": "string", "description": "The file's whole new text "
                                                f"(at most {MAX_PROMPT_FILE_BYTES} bytes)."},
                                       "base": {**_VERSION, "description": "The version the text was edited "
                                                "from."}}}},
                     "message": {"type": "string", "maxLength": MAX_MESSAGE_CHARS, "description": "Why."},
                     "label": {"type": "string", "description": "The label to propose it for (default: the "
                               "label this server serves)."}},
                    ["files"], False), _Propose),
    PROPOSAL: (_tool(PROPOSAL, "Read a proposal", "Shows a proposal: its changes as diffs against what its label "
                     "serves, its approvals and its comments.", {"proposal": _PROPOSAL_ID}, ["proposal"], True),
               _Proposal),
    COMMENT: (_tool(COMMENT, "Comment on a proposal", "Adds a comment to a proposal, for its reviewers and authors.",
                    {"proposal": _PROPOSAL_ID,
                     "message": {"type": "string", "minLength": 1, "maxLength": MAX_COMMENT_CHARS}},
                    ["proposal", "message"], False), _Comment),
}


def offer(server: PromptServer, write_scope: str = DEFAULT_WRITE_SCOPE) -> None:
    """Offer the write tools of the store label ``server`` serves (``serve --write-tools``)."""
    stored = [source for source in server.sources if isinstance(source, StoreSource)]
    if not stored:
        raise LibraryError("--write-tools offers a store's tools: give --store URL")
    server.offer_write_tools(StoreTools(StoreApi(server, stored[0], write_scope)))


class StoreTools:
    """The write tools of one server's store label (a ``server.tools.WriteTools``), through its ``StoreApi``."""

    names = frozenset(TOOLS)

    def __init__(self, api: StoreApi) -> None:
        self.api = api
        self._listed = tuple(tool for _, (tool, _) in sorted(TOOLS.items()))

    def listed(self, scopes: frozenset[str] | None) -> tuple[dict[str, Any], ...]:
        return self._listed if may_write(scopes, self.api.write_scope) else ()

    def call(self, name: str, arguments: dict[str, Any] | None, principal: str, scopes: frozenset[str] | None,
             rev: Revision) -> Awaitable[dict[str, Any]]:
        scope = self.api.write_scope
        if not may_write(scopes, scope):
            raise InvalidParams(f"tool {name!r} needs the scope {scope}, which this principal does not hold",
                                {"tool": name, "scope": scope})
        given = _decoded(name, arguments)
        return self._answer(name, given, Principal(principal, scopes), rev)

    async def _answer(self, name: str, given: Any, principal: Principal, rev: Revision) -> dict[str, Any]:
        api = self.api
        try:
            if isinstance(given, _Propose):
                label = _label(given.label, api.source.label)
                files = _files(given.files)  # -32602 before any store call
                prompts = [(api._visible(principal, f.prompt), data, f.base) for f, data in files]
                answer = await api._run(principal, self._propose, prompts, label, given.message, principal.name)
                return _result(f"Proposal {answer['proposal']} opened for label {label}: nothing is served until "
                               "reviewers approve and merge it.", answer, rev)
            if isinstance(given, _Comment):
                call = proposals.ProposalCall(id=given.proposal, message=given.message)
                answer = await api._run(principal, proposals.act, "/proposal/comment", call, principal.name)
                return _result(f"Commented on proposal {given.proposal}.", answer, rev)
            if isinstance(given, _Proposal):
                answer = await api._run(principal, proposals.GETS["/proposal"], {"id": str(given.proposal)})
                return _result(json.dumps(answer, indent=1), answer, rev)
            prompt = api._visible(principal, given.prompt)
            if isinstance(given, _Source):
                answer = await api._run(principal, api._version, prompt, given.version)
                return _result(answer["text"] if answer["text"] is not None else
                               f"version {answer['version']} deletes {answer['path']}", answer, rev)
            if isinstance(given, _Diff):
                answer = await api._run(principal, api._diff, prompt, given.from_, given.to)
                return _result(_diff_text(answer), answer, rev)
            answer = await api._run(principal, api._history, prompt)
            return _result(json.dumps(answer["versions"], indent=1), answer, rev)
        except HttpError as exc:
            return _refused(exc)

    def _propose(self, sight: _StoreView, prompts: list[tuple[Offered, bytes, int | None]], label: str,
                 message: str, author: str) -> dict[str, Any]:
        """(In the store call's thread.) Check every file, save each as a new version moving no label, and open
        the proposal of those versions for ``label``."""
        api = self.api
        for prompt, data, _ in prompts:  # all checked before any is saved
            problems = api._check(sight, prompt, data)[1]
            if problems:
                raise HttpError(422, f"nothing proposed: {len(problems)} problem{'s' * (len(problems) != 1)} in "
                                     f"{prompt.source}", problems=_shown(problems))
        files: dict[str, int] = {}
        for prompt, data, base in prompts:
            edit = _Edit(prompt=prompt.name, text="", message=message, base=base)
            saved = api._publish(sight, prompt, data, edit, None, author)  # label None: no label moves
            files[saved["path"]] = saved["version"]
        opened = sight.store.proposals.open(label, files, author=author, message=message)
        return {"proposal": opened.id, "label": label, "files": opened.files, "author": author}


def _decoded(name: str, arguments: dict[str, Any] | None) -> Any:
    """The call's arguments as the tool's struct; -32602 naming the field otherwise."""
    try:
        return msgspec.convert(arguments or {}, type=TOOLS[name][1])
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"tool {name!r}: {exc}", {"tool": name}) from None


def _files(files: list[_File]) -> list[tuple[_File, bytes]]:
    seen: set[str] = set()
    out = []
    for number, file in enumerate(files):
        try:
            data = file.text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: JSON may carry one, UTF-8 cannot
            raise InvalidParams(f"$.files[{number}].text: is not valid Unicode text",
                                {"field": f"files[{number}].text"}) from None
        if len(data) > MAX_PROMPT_FILE_BYTES:
            raise InvalidParams(f"$.files[{number}].text: a prompt file is at most {MAX_PROMPT_FILE_BYTES} bytes",
                                {"field": f"files[{number}].text"})
        if file.prompt in seen:
            raise InvalidParams(f"$.files[{number}].prompt: {file.prompt!r} is given twice",
                                {"field": f"files[{number}].prompt"})
        seen.add(file.prompt)
        out.append((file, data))
    return out


def _label(given: str | None, served: str) -> str:
    if given is None:
        return served
    if not is_label(given):
        raise InvalidParams(f"$.label: {given[:80]!r} is not a label: use 1-64 letters, digits, '_', '-' and '.'",
                            {"field": "label"})
    return given


def _diff_text(answer: dict[str, Any]) -> str:
    """The diff's rows as text: ``-`` a line of the older version, ``+`` of the newer."""
    lines = [f"--- {answer['path']} version {answer['from']}", f"+++ {answer['path']} version {answer['to']}"]
    for row in answer["source"]:
        if row["op"] == "skip":
            lines.append(f"@@ {row['count']} unchanged lines @@")
        elif row["op"] == "equal":
            lines.append("  " + row["left"][1])
        else:
            lines += [mark + row[side][1] for mark, side in (("- ", "left"), ("+ ", "right")) if row[side]]
    return "\n".join(lines) if not answer["same"] else "The two versions are the same."


def _result(text: str, answer: dict[str, Any], rev: Revision) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if rev.structured_output:
        result["structuredContent"] = answer
    return result


def _refused(exc: HttpError) -> dict[str, Any]:
    """What the store refused, for the model to read: the store API's message and its problems at their lines."""
    lines = [exc.message]
    lines += [f"line {p['line']}: {p['message']}" if p["line"] else p["message"] for p in exc.extra.get("problems", [])]
    return {"content": [{"type": "text", "text": "\n".join(lines)}], "isError": True}
