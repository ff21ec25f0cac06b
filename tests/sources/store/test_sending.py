"""One webhook request (sources/store/sending.py): which addresses a webhook may reach, the Standard Webhooks
headers, and one POST to a real receiver on 127.0.0.1, bounded: a redirect not followed, a name that resolves
to a refused address refused before anything is sent, a failure named in one line without the URL's secret."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import time

import pytest
from standardwebhooks.webhooks import Webhook

from promptdeck.sources.store.sending import Outcome, headers, refused, send
from tests.support.http_server import free_port
from tests.support.receiver import receiver

SECRET = "whsec_" + base64.b64encode(b"s" * 32).decode()
BODY = '{"type": "prompt.published"}'


@pytest.mark.parametrize(("address", "allow", "why"), [
    ("93.184.216.34", (), None),
    ("2606:4700::1111", (), None),
    ("127.0.0.1", (), "127.0.0.1 is a loopback or private address (--allow private)"),
    ("10.1.2.3", (), "10.1.2.3 is a loopback or private address (--allow private)"),
    ("::1", (), "::1 is a loopback or private address (--allow private)"),
    ("127.0.0.1", ("private",), None),
    ("169.254.169.254", ("private",), "169.254.169.254 is link-local or a metadata address (--allow link-local)"),
    ("169.254.169.254", ("link-local",), None),
    ("fd00:ec2::254", (), "fd00:ec2::254 is link-local or a metadata address (--allow link-local)"),
    ("fe80::1%eth0", (), "fe80::1 is link-local or a metadata address (--allow link-local)"),
    # An IPv4 address inside an IPv6 one is judged as the IPv4 address it reaches.
    ("::ffff:169.254.169.254", (), "169.254.169.254 is link-local or a metadata address (--allow link-local)"),
    ("2002:a9fe:a9fe::1", (), "169.254.169.254 is link-local or a metadata address (--allow link-local)"),
    ("64:ff9b::a9fe:a9fe", (), "169.254.169.254 is link-local or a metadata address (--allow link-local)"),
    ("64:ff9b::808:808", (), None),
    ("0.0.0.0", ("private", "link-local"), "0.0.0.0 is not an address a webhook is sent to"),
    ("224.0.0.1", ("private", "link-local"), "224.0.0.1 is not an address a webhook is sent to"),
])
def test_an_address_is_refused_unless_public_or_allowed(address: str, allow: tuple[str, ...],
                                                        why: str | None) -> None:
    assert refused(address, allow) == why


def test_the_headers_are_a_standard_webhooks_signature() -> None:
    now = time.time()
    sent = headers("msg_1", SECRET, BODY, now)
    assert sent["webhook-id"] == "msg_1" and sent["webhook-timestamp"] == str(int(now))
    assert sent["content-type"] == "application/json" and sent["user-agent"].startswith("promptdeck/")
    signed = f"msg_1.{int(now)}.{BODY}".encode()
    mac = hmac.new(base64.b64decode(SECRET[len("whsec_"):]), signed, hashlib.sha256).digest()
    assert sent["webhook-signature"] == "v1," + base64.b64encode(mac).decode()
    assert Webhook(SECRET).verify(BODY, sent) == {"type": "prompt.published"}


def _send(url: str, allow: tuple[str, ...] = ("private",), timeout: float = 20) -> Outcome:
    return asyncio.run(send(url, "msg_1", SECRET, BODY, allow=allow, timeout=timeout, now=time.time()))


def test_a_request_reaches_the_receiver_signed_and_2xx_is_success() -> None:
    with receiver(SECRET) as box:
        outcome = _send(box.url)
        assert outcome == Outcome(200, None) and outcome.ok
        # The receiver marks a request answered after its reply's last byte, which the sender may read first:
        # waited for, not looked at once (one suite run beside another saw it still unmarked).
        assert box.wait_for(1) == [{"type": "prompt.published"}]  # verified by the reference library
        assert box.ids() == ["msg_1"]


def test_an_error_status_and_a_redirect_are_failures_and_the_redirect_is_not_followed() -> None:
    with receiver(SECRET) as box:
        box.answer = lambda _: ("status", 503)
        failed = _send(box.url)
        assert failed == Outcome(503, "HTTP 503") and not failed.ok
        box.answer = lambda _: ("redirect", box.url + "/elsewhere")
        assert _send(box.url) == Outcome(302, "a redirect (not followed)")
        assert len(box.ids(answered_only=False)) == 2  # the redirect's target was never asked


def test_a_name_resolving_to_a_refused_address_is_refused_before_sending() -> None:
    with receiver(SECRET) as box:
        named = box.url.replace("127.0.0.1", "localhost")
        outcome = _send(named, allow=())
        assert outcome.code is None and outcome.error is not None
        assert outcome.error.startswith("refused: localhost resolves to ")
        assert "is a loopback or private address (--allow private)" in outcome.error
        literal = _send(box.url, allow=())
        assert literal == Outcome(None, "refused: 127.0.0.1 is a loopback or private address (--allow private)")
        assert box.ids(answered_only=False) == []


def test_a_target_that_cannot_be_reached_is_one_line_without_the_urls_secret() -> None:
    outcome = _send(f"http://127.0.0.1:{free_port()}/hooks/t0ken-in-path?key=t0ken-in-query")
    assert outcome.code is None and outcome.error is not None and not outcome.ok
    assert "\n" not in outcome.error and "t0ken" not in outcome.error
    assert "127.0.0.1" in outcome.error  # the host is named


def test_a_target_that_does_not_answer_in_time_fails_naming_the_bound() -> None:
    with receiver(SECRET) as box:
        box.answer = lambda _: ("stall", None)
        assert _send(box.url, timeout=0.5) == Outcome(None, "no answer within 0.5 s")
