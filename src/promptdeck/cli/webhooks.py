"""``promptdeck webhook``: a store's webhooks (add, list, pause, resume, remove, log, deliver).

Part of the cli layer (``main`` registers the group). The store side is ``sources.store.webhooks`` (the
registry), ``events`` (the outbox) and ``delivery`` (sending, which every ``serve --store`` does).
"""

from __future__ import annotations

import asyncio

import click

from ..protocol.errors import PromptdeckError
from ..sources.store.event_kinds import names as event_kinds
from ..sources.store.event_kinds import stored as asked_kinds
from .common import AUTHOR_OPTION, STORE_OPTION, author_of, fail, open_store, utc_time
from .program import command_line
from .terminal import echo, shown

_KINDS_HELP = (f"Send only these kinds of event (repeat): {', '.join(event_kinds())}. Default: every kind, those a "
               "later promptdeck adds included.")


@click.group()
def webhook() -> None:
    """Tell other services when prompts change: signed HTTP requests (Standard Webhooks) for each publish,
    label move, rollback and rollout (`webhook add --help` lists the kinds of event)."""


@webhook.command()
@click.argument("target", metavar="TARGET_URL")
@STORE_OPTION
@click.option("--secret-file", required=True, metavar="FILE", type=click.Path(dir_okay=False),
              help="The whsec_ secret requests are signed with, in a file only you may read (chmod 600).")
@click.option("--new-secret", is_flag=True, help="Write a new secret to --secret-file (a new file, mode 600) "
              "first; give the receiver that file.")
@click.option("--event", "kinds", multiple=True, metavar="KIND", help=_KINDS_HELP)
@click.option("--scope", "scopes", multiple=True, metavar="SCOPE", help="Name the prompts restricted to SCOPE "
              "too (repeat); without it, a webhook is told only of prompts that anyone may see.")
@click.option("--allow", "allow", multiple=True, type=click.Choice(["private", "link-local"]),
              help="Let it reach loopback and private addresses (private), or link-local and cloud metadata "
              "addresses (link-local); refused by default.")
@click.option("--timeout", type=float, default=10.0, show_default=True, metavar="SECONDS",
              help="How long one request may take, all told (at most 30).")
@AUTHOR_OPTION
def add(target: str, url: str, secret_file: str, new_secret: bool, kinds: tuple[str, ...], scopes: tuple[str, ...],
        allow: tuple[str, ...], timeout: float, author: str | None) -> None:
    """Send the store's events to TARGET_URL (http or https)."""
    from ..sources.store import webhooks

    try:
        webhooks.check_target(target)
        asked_kinds(kinds)  # before a new secret is written
        if new_secret:
            webhooks.new_secret(secret_file)
        secret = webhooks.read_secret(secret_file)
    except PromptdeckError as exc:
        fail(str(exc))
    with open_store(url) as opened:
        try:
            hook = webhooks.add(opened.db, target, secret, list(kinds), scopes=list(scopes), allow=list(allow),
                                timeout=timeout, author=author_of(author))
        except PromptdeckError as exc:
            fail(str(exc))
    wrote = f" (new secret in {secret_file})" if new_secret else ""
    echo(f"webhook {hook}: {target}{wrote}")


@webhook.command(name="list")
@STORE_OPTION
def list_command(url: str) -> None:
    """The store's webhooks (never their secrets)."""
    from ..sources.store import webhooks

    with open_store(url) as opened:
        found = webhooks.listed(opened.db)
    if not found:
        echo("no webhooks")
    for hook in found:
        extra = "".join([f"  scopes {' '.join(hook.scopes)}" if hook.scopes else "",
                         f"  allow {' '.join(hook.allow)}" if hook.allow else ""])
        paused = f"  {hook.paused}: {command_line('webhook', 'resume', str(hook.id))}" if hook.paused else ""
        echo(f"{hook.id}  {hook.url}  events {' '.join(hook.kinds)}  timeout {hook.timeout:g}s{extra}  "
             f"added {utc_time(hook.created)} by {shown(hook.author)}{paused}")


@webhook.command()
@click.argument("hook", type=int, metavar="ID")
@STORE_OPTION
def pause(hook: int, url: str) -> None:
    """Send nothing to webhook ID until `webhook resume` (its deliveries wait)."""
    _switch(hook, url, resume=False)
    echo(f"webhook {hook} paused")


@webhook.command()
@click.argument("hook", type=int, metavar="ID")
@STORE_OPTION
def resume(hook: int, url: str) -> None:
    """Let webhook ID deliver from this store, and from no copy of it: what waited is sent (a restored store's
    webhooks are paused until this)."""
    _switch(hook, url, resume=True)
    echo(f"webhook {hook} delivers from this store")


def _switch(hook: int, url: str, *, resume: bool) -> None:
    from ..sources.store import copies

    with open_store(url) as opened:
        try:
            (copies.resume if resume else copies.pause)(opened.db, hook)
        except PromptdeckError as exc:
            fail(str(exc))


@webhook.command()
@click.argument("hook", type=int, metavar="ID")
@STORE_OPTION
def remove(hook: int, url: str) -> None:
    """Send nothing more to webhook ID (what was sent stays in its log)."""
    from ..sources.store import webhooks

    with open_store(url) as opened:
        try:
            cancelled = webhooks.remove(opened.db, hook)
        except PromptdeckError as exc:
            fail(str(exc))
    waiting = f"; {cancelled} pending deliver{'ies' if cancelled != 1 else 'y'} cancelled" if cancelled else ""
    echo(f"webhook {hook} removed{waiting}")


@webhook.command(name="log")
@click.argument("hook", type=int, required=False, metavar="[ID]")
@STORE_OPTION
@click.option("-n", "limit", type=click.IntRange(1, 1000), default=50, show_default=True,
              help="How many deliveries to show.")
def log_command(hook: int | None, url: str, limit: int) -> None:
    """Deliveries, newest first (of webhook ID, or of all): status, each attempt, and the next try."""
    from ..sources.store import webhooks

    with open_store(url) as opened:
        try:
            found = webhooks.log(opened.db, hook, limit)
        except PromptdeckError as exc:
            fail(str(exc))
    if not found:
        echo("no deliveries")
    for d in found:
        upcoming = f"  next try {utc_time(d.next_try)}" if d.next_try is not None else ""
        echo(f"event {d.event} {d.kind}  webhook {d.webhook}  {d.status}  {d.attempts} "
             f"attempt{'s' * (d.attempts != 1)}  ({utc_time(d.created)}, {d.uid}){upcoming}")
        for number, attempt in enumerate(d.tries, 1):
            answer = f"HTTP {attempt.code}" if attempt.code is not None else "no answer"
            why = f": {shown(attempt.error)}" if attempt.error and attempt.error != f"HTTP {attempt.code}" else ""
            echo(f"  {number}. {utc_time(attempt.at)}  {answer}{why}  from {attempt.sender}")


@webhook.command()
@STORE_OPTION
def deliver(url: str) -> None:
    """Send what is due now, once, and exit (a server delivers on its own; this is for a store no server
    serves, e.g. from cron)."""
    from ..logs import setup_logging
    from ..sources.store.delivery import BATCH, Deliverer

    setup_logging(0)  # each failed attempt is a warning line, as a server logs it
    deliverer = Deliverer(url)
    total = 0
    try:
        while True:
            sent = asyncio.run(deliverer.deliver_due())
            total += sent
            if sent < BATCH:
                break
    except PromptdeckError as exc:
        fail(str(exc))
    finally:
        deliverer.stop()
    echo(f"{total} deliver{'ies' if total != 1 else 'y'} attempted "
         f"({command_line('webhook', 'log')} shows them)")
