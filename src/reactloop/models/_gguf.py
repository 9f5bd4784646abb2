"""Facts of a GGUF model file and of the llama.cpp model loaded from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop.errors import UserError

__all__ = ["check_gguf_magic", "n_params"]


def check_gguf_magic(path: Path) -> None:
    """A clear error unless ``path`` is a readable file that starts as a GGUF file does."""
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise UserError(f"cannot read model file {path}: {exc}") from None
    if magic != b"GGUF":
        raise UserError(
            f"{path} is not a GGUF model file (it does not start with the GGUF magic bytes); "
            "pass a .gguf file, e.g. one converted with llama.cpp"
        )


def n_params(llm: Any) -> int:
    """The parameters of a loaded llama.cpp model (0 when this llama-cpp-python cannot say)."""
    try:
        import llama_cpp

        return int(llama_cpp.llama_model_n_params(llm.model))
    except (AttributeError, TypeError, ValueError):  # an older llama-cpp-python: assume small
        return 0
