"""``import reactloop`` and ``reactloop --help`` load only what they use (issue 28): modules
needed by rare paths (attachment hashes, HTTP-date retries, unknown-tool hints, sessions,
the config file) are imported on first use."""

from __future__ import annotations

import json
import subprocess
import sys

LAZY = ("hashlib", "email.utils", "uuid", "difflib", "typing_extensions", "tomllib",
        "reactloop.sessions")


def loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_reactloop_leaves_rare_paths_unloaded() -> None:
    before = loaded_after("")
    after = loaded_after("import reactloop")
    assert [m for m in LAZY if m in after and m not in before] == []


def test_reactloop_help_leaves_them_unloaded_too() -> None:
    before = loaded_after("")
    after = loaded_after("import contextlib, sys\nsys.argv = ['reactloop', '--help']\n"
                         "from reactloop.cli import main\n"
                         "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(None):"
                         "\n    main()")
    lazy = [m for m in LAZY if m != "uuid"]  # click.types imports uuid itself
    assert [m for m in lazy if m in after and m not in before] == []


def test_conversation_is_still_a_top_level_name() -> None:
    import reactloop
    from reactloop import Conversation
    from reactloop.sessions import Conversation as FromSessions

    assert Conversation is FromSessions is reactloop.Conversation
    assert "Conversation" in reactloop.__all__


def test_import_reactloop_compiles_no_credential_or_repair_pattern() -> None:
    """The redaction and argument-repair patterns (a tenth of the import's time) are
    compiled on first use."""
    code = ("import reactloop, json\nfrom reactloop import _arguments, _redact\n"
            "print(json.dumps([_redact._credentials.cache_info().currsize,"
            " _redact._open.cache_info().currsize, _arguments._token.cache_info().currsize]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0, 0, 0]
    from reactloop._redact import redact
    assert redact("Authorization: Bearer abcdefgh12345678") == "Authorization: Bearer [REDACTED]"
