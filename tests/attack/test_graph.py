"""Hostile input to the composition graph (issue 31): a partial swapped for a FIFO, a link out or 100 MB while
served, a part used by hundreds of prompts, long chains and cycles of composition, and ``/api/graph`` asked
with hostile queries and by a principal who may not see. Each is a problem logged at the user, a bounded
answer or the right HTTP status; none hangs, and the last good version stays served."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

from promptdeck.prompts.graph import Graph
from promptdeck.sources.files.source import FileSource
from tests.support.files import load, render
from tests.support.graph import ALICE, BOB, endpoint, graph  # noqa: F401 (a fixture)

USER = '---\narguments:\n  - name: tone\n---\n{% include "_p/tone.md" %}\n'


def _served(tmp_path: Path) -> FileSource:
    outer = '{{ prompt("user", tone="x") }}\n'
    source = load(tmp_path, {"_p/tone.md": "Be {{ tone }}.\n", "user.md": USER, "outer.md": outer})
    assert source.errors == {} and source.composition == []
    return source


def _swapped(tmp_path: Path, source: FileSource, make: str) -> list[str]:
    partial = tmp_path / "_p/tone.md"
    partial.unlink()
    if make == "fifo":
        os.mkfifo(partial)
    elif make == "link":
        partial.symlink_to("/etc/passwd")
    else:
        with open(partial, "wb") as out:
            out.truncate(100 * 1024 * 1024)  # sparse: 100 MB to whoever reads it
    started = time.monotonic()
    problems = [str(p) for p in source.reload([str(partial)])]
    assert time.monotonic() - started < 5
    return problems


def test_a_partial_swapped_for_a_fifo_a_link_out_or_100_mb_is_a_problem_of_its_user(tmp_path: Path) -> None:
    for make, why in (("fifo", "not a regular file"), ("link", "leaves the library"), ("big", "larger than")):
        root = tmp_path / make
        source = _served(root)
        found = _swapped(root, source, make)
        assert len(found) == 1 and found[0].startswith("user.md:5: include '_p/tone.md'") and why in found[0], found
        # the last good version stays served; its render reaches the partial and is refused, bounded
        assert [p.name for p in source.prompts()] == ["outer", "user"]
        started = time.monotonic()
        try:
            render(next(p for p in source.prompts() if p.name == "user"), tone="x")
        except Exception as exc:  # noqa: BLE001 - refused as the partial is; what matters is that it ends
            assert "tone.md" in str(exc) or "internal" in str(exc).lower()
        assert time.monotonic() - started < 5


def test_a_part_used_by_many_prompts_reloads_them_all_in_bounded_time(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"_p/shared.md": "shared\n"}
    files.update({f"u{i}.md": '{% include "_p/shared.md" %}\n' for i in range(400)})
    files.update({f"c{i}.md": f'{{{{ prompt("u{i}") }}}}\n' for i in range(400)})
    source = load(tmp_path, files)
    (tmp_path / "_p/shared.md").write_text("shared {% if %}\n")
    started = time.monotonic()
    found = source.reload([str(tmp_path / "_p/shared.md")])
    elapsed = time.monotonic() - started
    # the 400 users each get the problem; the 400 composers compile as before (their calls are unchanged)
    assert len(found) == 400 and all("_p/shared.md" in str(p) for p in found)
    assert elapsed < 20, elapsed


def test_long_chains_and_cycles_of_composition_end() -> None:
    class P:  # only what Graph reads: a name, and uses of the parsed prompt (a parsed prompt is itself)
        def __init__(self, name: str, uses: object) -> None:
            self.name, self.uses = name, uses

        def parsed(self) -> P:
            return self

    from promptdeck.prompts.composition import Uses

    chain = [P(f"p{i}", Uses(prompts=frozenset({f"p{i + 1}"}))) for i in range(20_000)]
    chain.append(P("p20000", Uses(files=frozenset({"_p/leaf.md"}), prompts=frozenset({"p0"}))))  # and a cycle
    started = time.monotonic()
    graph = Graph(chain)  # type: ignore[arg-type]
    assert len(graph.users(files=["_p/leaf.md"])) == 20_001
    files, prompts = graph.parts("p0")
    assert files == {"_p/leaf.md"} and len(prompts) == 20_000
    assert time.monotonic() - started < 5  # no recursion: a deep chain is a loop, not a stack overflow


def _raw(url: str, token: str, method: str = "GET", *, api: bool = True) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        body = refused.read()
        if api:
            json.loads(body)  # every refusal of the API is JSON, as /api/store's are
        return refused.code


def test_the_graph_api_refuses_hostile_queries(endpoint: str) -> None:  # noqa: F811
    base = endpoint.removesuffix("mcp") + "api/graph"
    assert _raw(base + "?prompt=rules", ALICE, "POST") == 405
    assert _raw(base + "?prompt=" + "x" * 30_000, ALICE) == 404  # named cut short in the answer
    assert _raw(base + "?" + "&".join(f"a{i}=1" for i in range(50)), ALICE) == 400
    assert _raw(base + "?prompt=%ff%fe", ALICE) in (400, 404)
    assert _raw(base + "?prompt=../../etc/passwd", ALICE) == 404
    assert _raw(base + "/more?prompt=rules", ALICE, api=False) == 404  # no such path at all
    # a principal who may not see payroll learns nothing of it: not by its name, not through what it uses
    status, bob_rules = graph(endpoint, "rules", BOB)
    status_review, bob_review = graph(endpoint, "review", BOB)
    assert status == status_review == 200
    assert "payroll" not in json.dumps([bob_rules, bob_review]) and "_hr" not in json.dumps([bob_rules, bob_review])
    assert graph(endpoint, "payroll", BOB)[0] == 404


def test_parts_of_a_stored_version_another_tool_wrote_never_lead_out(tmp_path: Path) -> None:
    """A store written by another tool may hold a prompt file whose includes lead out, name a file it never
    had, or compose a prompt in a loop: its parts are what the store had inside, nothing is read outside."""
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.parts import parts_at

    secret = tmp_path / "outside.md"
    secret.write_text("outside\n")
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    files = {
        "_p/ok.md": b"ok\n",
        "out.md": b'{% include "../outside.md" %}\n',
        "absent.md": b'{% include "_p/none.md" %}\n',
        "loop.md": b'{% include "_p/ok.md" %}{{ prompt("loop2") }}\n',
        "loop2.md": b'{{ prompt("loop") }}\n',
    }
    from promptdeck.sources.store.model import Listed

    listed = {path: Listed(path[:-3], "{}", "") for path in files if not path.startswith("_")}
    with Store(url, create=True) as store:
        store.publish(files, listed, author="other tool", message="")
        assert parts_at(store.reads, "out.md", 1) == {}
        assert parts_at(store.reads, "absent.md", 1) == {}
        assert parts_at(store.reads, "loop.md", 1) == {"_p/ok.md": 1, "loop2.md": 1}
