"""Langfuse prompts fetched from its server (``import langfuse --url``), through the client's HTTP library.

The public API's list (``GET /api/public/v2/prompts``, paged) names each prompt and its versions; each
version is then fetched whole (``GET /api/public/v2/prompts/NAME?version=N``) and read as an exported
record (``langfuse.read``). The keys go in one Basic authorization header, which ``HttpClient`` drops on a
redirect to another origin; they are never put in a URL, a message or a file. Every answer is bounded in
size (together at most ``MAX_INPUT_BYTES``) and time, and the pages and versions are bounded in number.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any
from urllib.parse import quote, urlsplit

from .model import MAX_INPUT_BYTES, MAX_PROMPTS, MAX_VERSIONS, Imported, ImportRefused
from .model import decode_json as _decode

#: Langfuse's own SDKs read the keys from these variables.
PUBLIC_KEY_ENV = "LANGFUSE_PUBLIC_KEY"
SECRET_KEY_ENV = "LANGFUSE_SECRET_KEY"
PAGE_SIZE = 100
MAX_PAGES = MAX_PROMPTS // PAGE_SIZE
#: The most versions one fetch asks for, and how long the whole fetch may take (each answer: ``timeout``).
MAX_FETCHES = 20_000
MAX_SECONDS = 900.0


def checked_url(url: str) -> str:
    """``url`` without a trailing ``/``; refused unless http(s) with a host and no credentials in it."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImportRefused(f"--url must be an http(s) URL of a Langfuse server, not {parts.scheme or url!r}")
    if parts.username is not None or parts.password is not None:
        raise ImportRefused("--url must not hold credentials: give the keys in "
                            f"${PUBLIC_KEY_ENV} and ${SECRET_KEY_ENV}")
    return url.rstrip("/")


async def fetch(url: str, public_key: str, secret_key: str, *, timeout: float = 30.0) -> list[Imported]:
    base = checked_url(url)
    try:
        async with asyncio.timeout(MAX_SECONDS):
            return await _fetch(base, public_key, secret_key, timeout)
    except TimeoutError:
        raise ImportRefused(f"{base}: the fetch took longer than {MAX_SECONDS:g} s") from None


async def _fetch(base: str, public_key: str, secret_key: str, timeout: float) -> list[Imported]:
    from ..client.fetch import HttpClient, TransportError
    from . import langfuse

    token = base64.b64encode(f"{public_key}:{secret_key}".encode()).decode("ascii")
    budget = [MAX_INPUT_BYTES]

    async def get(client: HttpClient, path: str) -> Any:
        address = base + path
        try:
            async with client.stream("GET", address) as response:
                body = await response.read(budget[0])
        except TransportError as exc:
            raise ImportRefused(f"{base}: {exc}") from None
        budget[0] -= len(body)
        if response.status_code != 200:
            why = " (check the keys)" if response.status_code in (401, 403) else ""
            raise ImportRefused(f"{address.split('?')[0]}: Langfuse answered {response.status_code}{why}")
        return _decode(body, address.split("?")[0])

    records: list[Any] = []
    async with HttpClient({"authorization": f"Basic {token}", "accept": "application/json"}, timeout) as client:
        names: list[tuple[str, list[int]]] = []
        for page in range(1, MAX_PAGES + 2):
            listed = await get(client, f"/api/public/v2/prompts?page={page}&limit={PAGE_SIZE}")
            data = listed.get("data") if isinstance(listed, dict) else None
            if not isinstance(data, list):
                raise ImportRefused(f"{base}: the prompts list is not {{\"data\": [...]}}")
            for meta in data:
                if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or \
                        not isinstance(meta.get("versions"), list) or \
                        not all(isinstance(v, int) and not isinstance(v, bool) for v in meta["versions"]):
                    raise ImportRefused(f"{base}: a prompt of the list has no name and versions: "
                                        f"{json.dumps(meta)[:100]}")
                if len(meta["versions"]) > MAX_VERSIONS:
                    raise ImportRefused(f"{base}: prompt {meta['name']!r} has more than {MAX_VERSIONS} versions")
                names.append((meta["name"], sorted(meta["versions"])))
            total = listed.get("meta", {}).get("totalPages", page) if isinstance(listed.get("meta"), dict) else page
            if not data or not isinstance(total, int) or page >= total:
                break
            if page > MAX_PAGES:
                raise ImportRefused(f"{base}: more than {MAX_PROMPTS} prompts")
        if sum(len(versions) for _, versions in names) > MAX_FETCHES:
            raise ImportRefused(f"{base}: more than {MAX_FETCHES} versions in all")
        for name, versions in names:
            for version in versions:
                records.append(await get(client, f"/api/public/v2/prompts/{quote(name, safe='')}?version={version}"))
    return langfuse.read(records, base)
