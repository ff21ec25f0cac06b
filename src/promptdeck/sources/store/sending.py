"""One webhook request: signed as the Standard Webhooks specification says, sent by aiohttp, bounded.

The request is a POST of the delivery's JSON body with ``webhook-id`` (the event's, the same on every
retry, so a receiver can drop a repeat), ``webhook-timestamp`` (this attempt's, in seconds) and
``webhook-signature`` (``v1,`` and the base64 HMAC-SHA256 of ``id.timestamp.body`` keyed by the secret's
bytes), signed by the ``standardwebhooks`` package.

What a target may do to the sender is bounded: only a 2xx answer is a success; a redirect is not followed
(a 3xx is a failure); the whole request has ``timeout`` seconds; at most ``MAX_ANSWER_BYTES`` of an answer
are read; the proxy settings of the environment are not used. An address that is not public is refused
unless the webhook was allowed it (``webhooks.ALLOWANCES``), and the address checked is the one connected
to: the host is resolved once, by the resolver given to aiohttp, which refuses the whole name when any of
its addresses is refused (a name that resolves to a public address first and a metadata address next, DNS
rebinding, gets nowhere). This module imports aiohttp, so only the delivering thread imports it, when it
first has something to send.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from standardwebhooks.webhooks import Webhook as Signer

from ..._version import __version__

#: How much of an answer is read (its status and head are all that decide; the rest is for the log).
MAX_ANSWER_BYTES = 4096

#: Addresses refused unless the webhook is allowed ``link-local``: link-local, and the cloud metadata
#: services' addresses that are not (Alibaba's 100.100.100.200, AWS's IPv6 fd00:ec2::254).
_LINK_LOCAL = [ipaddress.ip_network(n) for n in ("169.254.0.0/16", "fe80::/10", "100.100.100.200/32",
                                                  "fd00:ec2::254/128")]
#: Refused unless the webhook is allowed ``private``: loopback, RFC 1918, CGNAT, IPv6 unique local.
_PRIVATE = [ipaddress.ip_network(n) for n in ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12",
                                               "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")]


class Refused(Exception):
    """The target's address is one the webhook may not reach."""


#: IPv6 prefixes whose last 32 bits are an IPv4 address a gateway forwards to (NAT64: RFC 6052, RFC 8215).
_NAT64 = [ipaddress.ip_network(n) for n in ("64:ff9b::/96", "64:ff9b:1::/48")]


def refused(address: str, allow: tuple[str, ...]) -> str | None:
    """Why the IP ``address`` may not be sent to by a webhook allowed ``allow``; None when it may."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 address inside an IPv6 one reaches that IPv4 address: ::ffff:169.254.169.254 directly, 6to4
        # and NAT64 through a gateway. It is judged as that address.
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.sixtofour is not None:
            ip = ip.sixtofour
        elif any(ip in net for net in _NAT64):
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip in net for net in _LINK_LOCAL):
        return None if "link-local" in allow else f"{ip} is link-local or a metadata address (--allow link-local)"
    if any(ip in net for net in _PRIVATE):
        return None if "private" in allow else f"{ip} is a loopback or private address (--allow private)"
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved or not ip.is_global:
        return f"{ip} is not an address a webhook is sent to"
    return None


class _CheckedResolver(AbstractResolver):
    """The system's resolver, refusing a name when any of its addresses is refused."""

    def __init__(self, allow: tuple[str, ...]) -> None:
        self._inner = ThreadedResolver()
        self._allow = allow

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        for result in found:
            why = refused(result["host"], self._allow)
            if why is not None:
                raise Refused(f"{host} resolves to {why}")
        return found

    async def close(self) -> None:
        await self._inner.close()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt came to: the status (None: no answer) and, for a failure, why, in one line."""

    code: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.code is not None and 200 <= self.code < 300


def headers(message_id: str, secret: str, body: str, now: float) -> dict[str, str]:
    """The Standard Webhooks headers of ``body`` sent at ``now``."""
    when = datetime.datetime.fromtimestamp(int(now), datetime.UTC)
    return {"content-type": "application/json", "user-agent": f"promptdeck/{__version__}",
            "webhook-id": message_id, "webhook-timestamp": str(int(now)),
            "webhook-signature": Signer(secret).sign(message_id, when, body)}


async def send(url: str, message_id: str, secret: str, body: str, *, allow: tuple[str, ...], timeout: float,
               now: float) -> Outcome:
    """POST one delivery; never raises for what the target or the network does."""
    host = urlsplit(url).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # aiohttp connects to an address literal without asking the resolver
        why = refused(host, allow)
        if why is not None:
            return Outcome(None, f"refused: {why}")
    connector = aiohttp.TCPConnector(resolver=_CheckedResolver(allow), use_dns_cache=False, force_close=True,
                                     limit=1)
    try:
        async with aiohttp.ClientSession(connector=connector, trust_env=False,
                                         timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.post(url, data=body.encode(), headers=headers(message_id, secret, body, now),
                                    allow_redirects=False) as answer:
                await answer.content.read(MAX_ANSWER_BYTES)  # drained no further: the connection is closed
                code = answer.status
    except Refused as exc:
        return Outcome(None, f"refused: {exc}")
    except TimeoutError:
        return Outcome(None, f"no answer within {timeout:g} s")
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return Outcome(None, _one_line(exc, url))
    if 300 <= code < 400:
        return Outcome(code, "a redirect (not followed)")
    return Outcome(code, None if 200 <= code < 300 else f"HTTP {code}")


def _one_line(exc: BaseException, url: str) -> str:
    """An exception as one line for the log and ``webhook log``, naming the target by scheme and host only."""
    cause: Any = exc
    # aiohttp wraps the resolver's refusal in ClientConnectorError; its cause says why.
    while cause.__cause__ is not None and not isinstance(cause, Refused):
        cause = cause.__cause__
    if isinstance(cause, Refused):
        return f"refused: {cause}"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    parts = urlsplit(url)
    for secretish in (url, parts.path, parts.query):  # what a chat service's URL keeps its credential in
        if len(secretish) > 1:
            text = text.replace(secretish, "…")
    return text[:300]
