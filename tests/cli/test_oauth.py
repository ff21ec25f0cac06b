"""``promptdeck ls/get/ui URL`` and ``logout`` against an OAuth-protected server: the test authorization
server (tests/support/oauth_server.py) and promptdeck's resource server, real processes; the browser is
what $BROWSER names, a script that follows the sign-in address as a person approving it would."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck.client import connect
from promptdeck.extras import install_command
from tests.support.http_server import UI_TOKEN, promptdeck_http
from tests.support.libraries import EXAMPLES
from tests.support.oauth_browser import sign_in
from tests.support.oauth_fixtures import stats
from tests.support.oauth_server import SERVICE_ID, SERVICE_SECRET

ROOT = Path(__file__).resolve().parents[2]


def browser_script(folder: Path, *, works: bool = True) -> str:
    """An executable for $BROWSER: follows the address it is given (or fails, when no sign-in is expected)."""
    script = folder / ("browser" if works else "no-browser")
    body = ("from tests.support.oauth_browser import follow\nfollow(sys.argv[1])\n" if works
            else "sys.exit('no sign-in was expected')\n")
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n{body}")
    script.chmod(0o700)
    return str(script)


def environment(home: Path, browser: str) -> dict[str, str]:
    return {**os.environ, "XDG_CONFIG_HOME": str(home), "BROWSER": browser, "DISPLAY": ""}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=90,
                          env=env)


def test_ls_signs_in_in_the_browser_then_get_reuses_the_token_and_logout_forgets_it(
        issuer: str, protected: str, tmp_path: Path) -> None:
    done = cli(environment(tmp_path, browser_script(tmp_path)), "ls", protected)
    assert done.returncode == 0, done.stderr
    assert "code-review" in done.stdout
    assert f"sign in at {issuer}authorize?" in done.stderr
    tokens = tmp_path / "promptdeck" / "tokens.json"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert stat.S_IMODE(tokens.parent.stat().st_mode) == 0o700
    access = next(iter(json.loads(tokens.read_text())["tokens"].values()))["access_token"]
    assert access not in done.stderr + done.stdout  # tokens are never shown

    again = cli(environment(tmp_path, browser_script(tmp_path, works=False)), "get", protected, "code-review",
                "-a", "code=print(1)")
    assert again.returncode == 0, again.stderr
    assert "print(1)" in again.stdout and "sign in" not in again.stderr

    out = cli(environment(tmp_path, browser_script(tmp_path, works=False)), "logout", protected)
    assert out.returncode == 0 and f"removed tokens for {protected}" in out.stderr
    assert protected not in json.loads(tokens.read_text())["servers"]
    assert cli(environment(tmp_path, ""), "logout", protected).stderr.startswith("no tokens")


def test_no_browser_prints_the_address_for_the_person_to_open(protected: str, tmp_path: Path) -> None:
    env = environment(tmp_path, browser_script(tmp_path, works=False))
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "ls", protected, "--no-browser"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("promptdeck: sign in at "), line
        sign_in(line.split(" at ", 1)[1].strip())
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "code-review" in out


def test_ui_signs_in_as_a_service_with_client_credentials(issuer: str, protected: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text(SERVICE_SECRET + "\n")
    secret.chmod(0o600)
    before = stats(issuer).get("client_credentials", 0)
    env = {"PROMPTDECK_UI_TOKEN": UI_TOKEN, "XDG_CONFIG_HOME": str(tmp_path), "BROWSER": "false"}
    with promptdeck_http("ui", protected, "--no-open", "--port", "{port}", "--client-credentials", "--client-id",
                         SERVICE_ID, "--client-secret-file", str(secret), env=env) as page:
        async def listed() -> list[str]:
            async with connect(page, token=UI_TOKEN, timeout=10) as client:
                return [prompt.name for prompt in await client.list_prompts()]
        assert "code-review" in asyncio.run(listed())
    assert stats(issuer)["client_credentials"] == before + 1


def test_a_secret_file_others_may_read_is_refused_with_the_fix(protected: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text(SERVICE_SECRET)
    secret.chmod(0o644)
    done = cli(environment(tmp_path, ""), "ls", protected, "--client-credentials", "--client-id", SERVICE_ID,
               "--client-secret-file", str(secret))
    assert done.returncode == 2
    assert f"chmod 600 {secret}" in done.stderr


def test_a_token_file_others_may_read_is_refused_with_the_fix(protected: str, tmp_path: Path) -> None:
    tokens = tmp_path / "promptdeck" / "tokens.json"
    tokens.parent.mkdir()
    tokens.write_text('{"version": 1}')
    tokens.chmod(0o644)
    done = cli(environment(tmp_path, browser_script(tmp_path, works=False)), "ls", protected)
    assert done.returncode == 1
    assert f"chmod 600 {tokens}" in done.stderr


@pytest.mark.parametrize("args, said", [
    (("--client-credentials",), "--client-credentials needs --client-id and --client-secret-file"),
    (("--token", "t", "--client-id", "x"), "choose one of --token"),
])
def test_oauth_options_that_do_not_go_together_are_usage_errors(protected: str, tmp_path: Path,
                                                                args: tuple[str, ...], said: str) -> None:
    done = cli(environment(tmp_path, ""), "ls", protected, *args)
    assert done.returncode == 2 and said in done.stderr


def test_oauth_options_go_with_an_http_target(tmp_path: Path) -> None:
    done = cli(environment(tmp_path, ""), "ls", f"{sys.executable} -m promptdeck serve {EXAMPLES}", "--client-id", "x")
    assert done.returncode == 2 and "the OAuth options go with an http(s) TARGET" in done.stderr


def test_watch_signs_in_and_keeps_its_subscription(protected: str, tmp_path: Path) -> None:
    import time

    env = environment(tmp_path, browser_script(tmp_path))
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "watch", protected], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        lines = [process.stderr.readline() for _ in range(2)]
        assert "sign in at" in lines[0] and "watching for changes" in lines[1], lines
        time.sleep(1)  # the subscription is open, authorized, and waiting: the command has not ended
        assert process.poll() is None
        process.terminate()
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err


def test_oauth_options_without_the_oauth_extra_say_what_to_install(protected: str, tmp_path: Path) -> None:
    """authlib made unimportable, as on an install without the extra: the options are refused with the fix,
    and without them a 401 reads as it always did."""
    run = ("import sys; sys.modules['authlib'] = None; sys.argv[0] = 'promptdeck'; "
           "from promptdeck.cli.main import main; main()")
    base = [sys.executable, "-c", run, "ls", protected]
    env = environment(tmp_path, "")
    asked = subprocess.run([*base, "--client-id", "x"], capture_output=True, text=True, timeout=60, env=env)
    assert asked.returncode == 1
    assert f"OAuth (authlib, httpx) needs the oauth extra: {install_command('oauth')}" in asked.stderr
    plain = subprocess.run(base, capture_output=True, text=True, timeout=60, env=env)
    assert plain.returncode == 1 and "HTTP 401, the server wants a (valid) bearer token" in plain.stderr
