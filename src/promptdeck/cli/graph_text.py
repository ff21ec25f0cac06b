"""``promptdeck check --graph`` as text: each prompt with what it uses and what uses it, then each file
with the prompts it is used by (``prompts.graph``)."""

from __future__ import annotations

from collections.abc import Mapping

from ..prompts.graph import Graph
from ..prompts.spec import Prompt


def graph_lines(prompts: Mapping[str, Prompt]) -> list[str]:
    """The lines printed: prompts by name, then files by path; an entry with nothing to say is one line."""
    graph = Graph(prompts.values())
    lines = ["prompts:"]
    for name in graph.names():
        entry = graph.entry(name)
        lines.append(f"  {name}  ({prompts[name].source})")
        uses = entry["uses"]
        lines += [f"    uses prompt {used}" for used in uses["prompts"]]
        lines += [f"    uses file {path}" for path in uses["files"]]
        if uses["dynamic"]:
            lines.append("    uses parts named by an expression (known at render)")
        if entry["usedBy"]:
            lines.append(f"    used by {', '.join(entry['usedBy'])}")
        if entry["affects"] != entry["usedBy"]:
            lines.append(f"    a change reaches {', '.join(entry['affects'])}")
    files = graph.files()
    if files:
        lines.append("files:")
    for path in files:
        found = graph.file_entry(path)
        assert found is not None  # a file of the graph has a user
        lines.append(f"  {path}")
        lines.append(f"    used by {', '.join(found['usedBy'])}")
        if found["affects"] != found["usedBy"]:
            lines.append(f"    a change reaches {', '.join(found['affects'])}")
    return lines
