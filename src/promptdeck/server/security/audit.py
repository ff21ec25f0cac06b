"""What the HTTP endpoint records: Prometheus counters for ``/metrics`` and one audit line per render.

The audit log names the principal (the token's name, or the client address without auth), never the
token or argument values; every value is escaped by ``logs``.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ...logs import field as log_field

audit = logging.getLogger("promptdeck.audit")

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


@dataclass
class Metrics:
    """Counters in the Prometheus text format, for ``/metrics``."""

    requests: dict[tuple[str, str], int] = field(default_factory=dict)
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    duration_sum: float = 0.0
    duration_count: int = 0

    def observe(self, method: str, outcome: str, seconds: float) -> None:
        key = (method, outcome)
        self.requests[key] = self.requests.get(key, 0) + 1
        self.buckets[bisect_left(BUCKETS, seconds)] += 1
        self.duration_sum += seconds
        self.duration_count += 1

    def render(self, sessions: int, prompts: int) -> bytes:
        lines = ["# HELP promptdeck_requests_total JSON-RPC requests by method and outcome.",
                 "# TYPE promptdeck_requests_total counter"]
        for (method, outcome), count in sorted(self.requests.items()):
            lines.append(f'promptdeck_requests_total{{method="{method}",outcome="{outcome}"}} {count}')
        lines += ["# HELP promptdeck_request_seconds Time to answer a JSON-RPC request.",
                  "# TYPE promptdeck_request_seconds histogram"]
        total = 0
        for bound, count in zip(BUCKETS, self.buckets, strict=False):
            total += count
            lines.append(f'promptdeck_request_seconds_bucket{{le="{bound}"}} {total}')
        lines.append(f'promptdeck_request_seconds_bucket{{le="+Inf"}} {self.duration_count}')
        lines.append(f"promptdeck_request_seconds_sum {self.duration_sum:.6f}")
        lines.append(f"promptdeck_request_seconds_count {self.duration_count}")
        lines += ["# HELP promptdeck_sessions Live HTTP sessions.", "# TYPE promptdeck_sessions gauge",
                  f"promptdeck_sessions {sessions}",
                  "# HELP promptdeck_prompts Prompts the asker may see.", "# TYPE promptdeck_prompts gauge",
                  f"promptdeck_prompts {prompts}"]
        return ("\n".join(lines) + "\n").encode()


class _Result(msgspec.Struct):
    meta: dict[str, Any] = msgspec.field(default_factory=dict, name="_meta")


class _Answer(msgspec.Struct):
    result: _Result | None = None


_answer = msgspec.json.Decoder(_Answer)


def served(answer: bytes | None) -> tuple[int | None, str | None]:
    """The version and label a ``prompts/get`` answer says it rendered (its result's ``_meta``); (None, None)
    for a folder's prompt, an error, or an answer that is not one JSON object. Read only when the line is
    written: the render path keeps nothing for it."""
    if not answer:
        return None, None
    try:
        meta = (_answer.decode(answer).result or _Result()).meta
    except msgspec.DecodeError:
        return None, None
    version, label = meta.get("promptdeck.dev/version"), meta.get("promptdeck.dev/label")
    return (version if type(version) is int else None), (label if type(label) is str else None)


def log_get(principal: str, prompt: object, outcome: str, seconds: float, answer: bytes | None = None) -> None:
    """One audit line per prompts/get: who, which prompt, the version and label rendered (``answer``: the
    encoded response; "-" for a folder's prompt or an error), outcome, duration. Never argument values."""
    if not audit.isEnabledFor(logging.INFO):
        return  # below -v: not even the line's fields are made (every HTTP get comes here; issue 29)
    name = prompt if isinstance(prompt, str) else None
    version, label = served(answer)
    audit.info("prompts/get principal=%s prompt=%r version=%s label=%s outcome=%s duration_ms=%.2f",
               log_field(principal), name, "-" if version is None else version,
               "-" if label is None else log_field(label), outcome, seconds * 1000,
               extra={"principal": principal, "prompt": name, "version": version, "label": label,
                      "outcome": outcome, "duration_ms": round(seconds * 1000, 2)})


def log_call(principal: str, tool: object, prompt: object, outcome: str, seconds: float) -> None:
    """One audit line per tools/call, as for prompts/get: who, which tool (and prompt), outcome, duration."""
    if not audit.isEnabledFor(logging.INFO):
        return  # see log_get
    tool = tool if isinstance(tool, str) else None
    prompt = prompt if isinstance(prompt, str) else None
    audit.info("tools/call principal=%s tool=%r prompt=%r outcome=%s duration_ms=%.2f", log_field(principal), tool,
               prompt, outcome, seconds * 1000,
               extra={"principal": principal, "tool": tool, "prompt": prompt, "outcome": outcome,
                      "duration_ms": round(seconds * 1000, 2)})
