"""Where things are, for tests at any depth of the tests folder."""

from __future__ import annotations

from pathlib import Path

#: the repository's root
REPO = Path(__file__).resolve().parents[2]
#: the tests folder
TESTS = REPO / "tests"
#: the bundled example library
EXAMPLES = REPO / "examples" / "prompts"
