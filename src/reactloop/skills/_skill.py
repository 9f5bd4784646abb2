"""One Agent Skill: a folder holding a ``SKILL.md`` (feature K1), and finding them on disk.

The front matter follows the public Agent Skills format: ``name`` (lowercase letters, digits
and single hyphens, at most 64 characters, equal to the folder's name) and ``description`` (at
most 1024 characters) are required; ``license``, ``compatibility``, ``metadata`` and
``allowed-tools`` are optional; any other key is kept in :attr:`Skill.extra` and otherwise
ignored, so skills written for other tools load unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.errors import UserError
from reactloop.skills._frontmatter import split_front_matter

__all__ = ["SKILL_FILE", "Skill", "discover_skills", "load_skill_folder"]

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FILES_LISTED = 200
_MAX_DEPTH = 6
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KNOWN = frozenset({"name", "description", "license", "compatibility", "metadata",
                    "allowed-tools"})
# folders that never hold skills or skill files worth showing a model
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".venv", "venv"})


@dataclass(frozen=True)
class Skill:
    """A validated skill folder. Build with :func:`load_skill_folder` or :func:`discover_skills`.

    Skills are trusted: their instructions go to the model, their ``tools.py`` is imported and
    run in this process, and their scripts may be run through ``run_command``. Only point an
    agent at skill folders you would run yourself.
    """

    name: str
    """The skill's name, equal to its folder's name."""
    description: str
    """What the skill does and when to use it (the catalog entry)."""
    path: Path
    """The skill's folder, resolved (symlinks followed)."""
    body: str = field(repr=False)
    """The Markdown instructions after the front matter."""
    license: str | None = None
    compatibility: str | None = None
    """Environment requirements, e.g. ``"Requires Python 3.11 and network access"``."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form key/value facts (author, version, …)."""
    allowed_tools: tuple[str, ...] = ()
    """Tools the skill's author pre-approves (informational; reactloop does not restrict)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Front matter keys outside the format, kept as written."""

    @property
    def skill_file(self) -> Path:
        return self.path / SKILL_FILE

    @property
    def tools_file(self) -> Path | None:
        """``tools.py`` in the folder, if there is one (bundled Python tools, feature K2)."""
        candidate = self.path / "tools.py"
        return candidate if candidate.is_file() else None

    def files(self) -> list[str]:
        """The skill's files as sorted POSIX paths relative to its folder.

        Hidden files, ``__pycache__`` and links that lead outside the folder are left out.
        """
        out: list[str] = []
        root = self.path
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            dirnames[:] = sorted(
                d for d in dirnames
                if not d.startswith(".") and d not in _SKIP_DIRS
                and _inside(Path(dirpath, d), root)
            )
            for fname in filenames:
                full = Path(dirpath, fname)
                if fname.startswith(".") or not _inside(full, root):
                    continue
                out.append(full.relative_to(root).as_posix())
            if len(out) > 10 * MAX_FILES_LISTED:  # a huge folder: stop walking early
                break
        return sorted(out)

    def resolve_file(self, relative: str) -> Path | None:
        """The file at ``relative`` inside the skill, or ``None`` when there is no such file
        or it lies outside the folder (``..``, an absolute path, a symlink leading out)."""
        if not relative or "\0" in relative:
            return None
        candidate = Path(relative)
        if candidate.is_absolute() or candidate.drive:
            return None
        try:
            resolved = (self.path / candidate).resolve(strict=True)
        except (OSError, RuntimeError):  # missing, or a symlink loop
            return None
        if not resolved.is_relative_to(self.path) or not resolved.is_file():
            return None
        return resolved


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False


def load_skill_folder(folder: str | os.PathLike[str]) -> Skill:
    """Read and validate one skill folder; :class:`UserError` names the file, field and fix."""
    given = Path(folder)
    skill_file = given / SKILL_FILE
    try:
        text = skill_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{given}: no {SKILL_FILE} in this folder; a skill is a folder "
                        f"holding a {SKILL_FILE}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{skill_file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    data, body = split_front_matter(text, skill_file)
    name = _check_name(data, skill_file, given.name)
    description = _check_description(data, skill_file)
    return Skill(
        name=name,
        description=description,
        path=given.resolve(),
        body=body,
        license=_optional_str(data, "license", skill_file),
        compatibility=_check_compatibility(data, skill_file),
        metadata=_check_metadata(data, skill_file),
        allowed_tools=_check_allowed_tools(data, skill_file),
        extra={k: v for k, v in data.items() if k not in _KNOWN},
    )


def _check_name(data: Mapping[str, Any], file: Path, folder_name: str) -> str:
    if "name" not in data or data["name"] is None:
        raise UserError(f"{file}: the front matter has no 'name'; add 'name: {folder_name}' "
                        "(the folder's name)")
    name = data["name"]
    if not isinstance(name, str):
        raise UserError(f"{file}: 'name' must be a string, got {name!r}; write it as "
                        f"name: \"{name}\"")
    if not name or len(name) > MAX_NAME:
        raise UserError(f"{file}: 'name' must have 1 to {MAX_NAME} characters, got "
                        f"{len(name)}; shorten it (and rename the folder to match)")
    if not _NAME_RE.match(name):
        raise UserError(
            f"{file}: 'name' {name!r} is invalid: use lowercase letters, digits and single "
            "hyphens, not starting or ending with a hyphen (e.g. 'pdf-tools')"
        )
    if name != folder_name:
        raise UserError(f"{file}: 'name' {name!r} does not match the folder name "
                        f"{folder_name!r}; rename the folder or change the name so they agree")
    return name


def _check_description(data: Mapping[str, Any], file: Path) -> str:
    desc = data.get("description")
    if desc is None:
        raise UserError(f"{file}: the front matter has no 'description'; add 'description: "
                        "<what the skill does and when to use it>'")
    if not isinstance(desc, str) or not desc.strip():
        raise UserError(f"{file}: 'description' must be non-empty text, got {desc!r}; say "
                        "what the skill does and when to use it")
    desc = " ".join(desc.split())  # folded multi-line YAML → one catalog line
    if len(desc) > MAX_DESCRIPTION:
        raise UserError(f"{file}: 'description' has {len(desc)} characters, more than "
                        f"{MAX_DESCRIPTION}; shorten it and move details into the body")
    return desc


def _optional_str(data: Mapping[str, Any], key: str, file: Path) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise UserError(f"{file}: '{key}' must be text, got {type(value).__name__} "
                        f"{value!r}; write it as {key}: \"...\"")
    return value


def _check_compatibility(data: Mapping[str, Any], file: Path) -> str | None:
    value = _optional_str(data, "compatibility", file)
    if value is not None and len(value) > MAX_COMPATIBILITY:
        raise UserError(f"{file}: 'compatibility' has {len(value)} characters, more than "
                        f"{MAX_COMPATIBILITY}; keep it to the environment requirements")
    return value


def _check_metadata(data: Mapping[str, Any], file: Path) -> dict[str, Any]:
    value = data.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UserError(f"{file}: 'metadata' must be a mapping of keys to values (e.g. "
                        f"'metadata:' then '  author: me' on the next line), got {value!r}")
    return {str(k): v for k, v in value.items()}


def _check_allowed_tools(data: Mapping[str, Any], file: Path) -> tuple[str, ...]:
    value = data.get("allowed-tools")
    if value is None:
        return ()
    if isinstance(value, str):  # the format says space-delimited; commas are common too
        return tuple(t for t in re.split(r"[\s,]+", value) if t)
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(value)
    raise UserError(f"{file}: 'allowed-tools' must be a space-separated string (e.g. "
                    f"'allowed-tools: Read Bash(git:*)') or a list of strings, got {value!r}")


def discover_skills(dirs: Iterable[str | os.PathLike[str]]) -> list[Skill]:
    """Every skill under ``dirs``, sorted by name.

    A folder holding a ``SKILL.md`` is a skill (a given dir may itself be one) and is not
    searched further; other folders are searched recursively. The same folder reached twice
    counts once; two different folders with the same skill name are an error.
    """
    found: dict[Path, Skill] = {}
    by_name: dict[str, Skill] = {}
    for d in dirs:
        root = Path(d).expanduser()
        if not root.is_dir():
            raise UserError(f"skills folder {str(d)!r} does not exist or is not a folder; "
                            "pass folders that hold skill folders (each with a SKILL.md)")
        folders = list(_skill_folders(root))
        if not folders:
            raise UserError(f"no {SKILL_FILE} found under {str(d)!r}; a skill is a folder "
                            f"holding a {SKILL_FILE} with 'name' and 'description' front matter")
        for folder in folders:
            if folder.resolve() in found:
                continue
            skill = load_skill_folder(folder)
            other = by_name.get(skill.name)
            if other is not None:
                raise UserError(
                    f"two skills are named {skill.name!r}: {other.path} and {skill.path}; "
                    "remove one of them or give it another name (and folder name)"
                )
            found[skill.path] = by_name[skill.name] = skill
    return sorted(by_name.values(), key=lambda s: s.name)


def _skill_folders(root: Path) -> Iterable[Path]:
    seen: set[Path] = set()
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            real = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if real in seen:  # symlink cycles, or one folder reached twice
            continue
        seen.add(real)
        if (folder / SKILL_FILE).is_file():
            yield folder
            continue
        if depth >= _MAX_DEPTH:
            continue
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
        stack.extend(
            (c, depth + 1) for c in reversed(children)
            if not c.name.startswith(".") and c.name not in _SKIP_DIRS
        )
