"""Issue 13, items 14, 15 and 16 (/metrics): forged tokens, forged log lines, and what /metrics tells.

Every case runs ``promptdeck serve --http`` as a real process and reads its stderr from a file.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from tests.support.http_server import http_server
from tests.support.issuer import Issuer

ACCEPT = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
#: A subject that, written raw, would add an audit line of its own naming another principal.
FORGING_SUB = "alice\npromptdeck INFO prompts/get principal=admin prompt=payroll outcome=ok duration_ms=0.10"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer()
    server.add_key("key-ec", ec.generate_private_key(ec.SECP256R1()))
    server.add_key("key-ed", ed25519.Ed25519PrivateKey.generate())
    yield server
    server.close()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("auth-logs")
    (root / "hello.md").write_text("---\ndescription: For everyone\n---\nHello!\n")
    (root / "payroll.md").write_text("---\ndescription: HR only\nscopes: [hr]\n---\nPayroll.\n")
    (root / "salaries.md").write_text("---\ndescription: HR only\nscopes: [hr]\n---\nSalaries.\n")
    return root


def rpc(url: str, token: str, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params else {})}
    return httpx.post(url, json=body, headers={**ACCEPT, "authorization": f"Bearer {token}"}, timeout=10)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(issuer: Issuer, url: str, alg: str, kid: str, signature: bytes = b"\0" * 64) -> str:
    """A token nobody signed, whose header names ``alg`` and one of the issuer's real keys."""
    now = int(time.time())
    claims = {"iss": issuer.url, "sub": "eve", "aud": url, "exp": now + 300, "scope": "prompts"}
    return ".".join([_b64(json.dumps({"alg": alg, "typ": "JWT", "kid": kid}).encode()),
                     _b64(json.dumps(claims).encode()), _b64(signature)])


def test_a_token_whose_algorithm_does_not_fit_the_key_gets_401_without_a_traceback(
        issuer: Issuer, library: Path, tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     stderr_path=log) as url:
        mismatches = [("ES256", "key-1"), ("ES384", "key-1"), ("ES512", "key-1"), ("EdDSA", "key-1"),
                      ("RS256", "key-ec"), ("PS256", "key-ec"), ("ES384", "key-ec"), ("EdDSA", "key-ec"),
                      ("ES256", "key-ed"), ("RS256", "key-ed")]
        for alg, kid in mismatches:
            for signature in (b"\0" * 64, b"", b"\xff" * 512):
                answer = rpc(url, _unsigned(issuer, url, alg, kid, signature), "prompts/list")
                assert answer.status_code == 401, (alg, kid, answer.status_code, answer.text)
                challenge = answer.headers["www-authenticate"]
                assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge, (alg, kid)
                assert answer.json()["error"]["code"] == -32600
        # Tokens rightly signed with each kind of key are still accepted.
        for kid, alg in (("key-1", "RS256"), ("key-1", "PS256"), ("key-ec", "ES256"), ("key-ed", "EdDSA")):
            good = issuer.token(aud=url, kid=kid, alg=alg, scope="prompts")
            assert rpc(url, good, "prompts/list").status_code == 200, (kid, alg)
    text = log.read_text()
    assert "Traceback" not in text, text


def _audit_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "prompts/get" in line]


def test_a_subject_with_a_newline_cannot_forge_an_audit_line(issuer: Issuer, library: Path, tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     "-v", stderr_path=log) as url:
        token = issuer.token(aud=url, sub=FORGING_SUB, scope="prompts")
        got = rpc(url, token, "prompts/get", {"name": "hello"})
        assert got.status_code == 200, got.text
        odd = rpc(url, issuer.token(aud=url, sub="bob", scope="prompts"), "prompts/get",
                  {"name": "x\r\n\x1b[2Jpromptdeck INFO forged"})
        assert odd.json()["error"]["code"] == -32602
    lines = _audit_lines(log.read_text())
    assert len(lines) == 2, lines  # one line per request, however many newlines the client sent
    assert all(line.startswith("promptdeck INFO prompts/get principal=") for line in lines), lines
    assert "\\npromptdeck INFO prompts/get principal=admin" in lines[0]
    assert "outcome=ok" in lines[0] and "outcome=error" in lines[1]
    assert "\\r\\n\\x1b[2J" in lines[1] and "\x1b" not in log.read_text()
    assert not any(line.startswith("promptdeck INFO prompts/get principal=admin") for line in lines)


def test_json_log_lines_parse_and_keep_the_value_exactly(issuer: Issuer, library: Path, tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     "-v", "--log-format", "json", stderr_path=log) as url:
        token = issuer.token(aud=url, sub=FORGING_SUB, scope="prompts")
        assert rpc(url, token, "prompts/get", {"name": "hello"}).status_code == 200
        # A forged token is refused without its value reaching the log.
        forged = _unsigned(issuer, url, "ES256", "key-1")
        assert rpc(url, forged, "prompts/list").status_code == 401
    text = log.read_text()
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert records, text
    audit = [r for r in records if r.get("event") == "prompts/get"]
    assert len(audit) == 1, records
    assert audit[0]["principal"] == FORGING_SUB and audit[0]["prompt"] == "hello" and audit[0]["outcome"] == "ok"
    assert audit[0]["logger"] == "promptdeck.audit" and audit[0]["level"] == "info"
    assert isinstance(audit[0]["duration_ms"], float)
    assert all({"time", "level", "logger"} <= set(r) for r in records)
    assert token not in text and forged not in text  # secrets are never logged


def test_metrics_count_only_the_prompts_the_asker_may_see(library: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("hr:hr-token-0123456789abcdef hr\nguest:guest-token-0123456789abc\n")
    with http_server(str(library), "--no-watch", "--stateless", "--json-response",
                     "--token-file", str(tokens)) as url:
        base = url.removesuffix("/mcp")

        def prompts_gauge(token: str) -> int:
            answer = httpx.get(base + "/metrics", headers={"authorization": f"Bearer {token}"}, timeout=10)
            assert answer.status_code == 200
            values = [line.split()[1] for line in answer.text.splitlines() if line.startswith("promptdeck_prompts ")]
            assert len(values) == 1, answer.text
            return int(values[0])

        assert prompts_gauge("guest-token-0123456789abc") == 1  # the two hr prompts stay invisible
        assert prompts_gauge("hr-token-0123456789abcdef") == 3
        listed = rpc(url, "guest-token-0123456789abc", "prompts/list").json()["result"]["prompts"]
        assert len(listed) == prompts_gauge("guest-token-0123456789abc")
