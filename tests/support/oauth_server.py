"""A real OAuth authorization server for the client's tests, run as its own process:

    python -m tests.support.oauth_server PORT [--ttl SECONDS] [--oidc] [--no-registration] [--iss MODE]
                                         [--iss-advertised] [--cimd]

Its protocol code is not ours: the official MCP SDK's authorization-server routes
(``mcp.server.auth.routes.create_auth_routes``: RFC 8414 metadata, /authorize with PKCE, /token for the
authorization code and refresh grants, RFC 7591 /register), and authlib's ``AuthorizationServer`` for the
client credentials grant, which the SDK's token endpoint does not offer (a request with that grant_type
is handed to authlib at the same /token). What is ours is the minimal in-memory provider the SDK asks
for: it approves every sign-in at once (the test "browser" only follows redirects), and it mints JWT
access tokens signed with an RSA key published at /jwks.json, which is what promptdeck's resource
server (``serve --oauth-issuer``) checks. /stats says which grants ran and with which ``resource``.

``--oidc`` publishes the metadata at /.well-known/openid-configuration only (the OIDC fallback);
``--ttl`` sets the access tokens' lifetime (refresh tests). RFC 9207: ``--iss correct`` puts the issuer in
the sign-in's redirect, ``--iss wrong`` another server's (a mix-up attack), ``omit`` (the default) none;
``--iss-advertised`` says in the metadata that it is sent (``authorization_response_iss_parameter_supported``).
``--cimd`` advertises ``client_id_metadata_document_supported`` and takes any https URL as a client id (the
document itself is not fetched: the tests' URLs serve nothing). /stats also lists each registration's
``application_type`` (None when not sent) and the client ids each sign-in used.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import time
from collections import Counter
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

#: A confidential client known beforehand (client credentials, and --client-id tests).
SERVICE_ID = "reporting-service"
SERVICE_SECRET = "service-secret-0123456789abcdef"
PUBLIC_ID = "preregistered-cli"
#: A confidential client registered beforehand for the authorization code grant (its secret: SERVICE_SECRET).
CONFIDENTIAL_ID = "confidential-cli"
SCOPES = ["prompts", "admin"]
KID = "as-key-1"
#: The issuer a --iss wrong server names in its redirects: another authorization server.
OTHER_ISSUER = "https://other-issuer.example/"


def build(port: int, ttl: int, oidc: bool, registration: bool, iss: str = "omit", iss_advertised: bool = False,
          cimd: bool = False) -> Any:
    from authlib.oauth2 import AuthorizationServer
    from authlib.oauth2.rfc6749 import ClientMixin, grants
    from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload, OAuth2Request
    from mcp.server.auth.handlers.metadata import MetadataHandler
    from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
    from mcp.server.auth.routes import build_metadata, create_auth_routes
    from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
    from pydantic import AnyHttpUrl
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    issuer = f"http://127.0.0.1:{port}/"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())), "kid": KID, "use": "sig",
           "alg": "RS256"}
    stats: Counter[str] = Counter()
    resources: list[str | None] = []
    application_types: list[str | None] = []
    signed_in_as: list[str] = []

    def mint(subject: str, client_id: str, scopes: list[str], resource: str | None) -> tuple[str, int]:
        now = int(time.time())
        claims = {"iss": issuer, "sub": subject, "client_id": client_id, "scope": " ".join(scopes),
                  "iat": now, "exp": now + ttl, "jti": secrets.token_hex(8)}
        if resource is not None:
            claims["aud"] = resource
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID}), ttl

    class LoopbackClient(OAuthClientInformationFull):  # type: ignore[misc]
        """RFC 8252 7.3: a native client's loopback redirect may use any port."""

        def validate_redirect_uri(self, redirect_uri: Any) -> Any:
            if redirect_uri is not None and str(redirect_uri).startswith("http://127.0.0.1:"):
                return redirect_uri
            return super().validate_redirect_uri(redirect_uri)

    class Provider:
        def __init__(self) -> None:
            self.clients: dict[str, OAuthClientInformationFull] = {
                PUBLIC_ID: LoopbackClient(client_id=PUBLIC_ID, redirect_uris=None, token_endpoint_auth_method="none",
                                          scope=" ".join(SCOPES),
                                          grant_types=["authorization_code", "refresh_token"]),
                CONFIDENTIAL_ID: LoopbackClient(client_id=CONFIDENTIAL_ID, client_secret=SERVICE_SECRET,
                                                redirect_uris=None, token_endpoint_auth_method="client_secret_basic",
                                                scope=" ".join(SCOPES),
                                                grant_types=["authorization_code", "refresh_token"]),
            }
            self.codes: dict[str, AuthorizationCode] = {}
            self.refresh: dict[str, RefreshToken] = {}

        async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
            if cimd and client_id.startswith("https://") and client_id not in self.clients:
                # Standing for the document at that URL: a public client with a loopback redirect.
                return LoopbackClient(client_id=client_id, redirect_uris=None, token_endpoint_auth_method="none",
                                      scope=" ".join(SCOPES), grant_types=["authorization_code", "refresh_token"])
            return self.clients.get(client_id)

        async def register_client(self, info: OAuthClientInformationFull) -> None:
            stats["register"] += 1
            assert info.client_id is not None
            self.clients[info.client_id] = info

        async def authorize(self, client: OAuthClientInformationFull, params: Any) -> str:
            code = secrets.token_urlsafe(24)
            self.codes[code] = AuthorizationCode(
                code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
                code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
                subject="alice")
            stats["authorize"] += 1
            signed_in_as.append(client.client_id or "")
            named = {"correct": {"iss": issuer}, "wrong": {"iss": OTHER_ISSUER}}.get(iss, {})
            return str(construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, **named))

        async def load_authorization_code(self, client: Any, code: str) -> AuthorizationCode | None:
            return self.codes.get(code)

        async def exchange_authorization_code(self, client: Any, code: AuthorizationCode) -> OAuthToken:
            self.codes.pop(code.code, None)
            stats["authorization_code"] += 1
            resources.append(code.resource)
            return self._tokens(code.client_id, code.scopes, code.resource)

        def _tokens(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
            access, lifetime = mint("alice", client_id, scopes, resource)
            refresh = secrets.token_urlsafe(24)
            self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
            return OAuthToken(access_token=access, expires_in=lifetime, scope=" ".join(scopes), refresh_token=refresh)

        async def load_refresh_token(self, client: Any, refresh_token: str) -> RefreshToken | None:
            return self.refresh.get(refresh_token)

        async def exchange_refresh_token(self, client: Any, refresh_token: RefreshToken,
                                         scopes: list[str]) -> OAuthToken:
            self.refresh.pop(refresh_token.token, None)  # rotated, as OAuth 2.1 wants for public clients
            stats["refresh_token"] += 1
            resources.append(refresh_token.resource)
            return self._tokens(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

        async def load_access_token(self, token: str) -> AccessToken | None:
            return None

        async def revoke_token(self, token: Any) -> None:
            return None

    # -- authlib: the client credentials grant ----------------------------------------------------

    class Service(ClientMixin):  # type: ignore[misc]
        def get_client_id(self) -> str:
            return SERVICE_ID

        def get_allowed_scope(self, scope: str) -> str:
            return " ".join(s for s in (scope or "").split() if s in SCOPES)

        def check_client_secret(self, client_secret: str) -> bool:
            return secrets.compare_digest(client_secret, SERVICE_SECRET)

        def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
            return method in ("client_secret_basic", "client_secret_post")

        def check_grant_type(self, grant_type: str) -> bool:
            return grant_type == "client_credentials"

    class Services(AuthorizationServer):  # type: ignore[misc]
        def query_client(self, client_id: str) -> Service | None:
            return Service() if client_id == SERVICE_ID else None

        def save_token(self, token: dict[str, Any], request: Any) -> None:
            stats["client_credentials"] += 1

        def create_oauth2_request(self, request: Any) -> Any:
            return request

        def handle_response(self, status: int, body: Any, headers: Any) -> Any:
            return JSONResponse(body, status_code=status, headers=dict(headers))

        def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
            pass

    class FormRequest(OAuth2Request):  # type: ignore[misc]
        """A token request as authlib reads it: its form, as payload."""

        def __init__(self, uri: str, form: dict[str, str], headers: Any) -> None:
            super().__init__("POST", uri, None, headers)
            self._form = form
            self.payload = BasicOAuth2Payload(form)

        @property
        def form(self) -> dict[str, str]:
            return self._form

        @property
        def args(self) -> dict[str, str]:
            return {}

    services = Services(scopes_supported=SCOPES)

    def generate(grant_type: str, client: Any, user: Any = None, scope: str | None = None,
                 expires_in: int | None = None, include_refresh_token: bool = True) -> dict[str, Any]:
        access, lifetime = mint(SERVICE_ID, SERVICE_ID, (scope or "").split(), services_resource[-1])
        return {"token_type": "Bearer", "access_token": access, "expires_in": lifetime, "scope": scope or ""}

    services_resource: list[str | None] = [None]
    services.register_token_generator("default", generate)
    services.register_grant(grants.ClientCredentialsGrant)

    provider = Provider()
    routes = create_auth_routes(provider, AnyHttpUrl(issuer),
                                client_registration_options=ClientRegistrationOptions(enabled=registration,
                                                                                      valid_scopes=SCOPES))
    sdk_token = next(route for route in routes if route.path == "/token")
    if oidc:
        routes = [Route("/.well-known/openid-configuration", route.endpoint, methods=list(route.methods or ()))
                  if route.path == "/.well-known/oauth-authorization-server" else route for route in routes]

    if iss_advertised or cimd:
        updated = build_metadata(AnyHttpUrl(issuer), None, ClientRegistrationOptions(enabled=registration,
                                                                                     valid_scopes=SCOPES),
                                 RevocationOptions()).model_copy(update={
                                     "authorization_response_iss_parameter_supported": iss_advertised or None,
                                     "client_id_metadata_document_supported": cimd or None})
        routes = [Route(route.path, MetadataHandler(updated).handle, methods=["GET"])
                  if route.path == "/.well-known/oauth-authorization-server" else route for route in routes]

    async def read_body(receive: Any) -> bytes:
        body = b""
        while True:
            message = await receive()
            body += bytes(message.get("body", b""))
            if not message.get("more_body"):
                return body

    def replaying(body: bytes, receive: Any) -> Any:
        """``receive`` for an app behind one that read the body already: the body again, then the rest."""
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            message: dict[str, Any] = await receive()
            return message

        return replay

    async def token_app(scope: Any, receive: Any, send: Any) -> None:
        """The SDK's /token, or authlib's for the client credentials grant (same URL, as the metadata says)."""
        body = await read_body(receive)
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if form.get("grant_type") == "client_credentials":
            from starlette.datastructures import Headers

            headers = Headers(scope=scope)  # case-insensitive, as authlib's lookups need
            request = FormRequest(f"{issuer.rstrip('/')}/token", form, headers)
            services_resource.append(form.get("resource"))
            resources.append(form.get("resource"))
            response = services.create_token_response(request)
            await response(scope, receive, send)
            return
        await sdk_token.app(scope, replaying(body, receive), send)

    async def jwks(request: Any) -> JSONResponse:
        return JSONResponse({"keys": [jwk]})

    async def show_stats(request: Any) -> JSONResponse:
        return JSONResponse({**stats, "resources": resources, "application_types": application_types,
                             "signed_in_as": signed_in_as})

    class Token:  # a class instance, so Starlette hands it the raw ASGI call
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await token_app(scope, receive, send)

    sdk_register = next((route for route in routes if route.path == "/register"), None)

    class Register:
        """The SDK's /register, after noting the request's application_type (the SDK's model drops it)."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            assert sdk_register is not None
            body = await read_body(receive)
            with contextlib.suppress(ValueError):
                asked = json.loads(body)
                application_types.append(asked.get("application_type") if isinstance(asked, dict) else None)
            await sdk_register.app(scope, replaying(body, receive), send)

    own = [Route("/token", Token(), methods=["POST"]), Route("/jwks.json", jwks), Route("/stats", show_stats)]
    if sdk_register is not None:
        own.append(Route("/register", Register(), methods=["POST"]))
    routes = [route for route in routes if route.path not in ("/token", "/register")]
    return Starlette(routes=[*routes, *own])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--ttl", type=int, default=3600)
    parser.add_argument("--oidc", action="store_true")
    parser.add_argument("--no-registration", action="store_true")
    parser.add_argument("--iss", choices=["omit", "correct", "wrong"], default="omit")
    parser.add_argument("--iss-advertised", action="store_true")
    parser.add_argument("--cimd", action="store_true")
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(build(args.port, args.ttl, args.oidc, not args.no_registration, args.iss, args.iss_advertised,
                      args.cimd), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
