"""The package's version, on the ground floor: modules that announce it (OpenTelemetry's
tracer, MCP's client and server info) import it from here, never the package ``__init__``."""

__version__ = "0.1.0"
