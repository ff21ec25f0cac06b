"""What ``check`` passed and every render then failed (issue 38, finding 11): a ``prompt()`` fan-out, and
``{% if x %}`` on an optional argument left out. (An empty prompt file is ``test_empty_prompts.py``'s.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from promptdeck.prompts.composition import MAX_COMPOSED_RENDERS, template_uses
from promptdeck.prompts.render import make_environment


def promptdeck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120)


def chain(folder: Path, levels: int, call: str) -> None:
    """p1 … p{levels} each making ``call`` (with ``{next}`` for the next prompt's name), and a leaf after."""
    folder.mkdir(parents=True)
    for i in range(1, levels + 1):
        (folder / f"p{i}.md").write_text(call.format(next=f"p{i + 1}") + "\n")
    (folder / f"p{levels + 1}.md").write_text("leaf\n")


def test_a_fan_out_of_prompt_calls_in_loops_is_refused_at_its_line(tmp_path: Path) -> None:
    chain(tmp_path / "lib", 8, '{{% for i in range(10) %}}{{{{ prompt("{next}") }}}}{{% endfor %}}')
    done = promptdeck("check", str(tmp_path / "lib"))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # p6 renders 10 × (1 + 10 × (1 + 10)) = 1,110 others; p7 only 110, which is within the bound.
    assert f"p1.md:1: prompt 'p1' would render other prompts more than {MAX_COMPOSED_RENDERS} times" in lines[0]
    assert any(line.startswith("p6.md:1: ") for line in lines)
    assert not any(line.startswith(("p7.md", "p8.md", "p9.md")) for line in lines)


def test_a_fan_out_of_literal_calls_is_refused_too(tmp_path: Path) -> None:
    chain(tmp_path / "lib", 4, " ".join(['{{{{ prompt("{next}") }}}}'] * 12))  # 12 + 12² + 12³ + 12⁴ > 1,000
    done = promptdeck("check", str(tmp_path / "lib"))
    assert done.returncode == 1 and "p1.md:1: prompt 'p1' would render other prompts" in done.stdout, done.stdout


def test_a_fan_out_within_the_bound_passes_and_renders(tmp_path: Path) -> None:
    chain(tmp_path / "lib", 2, '{{% for i in [1, 2, 3] %}}{{{{ prompt("{next}") }}}}{{% endfor %}}')
    assert promptdeck("check", str(tmp_path / "lib")).returncode == 0
    done = promptdeck("render", str(tmp_path / "lib"), "p1")
    assert done.returncode == 0 and done.stdout.count("leaf") == 9, done.stdout + done.stderr


def test_loops_count_only_where_the_template_states_their_length() -> None:
    env = make_environment()
    source = ('{% for i in range(2, 12, 2) %}{% for j in [1, 2] %}{{ prompt("a") }}{% endfor %}{% endfor %}'
              '{% for x in items %}{{ prompt("b") }}{% endfor %}{{ prompt("c") }}')
    calls = {call.name: call.times for call in template_uses(env.parse(source)).calls}
    assert calls == {"a": 10, "b": 1, "c": 1}


def test_if_on_an_optional_argument_left_out_is_the_branch_not_taken(tmp_path: Path) -> None:
    """Strict undefined failed every render that left ``mood`` out, though ``check`` passed the file."""
    (tmp_path / "greet.md").write_text(
        "---\narguments:\n  - {name: who, required: true}\n  - {name: mood}\n---\n"
        "Hello {{ who }}{% if mood %}, you seem {{ mood }}{% endif %}{% if not mood %}!{% endif %}\n")
    (tmp_path / "loud.md").write_text("---\narguments:\n  - {name: mood}\n---\nFeeling {{ mood }}\n")
    assert promptdeck("check", str(tmp_path)).returncode == 0
    left_out = promptdeck("render", str(tmp_path), "greet", "-a", "who=Ann")
    assert left_out.returncode == 0 and "Hello Ann!" in left_out.stdout, left_out.stdout + left_out.stderr
    given = promptdeck("render", str(tmp_path), "greet", "-a", "who=Ann", "-a", "mood=glad")
    assert "Hello Ann, you seem glad" in given.stdout
    # Printed unguarded it still fails, naming the argument, so a client can supply it.
    printed = promptdeck("render", str(tmp_path), "loud")
    assert printed.returncode != 0 and "-32602" in printed.stderr and "'mood'" in printed.stderr, printed.stderr
