"""Forged tokens, forged log lines and what /metrics tells (issue 13, items 14, 15 and 16), against a real
``serve --http``."""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from tests.support.http_rpc import post_as as rpc
from tests.support.http_server import http_server
from tests.support.issuer import Issuer

FORGED_AUDIT = "promptdeck INFO prompts/get principal=root prompt='payroll' outcome=ok duration_ms=1.00"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(alg: str, kid: str, claims: dict[str, object], signature: bytes = b"\x01" * 64) -> str:
    """A token whose header pairs ``alg`` with ``kid`` as the forger likes, and a junk signature."""
    return ".".join((_b64(json.dumps({"alg": alg, "typ": "JWT", "kid": kid}).encode()),
                     _b64(json.dumps(claims).encode()), _b64(signature)))


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer()
    server.add_key("ec-1", ec.generate_private_key(ec.SECP256R1()))
    server.add_key("ed-1", ed25519.Ed25519PrivateKey.generate())
    yield server
    server.close()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    root.mkdir()
    (root / "hello.md").write_text("---\ndescription: For everyone\n---\nHello!\n")
    return root


def test_an_algorithm_that_does_not_fit_the_key_is_401_not_500(issuer: Issuer, library: Path,
                                                                  tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     log=log) as url:
        now = int(time.time())
        claims = {"iss": issuer.url, "sub": "eve", "aud": url, "exp": now + 300}
        forgeries = {f"{alg} with the RSA key's kid": _unsigned(alg, "key-1", claims)
                     for alg in ("ES256", "ES384", "ES512", "EdDSA")}
        forgeries |= {f"{alg} with the EC key's kid": _unsigned(alg, "ec-1", claims)
                      for alg in ("RS256", "PS256", "EdDSA")}
        forgeries["ES256 with a junk signature"] = _unsigned("ES256", "ec-1", claims)
        for what, token in forgeries.items():
            answer = rpc(url, token, "prompts/list")
            assert answer.status_code == 401, (what, answer.status_code, answer.text)
            assert 'error="invalid_token"' in answer.headers["www-authenticate"], what
        assert rpc(url, issuer.token(aud=url), "ping").status_code == 200
        assert rpc(url, issuer.token(kid="ec-1", alg="ES256", aud=url), "ping").status_code == 200
    assert "Traceback" not in log.read_text()


def _get_as(issuer: Issuer, library: Path, log: Path, subject: str, *options: str) -> None:
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     "-v", *options, log=log) as url:
        answer = rpc(url, issuer.token(aud=url, sub=subject), "prompts/get", {"name": "hello"})
        assert answer.status_code == 200 and "result" in answer.json(), answer.text


@pytest.mark.parametrize("breaker", ["\n", "\r", "\u2028", "\x85"])
def test_a_subject_cannot_forge_an_audit_line(issuer: Issuer, library: Path, tmp_path: Path,
                                              breaker: str) -> None:
    log = tmp_path / "server.log"
    _get_as(issuer, library, log, f"alice{breaker}{FORGED_AUDIT}")
    text = log.read_text()
    audit = [line for line in text.splitlines() if "prompts/get" in line]
    assert len(audit) == 1, text
    # One line, and the forged entry is inside the quoted principal, before the real prompt and outcome.
    assert re.fullmatch(r'promptdeck INFO prompts/get principal="alice\\[^"]*principal=root[^"]*" '
                        r"prompt='hello' version=- label=- outcome=ok duration_ms=[0-9.]+", audit[0]), audit[0]
    assert not any(line.startswith(FORGED_AUDIT) for line in text.splitlines())


def test_a_subject_cannot_pose_as_more_fields(issuer: Issuer, library: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    _get_as(issuer, library, log, "alice outcome=ok")
    (audit,) = [line for line in log.read_text().splitlines() if "prompts/get" in line]
    assert audit.startswith('promptdeck INFO prompts/get principal="alice outcome=ok" prompt=\'hello\'')


def test_json_log_lines_keep_fields_as_fields(issuer: Issuer, library: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    subject = f"alice\n{FORGED_AUDIT}"
    _get_as(issuer, library, log, subject, "--log-format", "json")
    lines = [json.loads(line) for line in log.read_text().splitlines()]  # every line is one JSON object
    audit = [line for line in lines if line["logger"] == "promptdeck.audit"]
    assert len(audit) == 1
    assert audit[0]["principal"] == subject and audit[0]["prompt"] == "hello" and audit[0]["outcome"] == "ok"
    assert audit[0]["level"] == "info" and audit[0]["time"].endswith("Z")


def test_every_algorithm_and_key_pairing_that_does_not_fit_is_401(issuer: Issuer, library: Path,
                                                                 tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     log=log) as url:
        claims = {"iss": issuer.url, "sub": "eve", "aud": url, "exp": int(time.time()) + 300}
        mismatches = [("ES384", "ec-1"), ("ES512", "ec-1"), ("ES256", "ed-1"), ("RS256", "ed-1"),
                      ("PS512", "ed-1"), ("EdDSA", "key-1")]
        for alg, kid in mismatches:
            for signature in (b"", b"\x00" * 64, b"\xff" * 512):
                answer = rpc(url, _unsigned(alg, kid, claims, signature), "prompts/list")
                assert answer.status_code == 401, (alg, kid, answer.status_code, answer.text)
                assert answer.json()["error"]["code"] == -32600
        # Tokens rightly signed with each kind of key are still accepted.
        for kid, alg in (("key-1", "PS256"), ("ec-1", "ES256"), ("ed-1", "EdDSA")):
            assert rpc(url, issuer.token(aud=url, kid=kid, alg=alg), "ping").status_code == 200, (kid, alg)
    assert "Traceback" not in log.read_text()


def test_tokens_never_reach_the_log(issuer: Issuer, library: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     "-vv", "--log-format", "json", log=log) as url:
        good = issuer.token(aud=url, sub="alice")
        assert rpc(url, good, "prompts/get", {"name": "hello"}).status_code == 200
        forged = _unsigned("ES256", "key-1", {"iss": issuer.url, "sub": "eve", "aud": url})
        assert rpc(url, forged, "prompts/list").status_code == 401
    text = log.read_text()
    assert "alice" in text  # the audit line was written, naming the principal
    for token in (good, forged):
        for part in token.split("."):
            assert part not in text


def test_metrics_count_only_the_prompts_the_asker_may_see(library: Path, tmp_path: Path) -> None:
    (library / "payroll.md").write_text("---\ndescription: HR only\nscopes: [hr]\n---\nPayroll.\n")
    (library / "salaries.md").write_text("---\ndescription: HR only\nscopes: [hr]\n---\nSalaries.\n")
    tokens = tmp_path / "tokens"
    tokens.write_text("hr:hr-token-0123456789abcdef hr\nguest:guest-token-0123456789abc\n")
    with http_server(str(library), "--no-watch", "--stateless", "--json-response",
                     "--token-file", str(tokens)) as url:

        def prompts_gauge(token: str) -> int:
            answer = httpx.get(url.removesuffix("/mcp") + "/metrics", headers={"authorization": f"Bearer {token}"},
                               timeout=10)
            assert answer.status_code == 200
            values = [line.split()[1] for line in answer.text.splitlines() if line.startswith("promptdeck_prompts ")]
            assert len(values) == 1, answer.text
            return int(values[0])

        assert prompts_gauge("guest-token-0123456789abc") == 1  # the two hr prompts stay invisible
        assert prompts_gauge("hr-token-0123456789abcdef") == 3
        listed = rpc(url, "guest-token-0123456789abc", "prompts/list").json()["result"]["prompts"]
        assert len(listed) == prompts_gauge("guest-token-0123456789abc")


@pytest.mark.parametrize("style", ["json", "text"])
def test_uvicorn_records_are_formatted_like_ours(library: Path, tmp_path: Path, style: str) -> None:
    """uvicorn's own warnings go through promptdeck's handler: a JSON object with --log-format json, an
    escaped line otherwise (never uvicorn's own unescaped text)."""
    import socket

    log = tmp_path / "server.log"
    with http_server(str(library), "--log-format", style, log=log) as url:
        host, port = url.removeprefix("http://").split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"GARBAGE\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 400")
        deadline = time.monotonic() + 10
        while "Invalid HTTP request" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
    [line] = [line for line in log.read_text().splitlines() if "Invalid HTTP request" in line]
    if style == "json":
        assert json.loads(line) | {"time": ""} == {"time": "", "level": "warning", "logger": "uvicorn.error",
                                                    "message": "Invalid HTTP request received."}
    else:
        assert line == "promptdeck WARNING Invalid HTTP request received."  # the format of our own lines
