"""Extensions: how planning, skills, the workspace and retrieved context plug into a run.

An :class:`Extension` contributes tools and stable system-prompt sections once per agent, and
takes part in every run through a few hooks. It keeps its per-run data in
``ctx.state[extension.key]`` (see :class:`~reactloop.RunContext`) — never on itself — so one
agent serves any number of concurrent runs, and a run's state serialises with the run.

Hooks run inside the loop, in the order the extensions were given; they must be quick and
deterministic (no I/O), except :meth:`Extension.start`, which may await (retrieval).

The loop names no extension: what it must know about one, the extension or its tools say
(``Tool.internal``, :attr:`Extension.result_field`, :attr:`Extension.start_does_io`).

The package holds the built-in extensions too (private modules):

- ``_base``: :class:`Extension` and :class:`StaticExtension` (tools and sections, no state);
- ``_planning``: ``Agent(planning=True)``, public as :mod:`reactloop.planning`;
- ``_retrieval``: ``Agent(context_providers=[...])``;
- ``_workspace``: ``Agent(workspace=...)`` (the workspace tools live in
  :mod:`reactloop.tools.workspace`).

Skills are the one built-in extension that lives elsewhere: :class:`reactloop.skills.SkillSet`
*is* the set of skills (catalog, loading, references) and its hooks are a few of its methods.
"""

from reactloop.extensions._base import Extension

__all__ = ["Extension"]
