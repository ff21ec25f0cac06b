"""``promptdeck ui`` against a remote MCP server, as its tests start it: the SDK's own server of a small library."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.support.paths import REPO

SDK_SERVER = REPO / "benchmarks" / "sdk_server.py"


GREET = """---
title: Greet someone
description: A greeting in a chosen style.
arguments:
  - name: who
    description: whom to greet
    required: true
  - name: style
    enum: [warm, formal]
    default: warm
---
Hello {{ who }}, in a {{ style }} way.
"""


def library(root: Path) -> Path:
    root.mkdir()
    (root / "greet.md").write_text(GREET)
    (root / "farewell.md").write_text("---\ndescription: Say goodbye.\n---\nGoodbye for now.\n")
    return root


def command(*argv: str) -> str:
    return shlex.join([sys.executable, *argv])
