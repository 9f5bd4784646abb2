"""What model calls cost, from the ``genai-prices`` database (``pip install 'reactloop[cost]'``).

Prices include cached-input and cache-write rates. A model the database does not know, or a
process without ``genai-prices``, gets ``None`` — "cost unknown" — never a made-up 0. The
package is imported on the first priced call (never by ``import reactloop``), and a model
whose price is unknown is looked up once per process.
"""

from __future__ import annotations

from typing import Any

from reactloop.messages import ModelResponse, Usage
from reactloop.models._base import Model
from reactloop.result import Metrics

__all__ = ["account", "call_cost", "input_price", "price_key"]

_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gcp.gemini": "google",
              "gcp.vertex_ai": "google", "google": "google", "mistral_ai": "mistral",
              "groq": "groq", "deepseek": "deepseek", "x_ai": "x-ai"}
"""reactloop's ``Model.provider`` (OpenTelemetry's names) → genai-prices' provider ids. Other
providers (local servers, test doubles) let genai-prices match the model name alone."""
_UNKNOWN: set[tuple[str | None, str]] = set()
_INPUT: dict[tuple[str | None, str], float | None] = {}
_prices: Any = None  # the genai_prices module once imported; False when it is not installed


def price_key(provider: str, name: str) -> tuple[str | None, str]:
    """The (genai-prices provider id, model reference) a call is priced under."""
    return _PROVIDERS.get(provider), name.split(":", 1)[-1]


def _module() -> Any:
    global _prices
    if _prices is None:
        try:
            import genai_prices

            _prices = genai_prices
        except ImportError:
            _prices = False
    return _prices


def call_cost(key: tuple[str | None, str], usage: Usage | None) -> float | None:
    """US dollars for one call with ``usage`` (None: unknown price or usage)."""
    if usage is None or key in _UNKNOWN:
        return None
    gp = _module()
    if not gp:
        return None
    try:
        calc = gp.calc_price(
            gp.Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                     cache_read_tokens=usage.cache_read_tokens or None,
                     cache_write_tokens=usage.cache_write_tokens or None),
            key[1], provider_id=key[0])
    except LookupError:  # genai-prices does not know the model (or the provider)
        _UNKNOWN.add(key)
        return None
    return float(calc.total_price)


def input_price(key: tuple[str | None, str]) -> float | None:
    """Dollars per uncached input token (for the check before a call), or None."""
    if key not in _INPUT:
        per_million = call_cost(key, Usage(1_000_000, 0))
        _INPUT[key] = None if per_million is None else per_million / 1_000_000
    return _INPUT[key]


def account(m: Metrics, model: Model, response: ModelResponse) -> tuple[str, float | None]:
    """Count one model call on a run's metrics — the call, its tokens, cache reads and
    writes, its cost — and return the model that answered and the call's cost (None:
    unknown, and then the run's cost is unknown too)."""
    usage, name = response.usage, response.model_name or model.name
    m.requests += 1
    # a test double or local model that names no model is not priced (cost unknown)
    priced = response.model_name is not None or model.provider in _PROVIDERS
    cost = call_cost(price_key(model.provider, name), usage) if priced else None
    if usage is not None:
        m.input_tokens += usage.input_tokens
        m.output_tokens += usage.output_tokens
        m.cache_read_tokens += usage.cache_read_tokens
        m.cache_write_tokens += usage.cache_write_tokens
    if m.cost_usd is not None:
        m.cost_usd = None if cost is None else m.cost_usd + cost
    return name, cost
