"""Finding and checking one skill folder (sources/files/skills.py), on real folders: nesting, every problem
with its file and line, links out of the skill, caps that hold with 10,000 files or a 100 MB file (stat
only, nothing read), digests of the exact bytes, front matter as written, and reads that serve only
those bytes."""

from __future__ import annotations

import hashlib
import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from promptdeck.prompts.skills import SKILL_MIME
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files import skills as skills_module
from promptdeck.sources.files.paths import SkillLimits, read_confined
from promptdeck.sources.files.skills import Found, find_skills, read_skill_bytes, walk
from tests.support.files import skill_md, write

ORIGIN = ".claude/skills/pdf"


def folder(root: Path, files: dict[str, str | bytes]) -> Path:
    """``root``, with ``files`` written below it."""
    write(root, files)
    return root


def find(top: Path, limits: SkillLimits | None = None, origin: str = ORIGIN) -> Found:
    return find_skills(os.path.realpath(top), origin, limits or SkillLimits())


def problems(found: Found) -> list[str]:
    return [str(e) for e in found.problems]


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    return folder(tmp_path / "pdf", {
        "SKILL.md": skill_md(),
        "references/FORMS.md": "# Forms\n",
        "scripts/extract.py": "print('x')\n",
        "scripts/run": "#!/bin/sh\necho hi\n",
        "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
        "assets/blob.bin": b"\x00\xff\x00",
        "LICENSE": "MIT\n",
    })


# -- what a skill is ------------------------------------------------------------------------------------


def test_a_skill_is_every_file_in_its_folder_with_digests_of_its_bytes(pdf: Path) -> None:
    found = find(pdf)
    assert found.problems == [] and found.claimed == [("pdf",)]
    (skill,) = found.skills
    assert skill.path == ("pdf",) and skill.origin == ORIGIN
    assert [f.path for f in skill.files] == ["SKILL.md", "LICENSE", "assets/blob.bin", "assets/logo.png",
                                             "references/FORMS.md", "scripts/extract.py", "scripts/run"]
    for file in skill.files:
        data = (pdf / file.path).read_bytes()
        assert file.digest == "sha256:" + hashlib.sha256(data).hexdigest() and file.size == len(data)
    mimes = {f.path: f.mime_type for f in skill.files}
    assert mimes == {"SKILL.md": SKILL_MIME, "LICENSE": "text/plain", "assets/blob.bin": "application/octet-stream",
                     "assets/logo.png": "image/png", "references/FORMS.md": "text/markdown",
                     "scripts/extract.py": "text/x-python", "scripts/run": "text/plain"}
    assert skill.folders == ("assets", "references", "scripts")


def test_the_front_matter_is_served_as_written_types_and_all(tmp_path: Path) -> None:
    front = ("---\nname: pdf\ndescription: \"PDFs: read, fill\"\nlicense: Apache-2.0\nversion: 2\nratio: 0.5\n"
             "beta: yes\nnothing: ~\nreleased: 2025-01-31\nat: 2025-01-31 10:00:00\nquoted: \"2025-01-31\"\n"
             "tags: [a, 1, true]\nmetadata:\n  author: me\n  nested: {deep: [1, {x: y}]}\n"
             "allowed-tools: Bash(git:*) Read\n---\nbody\n")
    (skill,) = find(folder(tmp_path / "pdf", {"SKILL.md": front})).skills
    assert skill.frontmatter == {
        "name": "pdf", "description": "PDFs: read, fill", "license": "Apache-2.0", "version": 2, "ratio": 0.5,
        "beta": True, "nothing": None, "released": "2025-01-31", "at": "2025-01-31 10:00:00",
        "quoted": "2025-01-31", "tags": ["a", 1, True],
        "metadata": {"author": "me", "nested": {"deep": [1, {"x": "y"}]}}, "allowed-tools": "Bash(git:*) Read"}
    assert list(skill.frontmatter) == ["name", "description", "license", "version", "ratio", "beta", "nothing",
                                       "released", "at", "quoted", "tags", "metadata", "allowed-tools"]
    assert json.loads(json.dumps(skill.entry()))["frontmatter"] == skill.frontmatter


def test_hidden_files_and_pycache_are_no_part_of_a_skill(tmp_path: Path) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md(), ".env": "SECRET=1", ".git/config": "[core]",
                                   "refs/.DS_Store": "x", "scripts/__pycache__/a.pyc": b"\x00", "scripts/a.py": ""})
    (skill,) = find(top).skills
    assert [f.path for f in skill.files] == ["SKILL.md", "scripts/a.py"]
    assert skill.folders == ("refs", "scripts")


def test_a_link_inside_the_skill_is_served_with_its_targets_bytes_a_folder_link_is_not_followed(pdf: Path) -> None:
    os.symlink("references/FORMS.md", pdf / "FORMS.md")
    os.symlink("references", pdf / "refs")
    os.symlink(".", pdf / "again")
    (skill,) = find(pdf).skills
    forms = skill.file("FORMS.md")
    assert forms is not None and forms.digest == skill.file("references/FORMS.md").digest  # type: ignore[union-attr]
    assert skill.file("refs/FORMS.md") is None and not skill.is_directory("refs")


def test_nested_skills_are_files_of_the_outer_one_and_skills_of_their_own(tmp_path: Path) -> None:
    top = folder(tmp_path / "outer", {
        "SKILL.md": skill_md("outer"), "guide.md": "g",
        "inner/SKILL.md": skill_md("inner"), "inner/refs/x.md": "x",
        "group/deepest/SKILL.md": skill_md("deepest"),
    })
    found = find(top, origin=".claude/skills/outer")
    assert found.problems == []
    by_path = {s.path: s for s in found.skills}
    assert set(by_path) == {("outer",), ("outer", "inner"), ("outer", "group", "deepest")}
    outer, inner = by_path[("outer",)], by_path[("outer", "inner")]
    assert [f.path for f in outer.files] == ["SKILL.md", "group/deepest/SKILL.md", "guide.md", "inner/SKILL.md",
                                             "inner/refs/x.md"]
    assert [f.path for f in inner.files] == ["SKILL.md", "refs/x.md"]
    assert inner.uri == "skill://outer/inner/SKILL.md" == outer.file_uri("inner/SKILL.md")
    outer_md, inner_md = outer.file("inner/SKILL.md"), inner.file("SKILL.md")
    assert outer_md is not None and inner_md is not None
    assert (outer_md.size, outer_md.mime_type, outer_md.digest) == (inner_md.size, inner_md.mime_type, inner_md.digest)
    assert inner.origin == ".claude/skills/outer/inner"


def test_a_broken_nested_skill_is_a_problem_of_its_own_and_leaves_the_outer_one_served(tmp_path: Path) -> None:
    top = folder(tmp_path / "outer", {"SKILL.md": skill_md("outer"), "inner/SKILL.md": skill_md("Inner")})
    found = find(top, origin="skills/outer")
    assert [s.path for s in found.skills] == [("outer",)]
    assert problems(found) == ["skills/outer/inner/SKILL.md:2: name 'Inner' is not a valid skill name: use "
                               "lowercase letters a-z, digits and single hyphens, neither first nor last"]
    assert found.claimed == [("outer",), ("outer", "inner")]


# -- check problems, each at its file and line ------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    (skill_md("git"), "SKILL.md:2: name 'git' does not match the skill's folder 'pdf'"),
    ("---\ndescription: d\n---\n", "SKILL.md:1: SKILL.md gives no name"),
    ("---\nname: pdf\n---\n", "SKILL.md:1: SKILL.md gives no description"),
    ("---\nname: pdf\ndescription: \"\"\n---\n", "SKILL.md:3: description is empty"),
    (skill_md(description="x" * 1025), "SKILL.md:3: description is longer than 1024 characters"),
    (skill_md("PDF"), "SKILL.md:2: name 'PDF' is not a valid skill name"),
    (skill_md(extra="compatibility: [a]\n"), "SKILL.md:4: compatibility must be text"),
    (skill_md(extra="metadata:\n  promptdeck-scopes: 3\n"),
     "SKILL.md:5: metadata.promptdeck-scopes must be scope names"),
    ("---\nname: pdf\ndescription: [unclosed\n---\n", "SKILL.md:3: front matter is not valid YAML"),
    ("---\nname: pdf\nname: pdf\ndescription: d\n---\n", "SKILL.md:3: front matter: key 'name' is given twice"),
    (skill_md(extra="limit: .inf\n"), "SKILL.md:4: front matter: '.inf' is not a number JSON can carry"),
    ("---\nname: pdf\ndescription: d\n", "SKILL.md:1: front matter starts with '---' but has no closing"),
    ("# no front matter\n", "SKILL.md:1: SKILL.md has no front matter"),
    ("---\n- a\n---\n", "SKILL.md:2: front matter must be a mapping"),
    (b"---\nname: pdf\ndescription: caf\xe9\n---\n", "SKILL.md: SKILL.md is not UTF-8 text"),
])
def test_every_front_matter_problem_is_at_its_line(tmp_path: Path, text: str | bytes, expected: str) -> None:
    found = find(folder(tmp_path / "pdf", {"SKILL.md": text}))
    assert found.skills == [] and found.claimed == [("pdf",)]
    assert any(p.startswith(f"{ORIGIN}/{expected}") for p in problems(found)), problems(found)


def test_all_problems_of_a_skill_md_are_found_at_once(tmp_path: Path) -> None:
    found = find(folder(tmp_path / "pdf", {"SKILL.md": "---\nname: Pdf\ndescription: 3\nlicense: [x]\n---\n"}))
    assert [p.split(": ", 1)[0] for p in problems(found)] == [f"{ORIGIN}/SKILL.md:2", f"{ORIGIN}/SKILL.md:3",
                                                              f"{ORIGIN}/SKILL.md:4"]


def test_a_folder_without_skill_md_is_no_skill(tmp_path: Path) -> None:
    found = find(folder(tmp_path / "pdf", {"skill.md": skill_md(), "x.md": "x"}))
    assert found.skills == [] and found.claimed == []
    assert problems(found) == [f"{ORIGIN}: is no skill: it has no SKILL.md; skill.md must be named SKILL.md"]


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_link_out_of_the_skill_is_a_problem_and_the_skill_is_not_served(pdf: Path, tmp_path: Path,
                                                                           kind: str) -> None:
    outside = folder(tmp_path / "outside", {"secret.txt": "secret"})
    os.symlink(outside / "secret.txt" if kind == "file" else outside, pdf / "references" / "leak")
    found = find(pdf)
    assert found.skills == []
    assert problems(found) == [f"{ORIGIN}/references/leak: is a link that leads out of the skill"]


def test_a_link_out_of_the_skill_into_its_neighbour_is_out_too(tmp_path: Path) -> None:
    write(tmp_path / "pdf2", {"SKILL.md": skill_md("pdf2")})  # a name the skill's own is a prefix of
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md()})
    os.symlink("../pdf2/SKILL.md", top / "other.md")
    assert problems(find(top)) == [f"{ORIGIN}/other.md: is a link that leads out of the skill"]


def test_skill_md_itself_linked_out_is_refused_unread(tmp_path: Path) -> None:
    write(tmp_path, {"elsewhere.md": skill_md()})
    top = tmp_path / "pdf"
    top.mkdir()
    os.symlink(tmp_path / "elsewhere.md", top / "SKILL.md")
    found = find(top)
    assert found.skills == []
    assert f"{ORIGIN}/SKILL.md: is a link that leads out of the skill" in problems(found)


def test_links_to_nothing_to_hidden_files_and_special_files_are_problems(pdf: Path) -> None:
    write(pdf, {".secret": "s"})
    os.symlink("missing.md", pdf / "dangling.md")
    os.symlink(".secret", pdf / "shown.md")
    os.mkfifo(pdf / "pipe")
    found = find(pdf)
    assert found.skills == []
    assert problems(found) == [f"{ORIGIN}/dangling.md: is a link to nothing",
                               f"{ORIGIN}/pipe: is not a regular file (a FIFO, socket or device)",
                               f"{ORIGIN}/shown.md: is a link to a hidden file, which a skill does not serve"]


def test_file_names_a_uri_cannot_carry_are_problems(pdf: Path) -> None:
    (pdf / "back\\slash.md").write_text("x")
    os.close(os.open(os.fsencode(pdf) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY))
    found = find(pdf)
    assert found.skills == []
    assert [p.split(": ", 1)[1] for p in problems(found)] == [
        "cannot be served: its name holds a backslash or a control, format or BiDi character",
        "cannot be served: its name is not UTF-8 text, which a URI cannot carry"]


def test_caps_on_files_bytes_and_depth(tmp_path: Path) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md(), "a.md": "a" * 100, "b.md": "b" * 100,
                                   "d1/d2/d3/deep.md": "x"})
    assert problems(find(top, SkillLimits(max_files=3))) == [f"{ORIGIN}: holds more than 3 files"]
    assert problems(find(top, SkillLimits(max_file_bytes=99))) == [
        f"{ORIGIN}/a.md: is larger than 99 bytes (the limit for one file of a skill)",
        f"{ORIGIN}/b.md: is larger than 99 bytes (the limit for one file of a skill)"]
    total = len(skill_md()) + 201
    assert problems(find(top, SkillLimits(max_total_bytes=200))) == [
        f"{ORIGIN}: holds {total} bytes, more than 200 (the limit for one skill)"]
    assert problems(find(top, SkillLimits(max_depth=2))) == [
        f"{ORIGIN}/d1/d2/d3: lies deeper than 2 folders below the skill"]
    assert problems(find(top, SkillLimits(max_files=4, max_total_bytes=total, max_file_bytes=100, max_depth=3))) == []


def test_the_defaults_are_the_seps_limits() -> None:
    assert SkillLimits() == SkillLimits(max_files=512, max_total_bytes=16 * 2 ** 20, max_file_bytes=10 * 2 ** 20,
                                        max_depth=16)


def recording_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file ``find_skills`` reads from now on, by its path below the skill."""
    reads: list[str] = []

    def read(root: str, rel: str, limit: int) -> bytes:
        reads.append(rel)
        return read_confined(root, rel, limit)

    monkeypatch.setattr(skills_module, "read_confined", read)
    return reads


def test_ten_thousand_files_are_a_problem_found_by_counting_not_by_reading(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md()})
    for i in range(10_000):
        os.close(os.open(top / f"f{i:05}.md", os.O_CREAT | os.O_WRONLY))
    reads = recording_reads(monkeypatch)
    tracemalloc.start()
    started = time.perf_counter()
    found = find(top)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert found.skills == [] and problems(found) == [f"{ORIGIN}: holds more than 512 files"]
    assert reads == ["SKILL.md"]  # its front matter: no other file was read
    assert peak < 16 * 2 ** 20 and elapsed < 10


def test_ten_thousand_files_spread_over_folders_stop_the_walk_early(tmp_path: Path) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md()})
    for i in range(100):
        sub = top / f"d{i:03}"
        sub.mkdir()
        for j in range(100):
            os.close(os.open(sub / f"f{j:03}", os.O_CREAT | os.O_WRONLY))
    walked = walk(os.path.realpath(top), SkillLimits())
    assert not walked.complete and len(walked.files) <= 512
    assert walked.problems == [("", "holds more than 512 files")]


def test_a_flood_of_hidden_files_ends_the_walk_too(tmp_path: Path) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md()})
    for i in range(200):
        os.close(os.open(top / f".h{i}", os.O_CREAT | os.O_WRONLY))
    walked = walk(os.path.realpath(top), SkillLimits(max_files=10))
    assert not walked.complete and walked.problems == [("", "holds more than 100 hidden files and folders")]


def test_a_100_mb_file_is_a_problem_found_by_its_size_never_read(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md()})
    with open(top / "huge.bin", "wb") as sparse:
        sparse.truncate(100 * 2 ** 20)  # sparse: 100 MB long, no block written
    reads = recording_reads(monkeypatch)
    found = find(top)
    assert found.skills == [] and "huge.bin" not in reads
    assert problems(found) == [f"{ORIGIN}/huge.bin: is larger than 10485760 bytes (the limit for one file of a "
                               "skill)"]


def test_problems_of_many_files_are_cut_short(tmp_path: Path) -> None:
    top = folder(tmp_path / "pdf", {"SKILL.md": skill_md()})
    for i in range(30):
        os.symlink("/etc/hostname", top / f"l{i:02}")
    found = problems(find(top))
    assert len(found) == 21 and found[-1] == f"{ORIGIN}: and 10 more problems like these"


def test_an_outer_skill_seen_more_widely_than_one_nested_in_it_is_not_served(tmp_path: Path) -> None:
    hr = "metadata:\n  promptdeck-scopes: hr\n"
    top = folder(tmp_path / "outer", {"SKILL.md": skill_md("outer"), "pay/SKILL.md": skill_md("pay", extra=hr)})
    found = find(top, origin="skills/outer")
    assert [s.path for s in found.skills] == [("outer", "pay")]
    assert found.skills[0].scopes == {"hr"}
    assert problems(found) == ["skills/outer: is seen by everyone but holds the skill outer/pay, restricted to "
                               "hr, whose files it would show: restrict it as much"]
    write(top, {"SKILL.md": skill_md("outer", extra=hr)})
    assert {s.path for s in find(top, origin="skills/outer").skills} == {("outer",), ("outer", "pay")}


def test_a_nested_skill_md_whose_scopes_cannot_be_read_keeps_the_outer_one_unserved(tmp_path: Path) -> None:
    top = folder(tmp_path / "outer", {"SKILL.md": skill_md("outer"), "pay/SKILL.md": "---\nscopes: [\n---\n"})
    found = find(top, origin="skills/outer")
    assert found.skills == []
    assert "skills/outer: holds the skill outer/pay, whose SKILL.md does not say readably who may see it; " \
           "not served until it does" in problems(found)


# -- reading what was listed ------------------------------------------------------------------------------


def test_a_read_gives_the_exact_bytes_listed_and_refuses_changed_ones(pdf: Path) -> None:
    (skill,) = find(pdf).skills
    top = os.path.realpath(pdf)
    forms = skill.file("references/FORMS.md")
    assert forms is not None
    assert read_skill_bytes(top, "references/FORMS.md", forms, 1024) == b"# Forms\n"
    (pdf / "references" / "FORMS.md").write_text("# Other\n")  # same size, other bytes
    with pytest.raises(InvalidParams, match="changed since"):
        read_skill_bytes(top, "references/FORMS.md", forms, 1024)


def test_a_read_is_confined_to_the_skill_even_if_a_link_is_swapped_in_after_the_walk(pdf: Path,
                                                                                    tmp_path: Path) -> None:
    (skill,) = find(pdf).skills
    forms = skill.file("references/FORMS.md")
    assert forms is not None
    write(tmp_path, {"secret.md": "# Forms\n"})  # the very bytes listed, outside
    (pdf / "references" / "FORMS.md").unlink()
    os.symlink(tmp_path / "secret.md", pdf / "references" / "FORMS.md")
    with pytest.raises(InvalidParams, match="leads out"):
        read_skill_bytes(os.path.realpath(pdf), "references/FORMS.md", forms, 1024)
