"""Fixtures of the CLI tests: the OAuth tests' authorization server and protected server (module-scoped)."""

from tests.support.oauth_fixtures import issuer, protected  # noqa: F401
