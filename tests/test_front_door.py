"""The public API: the exact names each public module exports, and the structure checks.

Adding or removing a public name is a decision: change it here on purpose."""

from __future__ import annotations

import importlib

import pytest

PUBLIC: dict[str, set[str]] = {
    "reactloop": {
        "Agent", "ApprovalError", "Attachment", "Conversation", "Decision", "Document",
        "FallbackModel", "GuardrailTripped", "Image", "OutputValidationError",
        "PendingApproval", "Event", "Handoff", "Message", "Metrics", "Model", "ModelError",
        "ModelHTTPError", "ModelRequest", "ModelResponse", "ModelSettings", "PromptBuilder",
        "ReactloopError", "RetryPolicy", "RunContext", "RunResult", "RunState", "SessionBusy",
        "SessionStoreError", "Step", "Tool", "ToolCall",
        "ToolContext", "ToolResult", "ToolRetry", "ToolSpec", "Usage", "UsageLimitExceeded",
        "UsageLimits", "UserError", "instrument", "tool",
    },
    "reactloop.a2a": {"A2AAgent", "A2AReply"},
    "reactloop.context": {
        "Compaction", "PER_MESSAGE", "Summarize", "Tier", "TokenCounter", "Unit", "check_pairs",
        "estimate_tokens", "excerpt", "is_prompt", "latest_prompt", "prune", "repair",
        "shorten_tool_results", "tiktoken_counter", "units", "unload_skills",
    },
    "reactloop.approvals": {"APPROVALS_KEY", "DENIED", "Decision", "PendingApproval",
                            "apply_decisions", "arguments_hash", "decided_calls",
                            "pending_approvals"},
    "reactloop.events": {
        "ApprovalDecidedEvent", "ApprovalRequestedEvent", "PartialOutputEvent", "Callbacks", "CompactionEvent", "CustomEvent", "Event", "FallbackEvent",
        "GuardrailEvent", "HandoffEvent", "IterationStartEvent", "QueuedEvent",
        "ModelResponseEvent", "NoToolCallEvent", "PlanUpdateEvent", "RequestEvent",
        "RetryEvent", "RunEndEvent", "RunStartEvent", "TextDeltaEvent", "ToolCallEvent",
        "ToolErrorEvent", "ToolResultEvent", "WarningEvent",
    },
    "reactloop.attachments": {"DOCUMENT_TYPES", "IMAGE_TYPES", "MAX_ATTACHMENTS",
                              "MAX_PART_BYTES", "Attachment", "AttachmentKind", "Document",
                              "Image", "Prompt", "attachment_from_path",
                              "attachment_from_ref", "split_prompt"},
    "reactloop.controls": {"FallbackModel", "GuardrailTripped", "UsageLimits",
                           "agent_guardrail", "concurrent_guardrail"},
    "reactloop.extensions": {"Extension"},
    "reactloop.mcp": {"Elicitation", "ElicitationAnswer", "MCPServer", "MCPServerError",
                      "MCPTool", "MCPTools", "load_mcp_config", "serve_stdio"},
    "reactloop.messages": {
        "FinishReason", "Message", "ModelRequest", "ModelResponse", "ModelSettings",
        "OutputMode", "OutputSchema", "Role",
        "TextDelta", "ToolCall", "ToolChoice", "ToolSpec", "Usage", "attachment_blobs",
        "message_from_dict",
        "messages_from_json", "messages_to_json",
    },
    "reactloop.models": {"FinishReason", "Model", "ModelRequest", "ModelResponse",
                         "ModelSettings", "OutputMode", "OutputSchema", "TextDelta",
                         "ToolChoice", "ToolSpec"},
    "reactloop.planning": {"Plan", "PlanStep", "Planning", "StepStatus", "UPDATE_PLAN",
                           "plan_from_history"},
    "reactloop.run_context": {"RunContext", "SNAPSHOT_VERSION"},
    "reactloop.runtime": {"LocalRuntime", "OnRetry", "Runtime", "RuntimeWrapper", "ToolBatch"},
    "reactloop.sessions": {"AgentLike", "Conversation", "MemoryStore", "MemoryWriter",
                           "PostgresStore", "PostgresWriter", "SQLiteStore", "SQLiteWriter", "Session", "SessionInfo",
                           "SessionStore", "SessionWriter", "default_store_path", "open_store"},
    "reactloop.skills": {"LOAD_SKILL", "LOAD_SKILL_REFERENCE", "SKILL_FILE", "Skill",
                         "SkillSet", "discover_skills", "load_skill_folder", "loaded_in"},
    "reactloop.temporal": {"PASSTHROUGH_MODULES", "Names", "PayloadTooLarge", "RunHandle",
                           "TemporalAgent", "WorkflowRuntime", "sandbox_runner"},
    "reactloop.testing": {"FunctionModel", "ScriptedModel", "capture_spans"},
    "reactloop.tools": {"ThreadStats", "Tool", "ToolArgumentsError", "ToolContext",
                        "ToolRegistry", "as_tool", "serialize_result", "thread_stats", "tool"},
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    mod = importlib.import_module(module)
    exported = set(mod.__all__)
    assert exported == PUBLIC[module], (
        f"{module}.__all__ changed: added {sorted(exported - PUBLIC[module])}, "
        f"removed {sorted(PUBLIC[module] - exported)}")
    for name in exported:
        assert hasattr(mod, name), f"{module}.__all__ names {name!r}, which does not exist"
