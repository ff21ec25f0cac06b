"""The Source seam: a kind of source PromptServer knows nothing about, served to the official SDK over stdio.

The shelf below stands in for a versioned store: it loads with one good prompt and one problem, and
learns of new prompts on its own (here, when the ``publish`` prompt runs), telling the server through
the callback it was attached with. Nothing in PromptServer is specific to it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.flag import Flag, setter_for
from tests.support.libraries import EXAMPLES

SERVER = '''
import sys
from promptdeck import PromptServer
from promptdeck.protocol.errors import PromptFileError
from promptdeck.sources import Source
from promptdeck.sources.python import prompt_from_function


def greet(name: str) -> str:
    return f"Hello {name}, from the shelf."


class Shelf(Source):
    def __init__(self):
        self.shelf = {}
        self.changed = None

    def load(self):
        self.shelf["greet"] = prompt_from_function(greet)
        return [PromptFileError("shelf/broken", "this entry does not parse", 3)]

    def prompts(self):
        return list(self.shelf.values())

    def attach(self, changed):
        self.changed = changed


shelf = Shelf()
server = PromptServer("shelf-test")
server.add_folder(sys.argv[1])
server.add_source(shelf)


@server.prompt()
def publish(name: str) -> str:
    def shelved() -> str:
        return f"I am {name}."

    shelf.shelf[name] = prompt_from_function(shelved, name=name)
    shelf.changed()
    return f"published {name}"


@server.prompt(name="code-review")
def shadowed() -> str:
    return "never served: the folder added first has a code-review"


server.serve(watch=False)
'''


def test_a_new_kind_of_source_plugs_in_without_touching_the_server(tmp_path: Path) -> None:
    script = tmp_path / "shelf_server.py"
    script.write_text(SERVER)
    errors = tmp_path / "stderr.txt"
    changed = Flag()

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=[str(script), str(EXAMPLES)], env=dict(os.environ))
        with errors.open("w") as stderr:
            async with stdio_client(params, errlog=stderr) as (read, write), \
                    ClientSession(read, write, message_handler=setter_for(types.PromptListChangedNotification,
                                                                          changed)) as session:
                await session.initialize()
                names = [p.name for p in (await session.list_prompts()).prompts]
                assert "greet" in names and "publish" in names and "code-review" in names
                greeting = await session.get_prompt("greet", {"name": "Ada"})
                assert greeting.messages[0].content.text == "Hello Ada, from the shelf."
                review = await session.get_prompt("code-review", {"code": "x = 1"})
                assert "never served" not in review.messages[0].content.text  # the earlier source wins

                await session.get_prompt("publish", {"name": "fresh"})
                with anyio.fail_after(10):
                    await changed.wait()
                assert "fresh" in [p.name for p in (await session.list_prompts()).prompts]
                assert (await session.get_prompt("fresh", {})).messages[0].content.text == "I am fresh."

    anyio.run(run)
    log = errors.read_text()
    assert "shelf/broken" in log and "this entry does not parse" in log, log
    assert "prompt 'code-review' from" in log and "is hidden by" in log, log
