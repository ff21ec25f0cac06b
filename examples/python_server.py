"""A promptdeck server that mixes the example prompt folder with prompts written in Python.

Run it as an MCP stdio server:  python examples/python_server.py
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from promptdeck import Arg, PromptServer, RenderContext, assistant, user

server = PromptServer("team-prompts", instructions="Team prompt library: pick a prompt as a slash command.")
server.add_folder(Path(__file__).parent / "prompts")

TEAMS = ["payments", "platform", "search", "mobile", "data"]


@server.prompt(title="Incident summary", tags=["ops"])
def incident_summary(
    service: Annotated[str, Arg(description="Affected service")],
    severity: Literal["sev1", "sev2", "sev3"] = "sev2",
    minutes: Annotated[int, Arg(description="Duration of the incident", min=1, max=10_000)] = 30,
) -> list[object]:
    """Draft a customer-facing incident summary."""
    return [
        user(f"Write a calm, factual summary of a {severity} incident on {service} lasting {minutes} minutes."),
        assistant("What was the root cause, and what has been done to prevent a repeat?"),
    ]


@server.prompt(title="Hand over to another team")
async def handover(team: str, topic: str, ctx: RenderContext) -> str:
    """Write a handover note for another team."""
    ctx.progress(1, 1, "drafted")
    return f"Write a handover note about {topic} for the {team} team: context, open questions, owners."


@server.completer("handover", "team")
def complete_team(value: str, context: Mapping[str, str]) -> list[str]:
    return [t for t in TEAMS if t.startswith(value)]


if __name__ == "__main__":
    server.serve()
