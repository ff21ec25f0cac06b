"""An OAuth authorization server's public face on a loopback port: RFC 8414 metadata, a JWKS, and tokens."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa


class Issuer:
    """An authorization server's public face: RFC 8414 metadata and a JWKS, on a loopback port."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.jwks_status = 200
        self.jwks_fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                if self.path == "/.well-known/oauth-authorization-server":
                    body = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks.json",
                            "authorization_endpoint": issuer.url + "/authorize",
                            "token_endpoint": issuer.url + "/token"}
                    self._send(200, body)
                elif self.path == "/jwks.json":
                    issuer.jwks_fetches += 1
                    self._send(issuer.jwks_status, issuer.jwks())
                else:
                    self._send(404, {})

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.add_key("key-1")

    def add_key(self, kid: str, key: Any = None) -> Any:
        self.keys[kid] = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return self.keys[kid]

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, key in self.keys.items():
            if isinstance(key, rsa.RSAPrivateKey):
                jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            elif isinstance(key, ed25519.Ed25519PrivateKey):
                jwk = json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(key.public_key()))
            else:
                jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
            out.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": out}

    def token(self, *, kid: str = "key-1", key: Any = None, alg: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.url, "sub": "alice", "aud": claims.pop("aud", None), "iat": now, "exp": now + 300,
                **claims}
        return jwt.encode({k: v for k, v in body.items() if v is not None}, key or self.keys[kid], algorithm=alg,
                          headers={"kid": kid})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
