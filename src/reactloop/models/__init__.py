"""The model interface and the adapters. Adapters import their SDKs lazily."""

from reactloop.models._base import (
    FinishReason,
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputMode,
    OutputSchema,
    TextDelta,
    ToolChoice,
    ToolSpec,
)

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
