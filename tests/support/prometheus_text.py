"""A strict reader of the Prometheus text exposition format (version 0.0.4), for tests that scrape /metrics.

prometheus_client is not a dependency of promptdeck, so the format's rules are checked here: every sample
belongs to a family announced by one ``# HELP`` and one ``# TYPE`` line before it, a family's samples are
together, label values are quoted with only ``\\\\``, ``\\"`` and ``\\n`` escaped, counters end in ``_total``,
and a histogram's buckets are cumulative and end with ``le="+Inf"`` equal to its ``_count``.
"""

from __future__ import annotations

import math
import re

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(rf"({NAME})(\{{(?:{LABEL}(?:,{LABEL})*)?\}})? (\S+)")
LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"')
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("", "_sum", "_count"), "counter": ("",),
            "gauge": ("",), "untyped": ("",)}

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse(text: str) -> Samples:
    """Every sample of ``text``: (name, sorted (label, value) pairs) -> value; AssertionError on a broken rule."""
    assert text.endswith("\n"), "the text ends with a line feed"
    helps: set[str] = set()
    types: dict[str, str] = {}
    done: set[str] = set()
    current: str | None = None
    samples: Samples = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert re.fullmatch(NAME, name) and name not in helps, line
            helps.add(name)
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name in helps and name not in types and kind in SUFFIXES, line
            types[name] = kind
            if current is not None:
                done.add(current)
            current = name
            continue
        assert not line.startswith("#") and line, f"a stray line: {line!r}"
        match = SAMPLE.fullmatch(line)
        assert match, f"not a sample line: {line!r}"
        name, labels, value = match.groups()
        family = next((f for f in types for s in SUFFIXES[types[f]] if name == f + s), None)
        assert family is not None and family == current and family not in done, f"sample outside its family: {line}"
        if types[family] == "counter":
            assert family.endswith("_total"), family
        pairs = tuple(sorted((k, unescape(v)) for k, v in LABEL_PAIR.findall(labels or "")))
        key = (name, pairs)
        assert key not in samples, f"a sample repeated: {line}"
        number = float(value)
        assert not math.isnan(number), line
        samples[key] = number
    for family, kind in types.items():
        if kind == "histogram":
            buckets = [(dict(k[1]), v) for k, v in samples.items() if k[0] == family + "_bucket"]
            counts = [v for _, v in buckets]
            assert counts == sorted(counts) and buckets[-1][0]["le"] == "+Inf", family
            assert buckets[-1][1] == samples[(family + "_count", ())], family
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))
