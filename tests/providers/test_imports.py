"""The conversions import no provider SDK: converting, in a fresh interpreter, leaves ``openai``,
``anthropic``, ``google`` (and pydantic, which they bring) out of ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.libraries import EXAMPLES


def test_converting_imports_no_provider_sdk() -> None:
    code = f"""
import json, sys
from promptdeck.server.app import PromptServer
from promptdeck.server.local import LocalClient
from promptdeck.providers import to_anthropic, to_gemini, to_openai, to_openai_responses
server = PromptServer()
server.add_folder({str(EXAMPLES)!r})
result = LocalClient(server, "2025-11-25").request("prompts/get", {{"name": "describe-image"}})["result"]
outs = [to_openai(result), to_openai_responses(result), to_anthropic(result), to_gemini(result)]
print(json.dumps({{"converted": [len(str(o)) for o in outs],
                   "loaded": sorted({{m.split(".")[0] for m in sys.modules}})}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout)
    assert all(size > 1000 for size in report["converted"])  # each holds the image
    assert not set(report["loaded"]) & {"openai", "anthropic", "google", "pydantic", "httpx"}
    assert "promptdeck" in report["loaded"]
