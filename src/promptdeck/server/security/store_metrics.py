"""The ``/metrics`` series of a served store (docs/http.md#metrics): reachable, last change seen, replica lag,
webhook backlog and attempt latency, each live rollout's share and renders per arm.

Only a server serving a store has them (``StoreSource``); a folder's server shows none. A series that
names a prompt is shown only to a principal who may see that prompt (``prompts.access.may_see``, the rule
every read obeys): a scrape never tells a principal that a restricted prompt exists, nor that it is rolled
out. Label values are escaped (``label_value``), though every one comes from the store or the command
line, never from a client, and the prompts named are capped (``MAX_PROMPTS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...prompts.access import may_see
from ...sources import Source
from ...sources.store.delivery import deliverer
from ...sources.store.operations import Histogram, Probe, Reading
from ...sources.store.source import StoreSource

#: Prompts named per series, at most (rollouts are few; a store that holds more shows the first by name).
MAX_PROMPTS = 100

#: (name, type, help) of each series, in the order written.
SERIES = (
    ("promptdeck_store_reachable", "gauge", "Whether the store answered the last read (1) or not (0)."),
    ("promptdeck_store_last_change_seen_timestamp_seconds", "gauge",
     "Unix time this process last saw the label or its rollouts change (or loaded it)."),
    ("promptdeck_store_replica_lag_seconds", "gauge",
     "Age of the oldest position of the label this process does not serve yet; 0 when it serves the newest."),
    ("promptdeck_webhook_deliveries", "gauge", "Webhook deliveries in the store by status: pending, or failed "
                                               "(given up after a day, kept 30 days)."),
    ("promptdeck_webhook_attempt_seconds", "histogram", "Time of this process's webhook delivery attempts."),
    ("promptdeck_rollout_share", "gauge", "The share of a prompt's renders its live rollout gets (0 to 1)."),
    ("promptdeck_rollout_renders_total", "counter",
     "Renders of a prompt under rollout by arm: rollout (its version) or label (the label's version)."),
)


def label_value(value: str) -> str:
    """``value`` as a Prometheus label value: backslash, double quote and line feed escaped, so no value
    can end its line or its quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels(**values: str) -> str:
    return "{" + ",".join(f'{name}="{label_value(value)}"' for name, value in values.items()) + "}"


class StoreMetrics:
    """The store series of one server, one ``Probe`` per store label served."""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.stores = [source for source in sources if isinstance(source, StoreSource)]
        self.probes = {id(source): Probe(source.url, source.label) for source in self.stores}

    def render(self, held: frozenset[str] | None) -> list[str]:
        """The series as ``held`` may see them (call from a worker thread: the store may be read)."""
        if not self.stores:
            return []
        samples: dict[str, list[str]] = {name: [] for name, _, _ in SERIES}
        counted: set[str] = set()
        for source in self.stores:
            label = labels(label=source.label)
            # The follower lost the store: nothing read earlier is shown as current, and no scrape waits on a
            # connection that would time out (the follower says when the store is back).
            reading = Reading(False) if source.unreachable else self.probes[id(source)].read(source.position)
            samples["promptdeck_store_reachable"].append(f"promptdeck_store_reachable{label} {int(reading.reachable)}")
            if source.changed_at is not None:
                samples["promptdeck_store_last_change_seen_timestamp_seconds"].append(
                    f"promptdeck_store_last_change_seen_timestamp_seconds{label} {source.changed_at:.3f}")
            if reading.lag_seconds is not None:
                samples["promptdeck_store_replica_lag_seconds"].append(
                    f"promptdeck_store_replica_lag_seconds{label} {reading.lag_seconds:.3f}")
            if source.url not in counted and reading.pending is not None and reading.failed is not None:
                counted.add(source.url)  # webhooks belong to the store, not to a label: counted once
                samples["promptdeck_webhook_deliveries"] += [
                    f'promptdeck_webhook_deliveries{{status="pending"}} {reading.pending}',
                    f'promptdeck_webhook_deliveries{{status="failed"}} {reading.failed}']
            samples["promptdeck_rollout_share"] += _shares(source, held)
            samples["promptdeck_rollout_renders_total"] += _renders(source, held)
        for url in {source.url for source in self.stores}:
            running = deliverer(url)
            if running is not None:
                samples["promptdeck_webhook_attempt_seconds"] += _histogram("promptdeck_webhook_attempt_seconds",
                                                                            running.latency)
                break  # one store per server in practice; several would need a label naming it without secrets
        lines: list[str] = []
        for name, kind, text in SERIES:
            if samples[name]:
                lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *samples[name]]
        return lines


def _visible(source: StoreSource, held: frozenset[str] | None, names: Iterable[str]) -> list[str]:
    scopes = dict(source.splits.scopes)
    # A prompt whose scopes are not known is not named (never the case: they are recorded before it is counted).
    return [name for name in sorted(set(names)) if name in scopes and may_see(held, scopes[name])][:MAX_PROMPTS]


def _shares(source: StoreSource, held: frozenset[str] | None) -> list[str]:
    shares = dict(source.splits.shares())
    return [f"promptdeck_rollout_share{labels(label=source.label, prompt=name)} {shares[name] / 10000:g}"
            for name in _visible(source, held, shares)]


def _renders(source: StoreSource, held: frozenset[str] | None) -> list[str]:
    counts = dict(source.splits.renders)
    shown = set(_visible(source, held, (name for name, _ in counts)))
    return [f"promptdeck_rollout_renders_total{labels(label=source.label, prompt=name, arm=arm)} {count}"
            for (name, arm), count in sorted(counts.items()) if name in shown]


def _histogram(name: str, histogram: Histogram) -> list[str]:
    return [*(f'{name}_bucket{{le="{le}"}} {count}' for le, count in histogram.cumulative()),
            f"{name}_sum {histogram.sum:.6f}", f"{name}_count {histogram.count}"]
