"""reactloop: a small, fast, provider-agnostic agent loop.

The model chooses tools, reactloop runs them, feeds the results back and repeats until the
model answers::

    from reactloop import Agent, tool

    @tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    result = Agent(model="local", tools=[add]).run_sync("What is 2+3?")
"""

from typing import TYPE_CHECKING

from reactloop._instrument import instrument
from reactloop._multi import Handoff
from reactloop._version import __version__ as __version__
from reactloop.agent import Agent
from reactloop.approvals import Decision, PendingApproval
from reactloop.attachments import Attachment, Document, Image
from reactloop.controls import FallbackModel, UsageLimits
from reactloop.errors import (
    ApprovalError,
    GuardrailTripped,
    ModelError,
    ModelHTTPError,
    OutputValidationError,
    ReactloopError,
    SessionBusy,
    SessionStoreError,
    ToolRetry,
    UsageLimitExceeded,
    UserError,
)
from reactloop.events import Event
from reactloop.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ToolCall,
    ToolSpec,
    Usage,
)
from reactloop.models._base import Model
from reactloop.models._retry import RetryPolicy
from reactloop.prompt import PromptBuilder
from reactloop.result import Metrics, RunResult, RunState, Step, ToolResult
from reactloop.run_context import RunContext
from reactloop.tools._tool import Tool, ToolContext, tool

if TYPE_CHECKING:
    from reactloop.sessions import Conversation

__all__ = [
    "Agent",
    "ApprovalError",
    "Attachment",
    "Conversation",
    "Decision",
    "Document",
    "Event",
    "FallbackModel",
    "GuardrailTripped",
    "Handoff",
    "Image",
    "Message",
    "Metrics",
    "Model",
    "ModelError",
    "ModelHTTPError",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputValidationError",
    "PendingApproval",
    "PromptBuilder",
    "ReactloopError",
    "RetryPolicy",
    "RunContext",
    "RunResult",
    "RunState",
    "SessionBusy",
    "SessionStoreError",
    "Step",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ToolRetry",
    "ToolSpec",
    "Usage",
    "UsageLimitExceeded",
    "UsageLimits",
    "UserError",
    "instrument",
    "tool",
]


def __getattr__(name: str) -> object:
    # sessions are imported on first use (``import reactloop`` stays light)
    if name == "Conversation":
        from reactloop.sessions import Conversation

        globals()["Conversation"] = Conversation
        return Conversation
    raise AttributeError(f"module 'reactloop' has no attribute {name!r}")
