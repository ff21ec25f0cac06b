"""``promptdeck promote SRC DST [NAME...]``: point label DST at what label SRC holds, all of it or the prompts
named, in one new position through the store's release gate (``sources/store/promotion.py``); and the hint
that leads ``label SRC DST``, a label given where a prompt goes, here.

Like the other store commands it opens the database with its credentials (the administrator's path: no scope
limits it, but a label's required tests do); a refusal is one line, exit 1, nothing changed.
"""

from __future__ import annotations

import click

from ..protocol.errors import PromptdeckError
from .common import AUTHOR_OPTION, STORE_OPTION, author_of, fail, open_store, valid_label
from .program import command_line
from .terminal import echo, shown

#: The changed files a promotion lists before "… and N more".
SHOWN_CHANGES = 20


@click.command()
@click.argument("source", metavar="SRC")
@click.argument("label", metavar="DST")
@click.argument("names", nargs=-1, metavar="[NAME...]")
@STORE_OPTION
@click.option("-m", "--message", default="", help="Why (kept in DST's history).")
@AUTHOR_OPTION
def promote(source: str, label: str, names: tuple[str, ...], url: str, message: str, author: str | None) -> None:
    """Point label DST at what label SRC holds, in one move: every file of SRC (DST then holds exactly SRC's
    files), or only the prompts (or files) NAME..., DST's others staying. DST's protection, required tests and
    audit apply as to any move; `history --label DST` shows it."""
    from ..sources.store.promotion import promote as promote_label

    valid_label(source)
    valid_label(label)
    with open_store(url) as opened:
        try:
            done = promote_label(opened.governance, source, label, list(dict.fromkeys(names)),
                                 author=author_of(author), message=message)
        except PromptdeckError as exc:
            fail(str(exc))
    what = f"{', '.join(shown(n) for n in dict.fromkeys(names))} as {source} holds" if names else \
        f"what {source} holds"
    if done.position is None:
        echo(f"label {label} already holds {what} (position {done.source_position}); nothing moved")
        return
    count = len(done.changes)
    echo(f"label {label} now holds {what} (position {done.source_position}): position {done.position}, "
         f"{count} file{'s' * (count != 1)} changed")
    for path, (old, new) in list(done.changes.items())[:SHOWN_CHANGES]:
        change = f"v{old} -> v{new}" if old is not None and new is not None else \
            f"added (v{new})" if new is not None else f"removed (was v{old})"
        echo(f"  {shown(path)} {change}")
    if count > SHOWN_CHANGES:
        echo(f"  … and {count - SHOWN_CHANGES} more")


def label_hint(opened_labels: list[str], name: str, label: str, url: str, from_env: bool) -> str:
    """What ``label NAME LABEL`` adds to "no prompt NAME" when NAME is a label of the store: the command that
    points LABEL at what NAME holds (``--store`` as given, its secrets masked; left out when it came from
    ``$PROMPTDECK_STORE``); "" when NAME is no label."""
    from ..sources.store.urls import shown_url

    if name not in opened_labels:
        return ""
    store = () if from_env else ("--store", shown_url(url))
    return (f"; {name} is a label: to point {label} at what {name} holds, run "
            f"{command_line('promote', name, label, *store)}")


#: The command, as ``main`` registers it.
COMMANDS = (promote,)
