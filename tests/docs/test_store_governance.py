"""docs/store.md's Governance, Rollouts and Promotion blocks run as written, after its walkthrough, from a fresh
folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

STORE_PAGE = REPO / "docs" / "store.md"


def _block(after: str) -> list[str]:
    found = re.search(r"```sh\n(.*?)```", STORE_PAGE.read_text().split(after, 1)[1], re.S)
    assert found, f"docs/store.md lost its shell block after {after!r}"
    return found.group(1).splitlines()


def test_the_governance_and_rollout_blocks_run_as_written(tmp_path: Path) -> None:
    walkthrough = [line for line in _block("# A versioned store") if " serve " not in line]
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")
    (tmp_path / "examples").symlink_to(REPO / "examples")
    script = [*walkthrough, "echo '=== governance'", *_block("## Governance"), "echo '=== rollouts'",
              *_block("## Rollouts"), "echo '=== promotion'", *_block("## Promotion")]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    governance, rollouts = done.stdout.split("=== governance\n", 1)[1].split("=== promotion\n")[0].split(
        "=== rollouts\n")
    promotion = done.stdout.split("=== promotion\n", 1)[1]
    assert "label production now holds summarize as staging holds (position " in promotion
    assert "  summarize.md v2 -> v3\n" in promotion
    assert "label production already holds what staging holds (position " in promotion
    assert "promote summarize from staging (position " in promotion and "  shorter  [summarize.md v2->v3]" in promotion
    assert "label production is protected: moving it through /api/store needs the scope release" in governance
    audit = governance.split("label production is back at position")[1]
    assert "too long after all  [summarize.md v2->v1]" in audit and "longer answers  [summarize.md v1->v2]" in audit
    assert "label production is no longer protected (it needed release)" in governance
    assert "10% of the renders of summarize get version 2, the rest version 1 (rollout 1)" in rollouts
    assert "summarize is at version 2 (rollout 2 promoted)" in rollouts
    assert "rollout 1 of summarize (summarize.md v1): aborted" in rollouts
