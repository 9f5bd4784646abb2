"""Agent Skills (features K1, K2): folders holding a ``SKILL.md``, disclosed progressively.

1. the catalog — name and description of every skill — is in the system prompt;
2. ``load_skill(name)`` returns a skill's instructions and files, and makes the ``@tool``
   objects of its ``tools.py`` callable;
3. ``load_skill_reference(skill, path)`` reads one file of a skill, confined to its folder.

::

    skills = SkillSet.discover(["examples/skills"])
    skills.catalog_text()     # level 1, for the system prompt
    skills.tools()            # [load_skill, load_skill_reference]

Skills are trusted code: a skill's ``tools.py`` runs in your process and its scripts may be
run by the agent. Only use skill folders you would run yourself.
"""

from reactloop.skills._set import LOAD_SKILL, LOAD_SKILL_REFERENCE, SkillSet, loaded_in
from reactloop.skills._skill import SKILL_FILE, Skill, discover_skills, load_skill_folder

__all__ = [
    "LOAD_SKILL",
    "LOAD_SKILL_REFERENCE",
    "SKILL_FILE",
    "Skill",
    "SkillSet",
    "discover_skills",
    "load_skill_folder",
    "loaded_in",
]
