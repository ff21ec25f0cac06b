"""Who may see a version of a stored file (sources/store/seen.py): a prompt file by its recorded scopes (or,
published before listings, its own front matter's), material and deletions by everyone, a skill's file only
by whoever may see its skill as that skill was at the publish; an unreadable version or one the store does not
hold by nobody."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdeck.prompts.access import EVERYONE
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import Recorded
from promptdeck.sources.store.seen import NOBODY, Seen
from tests.support.files import skill_md
from tests.support.stores import publish_texts

HR = "---\nscopes: [hr]\n---\nPayroll\n"
OPS_SKILL = skill_md("deploy", "Deploy", "metadata:\n  promptdeck-scopes: ops\n")
HR_ONLY, NOTHING = frozenset({"hr"}), frozenset[str]()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """Publish 1: a scoped prompt, a public one, material, an ops skill. Publish 2: the public prompt deleted,
    the skill made public. Publish 3: a prompt whose front matter cannot be read."""
    with Store(f"sqlite:///{tmp_path}/prompts.db", create=True) as opened:
        first = {"hr.md": HR, "greet.md": "Hello\n", "docs/notes.txt": "material",
                 "skills/deploy/SKILL.md": OPS_SKILL, "skills/deploy/steps.md": "Ship it.\n"}
        publish_texts(opened, None, first)
        second = {**first, "skills/deploy/SKILL.md": skill_md("deploy", "Deploy")}
        del second["greet.md"]
        publish_texts(opened, None, second)
        publish_texts(opened, None, {**second, "broken.md": "---\nscopes: [hr\n---\nx\n"})
        yield opened


def test_a_prompt_is_seen_by_its_scopes_and_material_by_everyone(store: Store) -> None:
    seen = Seen(store.reads)
    assert seen.needs("hr.md", 1) == [HR_ONLY]
    assert seen.may_see(HR_ONLY, "hr.md", 1) and seen.may_see(None, "hr.md", 1)
    assert not seen.may_see(NOTHING, "hr.md", 1) and not seen.may_see(frozenset({"ops"}), "hr.md", 1)
    assert seen.needs("greet.md", 1) == [EVERYONE] and seen.may_see(NOTHING, "greet.md", 1)
    assert seen.needs("docs/notes.txt", 1) == [EVERYONE]


def test_a_deletion_is_seen_by_everyone(store: Store) -> None:
    seen = Seen(store.reads)
    assert store.reads.recorded([("greet.md", 2)])[("greet.md", 2)].digest is None  # the version is the deletion
    assert seen.needs("greet.md", 2) == [EVERYONE]


def test_a_version_the_store_does_not_hold_is_seen_by_nobody_not_even_the_trusted(store: Store) -> None:
    seen = Seen(store.reads)
    assert seen.needs("hr.md", 9) is None and seen.needs("nowhere.md", 1) is None
    assert not seen.may_see(None, "hr.md", 9)


def test_a_prompt_published_before_listings_is_judged_by_its_own_front_matter(store: Store) -> None:
    seen = Seen(store.reads)
    digest = store.reads.recorded([("hr.md", 1)])[("hr.md", 1)].digest
    assert seen.needs("hr.md", 1, Recorded(prompt=None, digest=digest, scopes=None)) == [HR_ONLY]


def test_an_unreadable_version_is_seen_by_nobody(store: Store) -> None:
    seen = Seen(store.reads)
    digest = store.reads.recorded([("broken.md", 1)])[("broken.md", 1)].digest
    assert digest is not None
    assert seen.needs("broken.md", 1, Recorded(prompt=None, digest=digest, scopes=None)) == [NOBODY]
    assert not seen.may_see(frozenset({"hr"}), "broken.md", 1, Recorded(prompt=None, digest=digest, scopes=None))


def test_a_skills_file_is_seen_by_its_skills_scopes_as_of_its_publish(store: Store) -> None:
    seen = Seen(store.reads)
    # Version 1 was published while the skill was ops-only; the skill went public at publish 2.
    assert seen.needs("skills/deploy/steps.md", 1) == [EVERYONE, frozenset({"ops"})]
    assert not seen.may_see(NOTHING, "skills/deploy/steps.md", 1)
    assert seen.may_see(frozenset({"ops"}), "skills/deploy/steps.md", 1)
    assert seen.needs("skills/deploy/SKILL.md", 1) == [frozenset({"ops"}), frozenset({"ops"})]
    assert seen.needs("skills/deploy/SKILL.md", 2) == [EVERYONE, EVERYONE]
