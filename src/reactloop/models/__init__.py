"""The model interface and the adapters. Adapters import their SDKs lazily.

The front door of the model interface: :class:`Model` (from :mod:`reactloop.models._base`)
and the values a model reads and writes (from :mod:`reactloop.messages`, where they live).
"""

from reactloop.messages import (
    FinishReason,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputMode,
    OutputSchema,
    TextDelta,
    ToolChoice,
    ToolSpec,
)
from reactloop.models._base import Model

__all__ = [
    "FinishReason",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputMode",
    "OutputSchema",
    "TextDelta",
    "ToolChoice",
    "ToolSpec",
]
