"""``promptdeck webhook`` (cli/webhooks.py) on an embedded store: a webhook added with a new secret, listed
without it, a publish delivered by ``deliver`` to a real receiver that verifies the signature
(tests/support/receiver.py), the delivery logged, and mistakes refused in one line naming them."""

from __future__ import annotations

import base64
import os
import re
import secrets
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.store import publish
from promptdeck.cli.webhooks import webhook
from promptdeck.sources.store.event_kinds import names
from tests.support.receiver import receiver
from tests.support.store_schema import promptdeck_in_process

pytestmark = pytest.mark.usefixtures("kept_logging")


def run(*args: str) -> Result:
    return CliRunner().invoke(webhook, list(args), prog_name="promptdeck webhook")


@pytest.fixture
def url(tmp_path: Path) -> str:
    store = str(tmp_path / "s.db")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "greet.md").write_text("Hello\n")
    assert CliRunner().invoke(publish, [str(tmp_path / "lib"), "--store", store]).exit_code == 0
    return store


def test_a_new_secret_is_written_0600_and_never_listed(url: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    added = run("add", "http://127.0.0.1:9/hook", "--store", url, "--secret-file", str(secret), "--new-secret",
                "--allow", "private", "--event", "publish", "--author", "ann")
    assert added.stdout == f"webhook 1: http://127.0.0.1:9/hook (new secret in {secret})\n", added.output
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.read_text().startswith("whsec_")
    listed = run("list", "--store", url).stdout
    assert re.fullmatch(r"1  http://127\.0\.0\.1:9/hook  events publish  timeout 10s  allow private  added "
                        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by ann\n", listed), listed
    assert "whsec_" not in listed
    assert run("remove", "1", "--store", url).stdout == "webhook 1 removed\n"
    assert run("list", "--store", url).stdout == "no webhooks\n"


def test_a_publish_is_delivered_signed_and_logged(url: str, tmp_path: Path) -> None:
    key = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    secret = tmp_path / "secret"
    secret.write_text(key + "\n")
    os.chmod(secret, 0o600)
    with receiver(key) as listening:
        assert run("add", listening.url, "--store", url, "--secret-file", str(secret), "--allow", "private",
                   "--event", "publish").exit_code == 0
        (tmp_path / "lib" / "greet.md").write_text("Hi\n")
        assert CliRunner().invoke(publish, [str(tmp_path / "lib"), "--store", url]).exit_code == 0
        sent = run("deliver", "--store", url)
        assert sent.exit_code == 0 and sent.stdout.startswith("1 delivery attempted ("), sent.output
        [body] = listening.wait_for(1)
    assert body is not None  # the signature checked out with the secret the file holds
    log = run("log", "--store", url).stdout.splitlines()
    assert re.match(r"event \d+ publish  webhook 1  delivered  1 attempt  \(", log[0]), log
    assert "HTTP 200" in log[1]


@pytest.mark.parametrize(("args", "says"), [
    (["add", "ftp://x", "--secret-file", "SECRET"], "a webhook is sent over http or https, not to 'ftp://x'"),
    (["add", "http://127.0.0.1:9/", "--secret-file", "SECRET", "--event", "nope", "--allow", "private"],
     "no event kind 'nope'; the kinds are "),
    (["add", "http://127.0.0.1:9/", "--secret-file", "MISSING"], "cannot read the secret file"),
    (["remove", "7"], "no webhook 7 (promptdeck webhook list shows them)"),
])
def test_mistakes_are_refused_naming_them(url: str, tmp_path: Path, args: list[str], says: str) -> None:
    secret = tmp_path / "secret"
    secret.write_text("whsec_" + base64.b64encode(b"k" * 32).decode())
    os.chmod(secret, 0o600)
    paths = {"SECRET": str(secret), "MISSING": str(tmp_path / "missing")}
    done = run(*[paths.get(arg, arg) for arg in args], "--store", url)
    assert done.exit_code == 1
    assert done.stderr.startswith("promptdeck: ") and says in done.stderr and done.stderr.count("\n") == 1


def test_a_secret_file_others_may_read_is_refused_with_the_fix(url: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("whsec_" + base64.b64encode(b"k" * 32).decode())
    os.chmod(secret, 0o644)
    done = run("add", "http://127.0.0.1:9/", "--store", url, "--secret-file", str(secret), "--allow", "private")
    assert done.exit_code == 1 and f"chmod 600 {secret}" in done.stderr


def test_the_help_lists_exactly_the_registered_kinds() -> None:
    code, out, _ = promptdeck_in_process("webhook", "add", "--help")
    assert code == 0
    text = " ".join(out.split())  # as click wraps it
    (listed,) = re.findall(r"--event KIND Send only these kinds of event \(repeat\): ([^.]*)\. Default: every kind, "
                           r"those a later promptdeck adds included\.", text)
    assert listed.split(", ") == names() == ["label", "promote", "proposal", "publish", "rollback", "rollout"]


def test_an_unknown_kind_is_refused_naming_the_registered_ones(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    assert promptdeck_in_process("store", "upgrade", f"sqlite:///{tmp_path}/s.db")[0] == 0
    code, _, err = promptdeck_in_process("webhook", "add", "https://example.com/", "--store",
                                         f"sqlite:///{tmp_path}/s.db", "--secret-file", str(secret), "--new-secret",
                                         "--event", "label", "--event", "deploy")
    assert code == 1 and f"no event kind 'deploy'; the kinds are {', '.join(names())}" in err
    assert not secret.exists()  # refused before anything was written
