"""Attribute, event and metric names: OpenTelemetry's GenAI semantic conventions (the
development version current in 2026) and reactloop's own ``reactloop.*`` facts."""

from __future__ import annotations

__all__ = [
    "AGENT_NAME", "CACHE_READ", "CACHE_WRITE", "CONVERSATION_ID", "DURATION_BUCKETS",
    "ERROR_TYPE", "FINISH_REASONS", "INPUT_MESSAGES", "INPUT_TOKENS", "OPERATION",
    "OUTPUT_MESSAGES", "OUTPUT_TOKENS", "PROVIDER", "REQUEST_MAX_TOKENS", "REQUEST_MODEL",
    "REQUEST_STREAM", "REQUEST_TEMPERATURE", "RESPONSE_MODEL", "SYSTEM_INSTRUCTIONS",
    "TIME_TO_FIRST_CHUNK", "TOKEN_BUCKETS", "TOKEN_TYPE", "TOOL_ARGUMENTS", "TOOL_CALL_ID",
    "TOOL_DESCRIPTION", "TOOL_NAME", "TOOL_RESULT", "TOOL_TYPE",
]

# gen_ai.* (https://opentelemetry.io/docs/specs/semconv/gen-ai/)
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE = "gen_ai.usage.cache_creation.input_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_TYPE = "gen_ai.tool.type"
# opt-in content (include_content=True), JSON strings on spans
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"

# the conventions' advisory histogram buckets
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)
