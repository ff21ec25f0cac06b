"""Renders on OpenTelemetry traces, read back with the SDK's in-memory exporter; and what a render imports."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from promptdeck import Prompts
from tests.support.application import MODELLED, publish
from tests.support.libraries import prompt_folder

_exporter = InMemorySpanExporter()
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(_exporter))


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    # The global provider can be set once per process; this module's tracer uses its own provider instead.
    _exporter.clear()
    yield _exporter


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return prompt_folder(tmp_path / "lib", {"greet.md": MODELLED})


def test_a_render_annotates_the_current_span(library: Path, tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    tracer = _provider.get_tracer("app")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    publish(library, url)
    with Prompts(url) as prompts, tracer.start_as_current_span("llm call"):
        rendered = prompts.render("greet", who="Ada")
    (span,) = exporter.get_finished_spans()
    assert span.name == "llm call"
    assert dict(span.attributes or {}) == {
        "promptdeck.prompt.name": "greet", "promptdeck.prompt.version": rendered.version,
        "promptdeck.prompt.label": "production", "promptdeck.prompt.source": url, "promptdeck.prompt.stale": False}
    assert isinstance(rendered.version, int)


def test_a_render_may_open_its_own_span(library: Path, exporter: InMemorySpanExporter,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "get_tracer", _provider.get_tracer)
    tracer = _provider.get_tracer("app")
    with Prompts(str(library), span=True) as prompts, tracer.start_as_current_span("llm call") as parent:
        prompts.render("greet", who="Ada")
        asyncio.run(prompts.arender("greet", who="Bea"))
    spans = {span.name: span for span in exporter.get_finished_spans()}
    own = [span for span in exporter.get_finished_spans() if span.name == "promptdeck.render greet"]
    assert len(own) == 2 and "llm call" in spans
    for span in own:
        assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
        assert span.attributes and span.attributes["promptdeck.prompt.name"] == "greet"
        assert span.attributes["promptdeck.prompt.source"] == str(library)
        assert "promptdeck.prompt.version" not in span.attributes  # a folder has no version
    assert not (spans["llm call"].attributes or {})


def test_trace_false_leaves_spans_alone(library: Path, exporter: InMemorySpanExporter) -> None:
    with Prompts(str(library), trace=False) as prompts, _provider.get_tracer("app").start_as_current_span("call"):
        prompts.render("greet", who="Ada")
    (span,) = exporter.get_finished_spans()
    assert not span.attributes


#: What a render from a folder must not import: HTTP, PostgreSQL, tracing, provider SDKs.
HEAVY = {"aiohttp", "psycopg", "opentelemetry", "openai", "anthropic", "google", "uvicorn", "httpx", "langfuse"}


def test_rendering_from_a_folder_imports_nothing_it_does_not_use(library: Path) -> None:
    code = ("import sys\nfrom promptdeck import Prompts\n"
            f"with Prompts({str(library)!r}) as p:\n"
            "    r = p.render('greet', who='Ada'); p.get('greet'); p.names()\n"
            "    assert r.text() == 'Hello, Ada!'\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(done.stdout.split())
    assert "jinja2" in loaded or "promptdeck" in loaded  # it did run
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_a_store_render_imports_no_postgresql_driver_for_sqlite(library: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    publish(library, url)
    code = ("import sys\nfrom promptdeck import Prompts\n"
            f"with Prompts({url!r}) as p:\n    p.render('greet', who='Ada')\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert not set(done.stdout.split()) & HEAVY
