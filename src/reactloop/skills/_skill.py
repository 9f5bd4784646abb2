"""One Agent Skill: a folder holding a ``SKILL.md`` (feature K1), and finding them on disk.

The front matter follows the public Agent Skills format: ``name`` (lowercase letters, digits
and single hyphens, at most 64 characters, equal to the folder's name) and ``description`` (at
most 1024 characters) are required; ``license``, ``compatibility``, ``metadata`` and
``allowed-tools`` are optional; any other key is kept in :attr:`Skill.extra` and otherwise
ignored, silently: other clients define their own keys (``model``, ``version``…), and a
warning the user cannot act on would only be noise.

We are lenient with skills we did not write, as a client should be. A skill loads whenever it
can be used; each deviation is named in one warning per skill, logged once per process on the
``reactloop.skills`` logger (logging, not :mod:`warnings`: this is a fact about data, shown
as one line on stderr when logging is not configured):

- a description over 1024 characters is cut (with an ellipsis) in the catalogue;
- a name that differs from its folder, breaks the character rules or is too long is used as
  written (a number is read as text);
- front matter that is not valid YAML is read line by line (``key: value``);
- an optional field of the wrong type is ignored; a missing description is said so.

Only a skill that cannot be used is refused: no front matter, or no ``name``. When it was
found by searching a folder of skills it is skipped with a warning (one broken skill of a
collection must not stop the others); when it was named directly, :class:`UserError` says why.
Two skills with the same name: the first found is used, the other skipped with a warning.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop._redact import get_logger
from reactloop.errors import UserError
from reactloop.skills._frontmatter import split_front_matter

__all__ = ["SKILL_FILE", "Skill", "discover_skills", "load_skill_folder", "warn_once"]

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FILES_LISTED = 200
NO_DESCRIPTION = "(no description given)"
_MAX_DEPTH = 6
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KNOWN = frozenset({"name", "description", "license", "compatibility", "metadata",
                    "allowed-tools"})
# folders that never hold skills or skill files worth showing a model
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".venv", "venv"})

log = get_logger("reactloop.skills")
_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


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
    """Read one skill folder.

    Raises :class:`UserError` (naming the file, the field and the fix) only when the skill
    cannot be used: no ``SKILL.md``, no front matter, or no ``name``. Other deviations from the
    format load anyway and are logged once as a warning (see the module's docstring)."""
    given = Path(folder)
    skill_file = given / SKILL_FILE
    try:
        raw = skill_file.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{given}: no {SKILL_FILE} in this folder; a skill is a folder "
                        f"holding a {SKILL_FILE}") from None
    notes: list[str] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        notes.append(f"it is not UTF-8 text ({exc.reason}); bytes that are not were replaced")
        text = raw.decode("utf-8", errors="replace")
    data, body = split_front_matter(text, skill_file, notes)
    name = _check_name(data, skill_file, given.name, notes)
    skill = Skill(
        name=name,
        description=_check_description(data, notes),
        path=given.resolve(),
        body=body,
        license=_optional_str(data, "license", notes),
        compatibility=_check_compatibility(data, notes),
        metadata=_check_metadata(data, notes),
        allowed_tools=_check_allowed_tools(data, notes),
        extra={k: v for k, v in data.items() if k not in _KNOWN},
    )
    if notes:
        warn_once(f"{skill_file}: loaded, though it does not follow the Agent Skills format: "
                  + "; ".join(notes))
    return skill


def warn_once(message: str) -> None:
    """Log ``message`` as a warning of the ``reactloop.skills`` logger, once per process."""
    with _WARNED_LOCK:
        if message in _WARNED:
            return
        _WARNED.add(message)
    log.warning("%s", message)


def _check_name(data: Mapping[str, Any], file: Path, folder_name: str, notes: list[str]) -> str:
    name = data.get("name")
    if isinstance(name, (int, float)) and not isinstance(name, bool):
        notes.append(f"'name' {name!r} is a number, read as text")
        name = str(name)
    if not isinstance(name, str) or not name.strip():
        got = "" if name is None else f" (got {name!r})"
        raise UserError(f"{file}: the front matter has no 'name'{got}, so the skill cannot be "
                        f"called; add 'name: {folder_name}' (the folder's name)")
    cleaned = " ".join(name.split())  # a line break would break the catalogue
    if len(cleaned) > MAX_NAME:
        notes.append(f"'name' has {len(cleaned)} characters, more than {MAX_NAME}")
    if not _NAME_RE.match(cleaned):
        notes.append(f"'name' {cleaned!r} is not lowercase letters, digits and single hyphens")
    if cleaned != folder_name:
        notes.append(f"'name' {cleaned!r} differs from the folder name {folder_name!r}; the "
                     f"skill is called {cleaned!r}")
    return cleaned


def _check_description(data: Mapping[str, Any], notes: list[str]) -> str:
    desc = data.get("description")
    if isinstance(desc, list):
        desc = " ".join(str(d) for d in desc)
    elif isinstance(desc, (int, float)) and not isinstance(desc, bool):
        desc = str(desc)
    if not isinstance(desc, str) or not desc.strip():
        notes.append("no 'description' (the catalogue says so)")
        return NO_DESCRIPTION
    desc = " ".join(desc.split())  # folded multi-line YAML → one catalog line
    if len(desc) > MAX_DESCRIPTION:
        notes.append(f"'description' has {len(desc)} characters, more than {MAX_DESCRIPTION}; "
                     f"the catalogue shows the first {MAX_DESCRIPTION}")
        desc = desc[: MAX_DESCRIPTION - 1] + "…"
    return desc


def _optional_str(data: Mapping[str, Any], key: str, notes: list[str]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        notes.append(f"'{key}' is not text (got {type(value).__name__}); ignored")
        return None
    return value


def _check_compatibility(data: Mapping[str, Any], notes: list[str]) -> str | None:
    value = _optional_str(data, "compatibility", notes)
    if value is not None and len(value) > MAX_COMPATIBILITY:
        notes.append(f"'compatibility' has {len(value)} characters, more than "
                     f"{MAX_COMPATIBILITY}; cut")
        value = value[: MAX_COMPATIBILITY - 1] + "…"
    return value


def _check_metadata(data: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    value = data.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        notes.append(f"'metadata' is not a mapping of keys to values (got {value!r}); ignored")
        return {}
    return {str(k): v for k, v in value.items()}


def _check_allowed_tools(data: Mapping[str, Any], notes: list[str]) -> tuple[str, ...]:
    value = data.get("allowed-tools")
    if value is None:
        return ()
    if isinstance(value, str):  # the format says space-delimited; commas are common too
        return tuple(t for t in re.split(r"[\s,]+", value) if t)
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(value)
    notes.append(f"'allowed-tools' is neither a space-separated string nor a list of strings "
                 f"(got {value!r}); ignored")
    return ()


def discover_skills(dirs: Iterable[str | os.PathLike[str]]) -> list[Skill]:
    """Every skill under ``dirs``, sorted by name.

    A folder holding a ``SKILL.md`` is a skill (a given dir may itself be one) and is not
    searched further; other folders are searched recursively. The same folder reached twice
    counts once. A skill found by searching that cannot be used (see
    :func:`load_skill_folder`), or whose name an earlier skill already has, is skipped with a
    warning: one broken skill in a collection must not stop the others. A folder given
    directly that is a broken skill, a missing folder and a folder without any ``SKILL.md``
    raise :class:`UserError`.
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
            try:
                skill = load_skill_folder(folder)
            except UserError as exc:
                if folder == root:  # the caller named this very skill: tell them
                    raise
                warn_once(f"skipped a skill that cannot be used: {exc}")
                continue
            other = by_name.get(skill.name)
            if other is not None:
                warn_once(f"skipped the skill at {skill.path}: the skill at {other.path} has the "
                          f"same name {skill.name!r}; rename one of them to use both")
                continue
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
