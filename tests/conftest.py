"""Shared fixtures. Each area appends its own clearly delimited block below."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion (we use no async pytest plugin)."""
    return asyncio.run(coro)


@pytest.fixture
def arun():
    return run
