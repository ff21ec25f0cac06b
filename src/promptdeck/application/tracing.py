"""Renders on OpenTelemetry traces: the span of an LLM call points at the prompt version that made it.

Every render sets ``promptdeck.prompt.name``, ``.version``, ``.label``, ``.source``, ``.stale`` (and ``.rollout``,
when a store's rollout chose the version rendered) on the current
span, or, with ``Prompts(..., span=True)``, on a span of its own (``promptdeck.render <name>``) under it.
Only ``opentelemetry-api`` is used, and only when the application has imported it already (it is in
``sys.modules``): an application without tracing pays no import and no call, and one with tracing has
set its provider up before rendering. ``trace=True`` imports it regardless (and fails if it is missing).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .rendered import Rendered

NAME, VERSION, LABEL, SOURCE = ("promptdeck.prompt.name", "promptdeck.prompt.version", "promptdeck.prompt.label",
                                "promptdeck.prompt.source")
STALE, ROLLOUT = "promptdeck.prompt.stale", "promptdeck.prompt.rollout"


def api(wanted: bool | None) -> Any:
    """``opentelemetry.trace`` when traces are wanted: True, always; None (auto), when it is already
    imported; False, never."""
    if wanted is False:
        return None
    # Read from sys.modules: an import statement, even of a module imported already, costs a render ~1 µs.
    found = sys.modules.get("opentelemetry.trace")
    if found is not None or wanted is None:
        return found
    from opentelemetry import trace

    return trace


def attributes(rendered: Rendered) -> dict[str, Any]:
    found: dict[str, Any] = {NAME: rendered.name, SOURCE: rendered.source, STALE: rendered.stale}
    if rendered.version is not None:
        found[VERSION] = rendered.version
    if rendered.label is not None:
        found[LABEL] = rendered.label
    if rendered.rollout is not None:
        found[ROLLOUT] = rendered.rollout
    return found


@contextmanager
def own_span(trace: Any, name: str) -> Iterator[Any]:
    """A span of the render's own, current while it renders."""
    with trace.get_tracer("promptdeck").start_as_current_span(f"promptdeck.render {name}") as span:
        yield span


def record(trace: Any, rendered: Rendered, span: Any = None) -> None:
    """Put the render's attributes on ``span`` (else the current span; a no-op one records nothing)."""
    target = span if span is not None else trace.get_current_span()
    if target.is_recording():
        target.set_attributes(attributes(rendered))
