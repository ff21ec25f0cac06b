"""The one exception tree of promptdeck.

::

    PromptdeckError                 anything promptdeck raises on purpose
    ├── McpError(code, message, data)   crosses the wire as a JSON-RPC error
    │   ├── ParseError              -32700  bytes that are not JSON
    │   ├── InvalidRequest          -32600  JSON that is not a valid request
    │   ├── MethodNotFound          -32601  unknown method / capability not offered
    │   ├── InvalidParams           -32602  unknown prompt, bad argument, bad cursor
    │   ├── InternalError           -32603  a render failed; details stay in the log
    │   ├── HeaderMismatch          -32020  2026-07-28 HTTP headers disagree with the body
    │   ├── MissingCapability       -32021  2026-07-28: the request needs an undeclared client capability
    │   └── UnsupportedVersion      -32022  2026-07-28: a protocol version we do not speak
    ├── AuthError(status, error)    HTTP 401/403 before any JSON-RPC is read
    ├── HttpError(status, message)  any other HTTP refusal; turned into a response in one place
    ├── ClientError                 promptdeck's client: the server could not be used
    │   ├── ConnectionFailed        could not start or reach the server, or it went away
    │   ├── ProtocolViolation       the server sent what the protocol does not allow
    │   ├── RequestTimeout          no answer in time (the request was cancelled)
    │   └── OAuthError              OAuth discovery, registration, sign-in or the token file failed
    ├── LibraryError                a prompt source could not be loaded
    │   └── PromptFileError         one file at fault, with its path and line
    ├── LineError(message, line)    a file's text at fault at a line, before its path is added (also a ValueError)
    └── ConversionError             a rendered message a provider's format cannot carry (also a ValueError)

Library code raises these; the server turns ``McpError`` into a JSON-RPC error
and anything else into a generic ``InternalError`` (the details go to stderr).
The client turns a JSON-RPC error it receives back into the matching ``McpError``
(``from_wire``), so ``except InvalidParams`` works on both sides.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022


class PromptdeckError(Exception):
    """Root of every exception promptdeck raises on purpose."""


class McpError(PromptdeckError):
    """An error that is sent to the peer as a JSON-RPC error object."""

    code: int = INTERNAL_ERROR
    #: the HTTP status a 2026-07-28 request failing with this error gets
    http_status: int = 200

    def __init__(self, message: str, data: Any = None, *, code: int | None = None,
                 detail: str | None = None, http_status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if http_status is not None:
            self.http_status = http_status
        #: for the server log only, never sent: why an internal error happened
        self.detail = detail
        if code is not None:
            self.code = code

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(McpError):
    code = PARSE_ERROR


class InvalidRequest(McpError):
    code = INVALID_REQUEST


class MethodNotFound(McpError):
    code = METHOD_NOT_FOUND


class InvalidParams(McpError):
    code = INVALID_PARAMS


class HeaderMismatch(McpError):
    code = HEADER_MISMATCH
    http_status = 400


class MissingCapability(McpError):
    code = MISSING_CAPABILITY
    http_status = 400


class UnsupportedVersion(McpError):
    code = UNSUPPORTED_VERSION
    http_status = 400


class InternalError(McpError):
    """Sent as a generic message; ``detail`` says what went wrong, in the log only."""

    code = INTERNAL_ERROR

    def __init__(self, detail: str) -> None:
        super().__init__("Internal error", detail=detail)


class AuthError(PromptdeckError):
    """A request's credentials were missing, invalid (401) or lacked a scope (403).

    ``error`` is the RFC 6750 error code (``invalid_token``, ``insufficient_scope``) or None when no
    credentials were presented at all (the challenge then carries no error, per RFC 6750 section 3.1).
    """

    def __init__(self, message: str, *, status: int = 401, error: str | None = "invalid_token",
                 scopes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error = error
        self.scopes = scopes


class HttpError(PromptdeckError):
    """A request refused at the HTTP level, before or instead of a JSON-RPC answer.

    Routes raise it; the endpoint's boundary (``server.http.app``) turns it into the response, in the
    shape its path speaks: a JSON-RPC error object (``error``, else -32600 with ``message``) on the MCP
    paths, ``{"error": message, **extra}`` on the JSON API. ``headers`` go with it (``Retry-After``,
    ``Allow``, ``Connection: close``).
    """

    def __init__(self, status: int, message: str, *, headers: list[tuple[bytes, bytes]] | None = None,
                 error: McpError | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []
        self.error = error
        self.extra = extra


class ClientError(PromptdeckError):
    """promptdeck's client could not use a server; the message says which and why."""


class ConnectionFailed(ClientError):
    """The server could not be started or reached, or the connection ended; ``status`` is the HTTP status."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProtocolViolation(ClientError):
    """The server sent something the protocol does not allow (garbage, a cursor loop, a bad result)."""


class RequestTimeout(ClientError):
    """A request got no answer in time; the client has cancelled it."""


class OAuthError(ClientError):
    """The client could not get an access token: discovery, registration, sign-in, a token request, or the
    token file failed. The message names the URL or file at fault and, where there is one, the fix."""


_BY_CODE: dict[int, type[McpError]] = {
    cls.code: cls for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError,
                              HeaderMismatch, MissingCapability, UnsupportedVersion)
}


def from_wire(error: object) -> McpError:
    """The exception for a JSON-RPC error object a peer sent (an ``McpError`` subclass by code)."""
    if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error["code"], bool):
        return McpError(f"malformed error object: {error!r:.200}", code=INTERNAL_ERROR)
    code: int = error["code"]
    message = error.get("message")
    cls = _BY_CODE.get(code, McpError)
    exc = cls.__new__(cls)  # InternalError's own __init__ is for the sending side
    McpError.__init__(exc, message if isinstance(message, str) else "", error.get("data"), code=code)
    return exc


class LibraryError(PromptdeckError):
    """A prompt source could not be loaded as a whole (missing folder, duplicate names, …)."""


class PromptFileError(LibraryError):
    """One prompt file is at fault; ``line`` is 1-based, or None when it is the whole file."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class LineError(PromptdeckError, ValueError):
    """What a reader of one file's text refuses, at ``line`` (1-based in the whole file; None: the whole file).

    Front matter, a message block and a file in another tool's format all raise it; whoever knows the file's
    path turns it into a ``PromptFileError``. A ``ValueError`` too, as the text given was wrong.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class ConversionError(PromptdeckError, ValueError):
    """A rendered prompt that a provider's request format cannot carry (``promptdeck.providers``).

    ``index`` is the position of the MCP message at fault (None when the fault is not one message's), and
    the message names the provider, that index, the role and what was refused. A ``ValueError`` too, as the
    input given was wrong rather than anything promptdeck or the provider did.
    """

    def __init__(self, provider: str, index: int | None, message: str, *, role: str | None = None) -> None:
        where = provider if index is None else f"{provider}: message {index}" + (f" ({role})" if role else "")
        super().__init__(f"{where}: {message}")
        self.provider = provider
        self.index = index
