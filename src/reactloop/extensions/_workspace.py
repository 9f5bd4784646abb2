"""The workspace as an extension (``Agent(workspace=...)``): its tools and the ``workspace``
section of the system prompt, nothing per run. The tools live in
:mod:`reactloop.tools.workspace`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from reactloop.extensions._base import StaticExtension

if TYPE_CHECKING:
    from reactloop.tools.workspace import Workspace

__all__ = ["workspace_extension"]


def workspace_extension(workspace: str | os.PathLike[str] | Workspace) -> StaticExtension:
    """The extension for a folder (or a configured :class:`Workspace`)."""
    from reactloop.tools.workspace import Workspace  # lazy: only agents with a workspace

    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    return StaticExtension("workspace", ws.tools(), {"workspace": ws.describe()})
