"""Skills: finding SKILL.md folders and validating their front matter (feature K1)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from reactloop import UserError
from reactloop.skills import Skill, SkillSet, discover_skills, load_skill_folder

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "skills"


def make_skill(root: Path, folder: str, front: str, body: str = "# Body\nDo things.\n") -> Path:
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\n{front.strip()}\n---\n{body}", encoding="utf-8")
    return d


def good_front(name: str = "pdf-tools", **extra: str) -> str:
    lines = [f"name: {name}", "description: Work with PDF files. Use for any PDF task."]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return "\n".join(lines)


# -- front matter: good ----------------------------------------------------------------------
def test_minimal_skill_loads(tmp_path: Path) -> None:
    d = make_skill(tmp_path, "pdf-tools", good_front())
    skill = load_skill_folder(d)
    assert skill.name == "pdf-tools"
    assert skill.description == "Work with PDF files. Use for any PDF task."
    assert skill.body == "# Body\nDo things."
    assert skill.path == d.resolve()
    assert skill.license is None and skill.metadata == {} and skill.allowed_tools == ()


def test_optional_fields_and_extra_keys(tmp_path: Path) -> None:
    front = """
name: pdf-tools
description: >-
  Extract text and tables from PDF files,
  fill forms, merge documents.
license: Complete terms in LICENSE.txt
compatibility: Requires Python 3.11 and poppler
metadata:
  author: example-org
  version: 1.0
allowed-tools: Bash(python:*) Read
version: 2
tags: [pdf, documents]
"""
    skill = load_skill_folder(make_skill(tmp_path, "pdf-tools", front))
    assert skill.description == "Extract text and tables from PDF files, fill forms, merge documents."
    assert skill.license == "Complete terms in LICENSE.txt"
    assert skill.compatibility == "Requires Python 3.11 and poppler"
    assert skill.metadata == {"author": "example-org", "version": 1.0}
    assert skill.allowed_tools == ("Bash(python:*)", "Read")
    assert skill.extra == {"version": 2, "tags": ["pdf", "documents"]}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("Read, Grep, Glob", ("Read", "Grep", "Glob")), ("[Read, Grep]", ("Read", "Grep"))],
)
def test_allowed_tools_commas_and_lists(tmp_path: Path, value: str, expected: tuple[str, ...]
                                        ) -> None:
    skill = load_skill_folder(make_skill(tmp_path, "x", good_front("x", **{"allowed-tools": value})))
    assert skill.allowed_tools == expected


def test_unquoted_colon_in_description_is_tolerated(tmp_path: Path) -> None:
    # common in real SKILL.md files, invalid YAML strictly speaking
    front = "name: x\ndescription: Review code. Use when: the user asks for a review"
    skill = load_skill_folder(make_skill(tmp_path, "x", front))
    assert skill.description == "Review code. Use when: the user asks for a review"


def test_crlf_bom_and_description_of_exactly_1024(tmp_path: Path) -> None:
    d = tmp_path / "x"
    d.mkdir()
    desc = "a" * 1024
    (d / "SKILL.md").write_bytes(
        f"\ufeff---\r\nname: x\r\ndescription: {desc}\r\n---\r\nBody\r\n".encode()
    )
    skill = load_skill_folder(d)
    assert skill.description == desc and skill.body == "Body"


def test_name_of_64_characters(tmp_path: Path) -> None:
    name = "a" * 64
    assert load_skill_folder(make_skill(tmp_path, name, good_front(name))).name == name


# -- front matter: unusable, each with a message naming file, field and fix -----------------
BAD = [
    ("no-front", None, "no YAML front matter", "Start the file with a line '---'"),
    ("no-name", "description: d", "no 'name'", "name: no-name"),
    ("list-name", "name: [a, b]\ndescription: d", "no 'name' (got ['a', 'b'])",
     "name: list-name"),
    ("not-map", "- a\n- b", "must be a YAML mapping", "name: ..."),
]


@pytest.mark.parametrize(("folder", "front", "problem", "fix"), BAD, ids=[b[0] for b in BAD])
def test_unusable_front_matter(tmp_path: Path, folder: str, front: str | None, problem: str,
                               fix: str) -> None:
    d = tmp_path / folder
    d.mkdir()
    text = "# just markdown\n" if front is None else f"---\n{front}\n---\nbody\n"
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as info:
        load_skill_folder(d)
    message = str(info.value)
    assert str(d / "SKILL.md") in message
    assert problem in message
    assert fix in message


def test_unclosed_front_matter(tmp_path: Path) -> None:
    d = tmp_path / "x"
    d.mkdir()
    (d / "SKILL.md").write_text("---\nname: x\ndescription: d\n# body\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"not closed.*Add a line '---'"):
        load_skill_folder(d)


# -- front matter: deviations that load, with one warning naming each --------------------------
DEVIATIONS = [
    ("no-desc", "name: no-desc", {"description": "(no description given)"},
     "no 'description'"),
    ("empty-desc", "name: empty-desc\ndescription: ''", {"description": "(no description given)"},
     "no 'description'"),
    ("Upper", "name: Upper\ndescription: d", {"name": "Upper"},
     "'name' 'Upper' is not lowercase letters, digits and single hyphens"),
    ("a--b", "name: a--b\ndescription: d", {"name": "a--b"}, "not lowercase letters"),
    ("-lead", "name: -lead\ndescription: d", {"name": "-lead"}, "not lowercase letters"),
    ("under_score", "name: under_score\ndescription: d", {"name": "under_score"},
     "not lowercase letters"),
    ("mismatch", "name: other\ndescription: d", {"name": "other"},
     "'name' 'other' differs from the folder name 'mismatch'; the skill is called 'other'"),
    ("123", "name: 123\ndescription: d", {"name": "123"}, "'name' 123 is a number"),
    ("a" * 65, f"name: {'a' * 65}\ndescription: d", {"name": "a" * 65},
     "'name' has 65 characters, more than 64"),
    ("long-desc", "name: long-desc\ndescription: " + "x" * 1025,
     {"description": "x" * 1023 + "…"},
     "'description' has 1025 characters, more than 1024; the catalogue shows the first 1024"),
    ("compat", "name: compat\ndescription: d\ncompatibility: " + "c" * 501,
     {"compatibility": "c" * 499 + "…"}, "'compatibility' has 501 characters"),
    ("meta", "name: meta\ndescription: d\nmetadata: just text", {"metadata": {}},
     "'metadata' is not a mapping of keys to values (got 'just text'); ignored"),
    ("tools", "name: tools\ndescription: d\nallowed-tools: {a: 1}", {"allowed_tools": ()},
     "'allowed-tools' is neither a space-separated string nor a list of strings"),
    ("license", "name: license\ndescription: d\nlicense: [a, b]", {"license": None},
     "'license' is not text (got list); ignored"),
    ("bad-yaml", 'name: bad-yaml\ndescription: "Say "hi" to the user\n  when greeted"',
     {"description": 'Say "hi" to the user when greeted'},
     "the front matter is not valid YAML (front matter line 2"),
]


@pytest.mark.parametrize(("folder", "front", "expected", "note"), DEVIATIONS,
                         ids=[d[0][:20] for d in DEVIATIONS])
def test_deviations_load_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                          folder: str, front: str, expected: dict[str, object],
                                          note: str) -> None:
    d = make_skill(tmp_path, folder, front)
    with caplog.at_level(logging.WARNING, logger="reactloop.skills"):
        skill = load_skill_folder(d)
        load_skill_folder(d)  # warned once per process, not at every load
    for attr, value in expected.items():
        assert getattr(skill, attr) == value
    [record] = [r for r in caplog.records if r.name == "reactloop.skills"]
    assert record.getMessage().startswith(
        f"{d / 'SKILL.md'}: loaded, though it does not follow the Agent Skills format: ")
    assert note in record.getMessage()


def test_not_utf8_loads_with_replacement_characters(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    d = tmp_path / "latin"
    d.mkdir()
    (d / "SKILL.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\nbody\n")
    with caplog.at_level(logging.WARNING, logger="reactloop.skills"):
        assert load_skill_folder(d).description == "caf\ufffd"
    assert "it is not UTF-8 text" in caplog.text


# -- discovery -------------------------------------------------------------------------------
def test_discovers_nested_folders_sorted_and_a_dir_that_is_a_skill(tmp_path: Path) -> None:
    make_skill(tmp_path / "lib", "zeta", good_front("zeta"))
    make_skill(tmp_path / "lib" / "group", "alpha", good_front("alpha"))
    inner = make_skill(tmp_path / "lib", "outer", good_front("outer"))
    # a SKILL.md inside a skill (e.g. a template) is not another skill
    make_skill(inner / "templates", "inner", good_front("inner"))
    single = make_skill(tmp_path / "solo", "beta", good_front("beta"))
    skills = discover_skills([tmp_path / "lib", single])
    assert [s.name for s in skills] == ["alpha", "beta", "outer", "zeta"]


def test_hidden_and_cache_folders_are_skipped(tmp_path: Path) -> None:
    make_skill(tmp_path, "real", good_front("real"))
    make_skill(tmp_path / ".git", "hidden", good_front("hidden"))
    make_skill(tmp_path / "__pycache__", "cached", good_front("cached"))
    assert [s.name for s in discover_skills([tmp_path])] == ["real"]


def test_same_folder_twice_counts_once(tmp_path: Path) -> None:
    d = make_skill(tmp_path, "one", good_front("one"))
    assert [s.name for s in discover_skills([tmp_path, d, tmp_path])] == ["one"]


def test_symlinked_skill_folder_loads_and_cycles_end(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "store", "linked", good_front("linked"))
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "linked").symlink_to(real, target_is_directory=True)
    (lib / "loop").symlink_to(lib, target_is_directory=True)
    skills = discover_skills([lib])
    assert [s.name for s in skills] == ["linked"] and skills[0].path == real.resolve()


def test_duplicate_names_first_wins_and_the_other_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a = make_skill(tmp_path / "one", "dup", good_front("dup"))
    b = make_skill(tmp_path / "two", "dup", good_front("dup"))
    with caplog.at_level(logging.WARNING, logger="reactloop.skills"):
        [skill] = discover_skills([tmp_path / "one", tmp_path / "two"])
    assert skill.path == a.resolve()
    assert caplog.messages == [f"skipped the skill at {b.resolve()}: the skill at {a.resolve()} "
                               "has the same name 'dup'; rename one of them to use both"]


def test_duplicates_also_rejected_by_skillset(tmp_path: Path) -> None:
    a = load_skill_folder(make_skill(tmp_path / "one", "dup", good_front("dup")))
    b = load_skill_folder(make_skill(tmp_path / "two", "dup", good_front("dup")))
    with pytest.raises(UserError, match="two skills are named 'dup'"):
        SkillSet([a, b])


def test_missing_dir_and_dir_without_skills(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        discover_skills([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"no SKILL\.md found under"):
        discover_skills([tmp_path / "empty"])


def test_an_unusable_skill_in_a_collection_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    make_skill(tmp_path, "fine", good_front("fine"))
    bad = make_skill(tmp_path, "broken", "description: no name here")
    with caplog.at_level(logging.WARNING, logger="reactloop.skills"):
        assert [s.name for s in discover_skills([tmp_path])] == ["fine"]
    [message] = caplog.messages
    assert message.startswith(f"skipped a skill that cannot be used: {bad / 'SKILL.md'}: the "
                              "front matter has no 'name'")


def test_an_unusable_skill_named_directly_is_an_error(tmp_path: Path) -> None:
    bad = make_skill(tmp_path, "broken", "description: no name here")
    with pytest.raises(UserError, match=re.escape(str(bad / "SKILL.md"))):
        discover_skills([bad])


# -- real-world-shaped folders ---------------------------------------------------------------
def test_real_world_shaped_skill_folder(tmp_path: Path) -> None:
    long_description = (
        "Comprehensive document creation, editing, and analysis with support for tracked "
        "changes, comments, formatting preservation, and text extraction. When Claude needs "
        "to work with professional documents (.docx files) for: (1) Creating new documents, "
        "(2) Modifying or editing content, (3) Working with tracked changes, (4) Adding "
        "comments, or any other document tasks"
    )
    front = f'name: docx\ndescription: "{long_description}"\nlicense: Proprietary. LICENSE.txt ' \
            "has complete terms\nmetadata:\n  short-description: Word documents\n" \
            "  internal: false\nwhen_to_use: documents"
    d = make_skill(tmp_path, "docx", front, body="# DOCX\n\nSee [ooxml](ooxml.md).\n")
    for rel in ("ooxml.md", "LICENSE.txt", "scripts/document.py", "scripts/__init__.py",
                "references/api.md", "assets/template.docx", "ooxml/schemas/w.xsd"):
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text("x", encoding="utf-8")
    (d / ".DS_Store").write_text("x", encoding="utf-8")
    (d / "scripts" / "__pycache__").mkdir()
    (d / "scripts" / "__pycache__" / "document.cpython-311.pyc").write_bytes(b"\0")
    skill = discover_skills([tmp_path])[0]
    assert skill.description == long_description
    assert skill.extra == {"when_to_use": "documents"}
    assert skill.metadata == {"short-description": "Word documents", "internal": False}
    assert skill.files() == [
        "LICENSE.txt", "SKILL.md", "assets/template.docx", "ooxml.md", "ooxml/schemas/w.xsd",
        "references/api.md", "scripts/__init__.py", "scripts/document.py",
    ]
    assert skill.tools_file is None


def test_bundled_examples_load() -> None:
    skills = SkillSet.discover([EXAMPLES])
    assert skills.names == ["airport", "book-flight", "data-analyst"]
    for s in skills:
        assert isinstance(s, Skill) and s.body.startswith("#")
    assert "references/fare_rules.md" in skills.get("book-flight").files()
