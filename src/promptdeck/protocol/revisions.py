"""Which protocol revision has which field, content type and behaviour.

Encoding for a session reads this table instead of comparing version strings
all over the code: ``REVISIONS["2024-11-05"].resource_link`` says whether a
``resource_link`` block may be sent to such a peer.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Revision(msgspec.Struct, frozen=True, kw_only=True):
    version: str
    #: Prompt.title, PromptArgument.title, Implementation.title
    titles: bool
    #: _meta on Prompt, content blocks and resource contents
    meta: bool
    #: Prompt.icons and Implementation.icons/description/websiteUrl
    icons: bool
    #: the audio content block
    audio: bool
    #: the resource_link content block
    resource_link: bool
    #: Annotations.lastModified
    last_modified: bool
    #: the ``completions`` server capability flag
    completions_capability: bool
    #: notifications/progress ``message``
    progress_message: bool
    #: JSON-RPC batches (arrays) are accepted
    batches: bool
    #: completion/complete ``context.arguments``
    completion_context: bool
    #: SSE streams open with a priming event (an id and a retry hint) and every event has an id
    sse_priming: bool
    #: Tool.annotations (read-only, idempotent hints)
    tool_annotations: bool = True
    #: Tool.outputSchema and CallToolResult.structuredContent
    structured_output: bool = True
    #: Tool.inputSchema may carry any JSON Schema keyword at its root (before: type, properties, required)
    schema_keywords: bool = False
    #: the version travels in every request's ``_meta``: no initialize, no session (2026-07-28 on)
    modern: bool = False
    #: the server may ask a client that declared ``elicitation`` to fill in a form (``elicitation/create``)
    elicitation: bool = False
    #: elicitation has modes: a request names its ``mode``, and the capability lists ``form`` and ``url``
    #: (an empty object still means form)
    elicitation_modes: bool = False

    def elicits_forms(self, capabilities: object) -> bool:
        """Whether a client that declared ``capabilities`` may be asked to fill in a form in this revision."""
        if not self.elicitation or type(capabilities) is not dict:
            return False
        elicitation = capabilities.get("elicitation")
        if type(elicitation) is not dict:
            return False
        return not self.elicitation_modes or not elicitation or "form" in elicitation


R2024_11_05 = Revision(version="2024-11-05", titles=False, meta=False, icons=False, audio=False,
                       resource_link=False, last_modified=False, completions_capability=False,
                       progress_message=False, batches=False, completion_context=False, sse_priming=False,
                       tool_annotations=False, structured_output=False)
R2025_03_26 = Revision(version="2025-03-26", titles=False, meta=False, icons=False, audio=True,
                       resource_link=False, last_modified=False, completions_capability=True,
                       progress_message=True, batches=True, completion_context=False, sse_priming=False,
                       structured_output=False)
R2025_06_18 = Revision(version="2025-06-18", titles=True, meta=True, icons=False, audio=True,
                       resource_link=True, last_modified=True, completions_capability=True,
                       progress_message=True, batches=False, completion_context=True, sse_priming=False,
                       elicitation=True)
R2025_11_25 = Revision(version="2025-11-25", titles=True, meta=True, icons=True, audio=True,
                       resource_link=True, last_modified=True, completions_capability=True,
                       progress_message=True, batches=False, completion_context=True, sse_priming=True,
                       elicitation=True, elicitation_modes=True)

#: The modern era: no handshake, the version travels in every request's ``_meta``.
R2026_07_28 = Revision(version="2026-07-28", titles=True, meta=True, icons=True, audio=True,
                       resource_link=True, last_modified=True, completions_capability=True,
                       progress_message=True, batches=False, completion_context=True,
                       # no event ids: 2026-07-28 streams do not resume
                       sse_priming=False, schema_keywords=True, modern=True, elicitation=True,
                       elicitation_modes=True)
#: The newest modern revision: what promptdeck's client asks for, and what a server's ``_meta`` identity
#: is built for.
NEWEST_MODERN = R2026_07_28
MODERN: dict[str, Revision] = {R2026_07_28.version: R2026_07_28}

#: Revisions negotiated with ``initialize``, oldest first.
LEGACY: tuple[Revision, ...] = (R2024_11_05, R2025_03_26, R2025_06_18, R2025_11_25)
REVISIONS: dict[str, Revision] = {r.version: r for r in LEGACY}
LATEST = R2025_11_25
#: What a Streamable HTTP request without ``MCP-Protocol-Version`` is taken to speak (the spec's choice).
HTTP_DEFAULT = R2025_03_26
#: Every revision promptdeck speaks, newest first (what an unsupported-version error lists).
SUPPORTED: tuple[str, ...] = (*MODERN, *reversed(REVISIONS))


def negotiate(requested: object) -> Revision:
    """The revision to answer an ``initialize`` with: the client's if we have it, else our newest."""
    if isinstance(requested, str):
        revision = REVISIONS.get(requested)
        if revision is not None:
            return revision
    return LATEST


#: The prefix of the 2026-07-28 ``_meta`` keys, and the one that says a request belongs to that era.
PREFIX = "io.modelcontextprotocol/"
META_VERSION = PREFIX + "protocolVersion"


def modern_meta(params: object) -> dict[str, Any] | None:
    """The ``_meta`` of a 2026-07-28 request (one that names its protocol version there); None for a
    legacy message. Transports call this once per message and hand the result on. It lives here, not in
    ``server.modern``, so a legacy session can tell the eras apart without importing the modern one."""
    if type(params) is not dict:
        return None
    meta = params.get("_meta")
    return meta if type(meta) is dict and META_VERSION in meta else None
