"""``reactloop chat``: a real prompt (prompt_toolkit) around a stored session.

Line editing and a history file; Enter sends, Alt-Enter (or a line ending in ``\\``) starts a
new line, pasted text keeps its lines. Commands that start with ``/`` are handled here, never
sent to the model. Ctrl-C at the prompt clears the line, Ctrl-D leaves (exit 0); Ctrl-C while
the model works cancels that turn only. Without a terminal (piped input) each line is a
message.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import click

from reactloop.approvals import Decision
from reactloop.attachments import Attachment, Prompt
from reactloop.cli._approve import Approver, Policy
from reactloop.cli._build import Setup, pick_session, prepare, show_notice, start_tracing
from reactloop.cli._console import consoles, consume, say, verbosity_of
from reactloop.cli._options import agent_options, run_options
from reactloop.result import RunResult, RunState

__all__ = ["chat_command"]

HELP = """commands (never sent to the model):
  /help             this list
  /exit, /quit      leave (so does Ctrl-D)
  /clear            forget the conversation so far (a stored session keeps its id)
  /session          the session's id, size and store
  /model [NAME]     the model; with NAME, switch to it (e.g. /model openai:gpt-4o-mini)
  /tools            the tools the agent can use
  /attach PATH      send the file (a picture or a document) with your next message
  /resource SERVER URI   attach an MCP server's resource to your next message
  /prompt [SERVER:]NAME [ARG=VALUE ...]   send an MCP server's prompt
  //text            send "/text" to the model
keys: Enter sends · Alt-Enter or a line ending in \\ starts a new line · Ctrl-C clears the
line (while the model works: cancels that turn) · Up/Down browse the history"""


@click.command("chat")
@agent_options
@run_options
@click.option("--new-session", is_flag=False, flag_value="", default=None, metavar="[ID]",
              help="Start a new session (with this id, if given).")
@click.pass_context
def chat_command(ctx: click.Context, /, **opts: Any) -> None:
    """An interactive conversation (/help lists the commands; Ctrl-D leaves)."""
    from reactloop.cli._approve import policy_of
    from reactloop.errors import UserError

    verbosity = verbosity_of(opts.pop("verbose"), opts.pop("quiet"))
    session_id, cont, no_log = opts.pop("session_id"), opts.pop("cont"), opts.pop("no_log")
    policy = policy_of(opts.pop("approve_all"), opts.pop("deny_all"))
    new_session = opts.pop("new_session")
    if new_session is not None and (session_id or cont):
        raise click.UsageError("--new-session starts a session; --session/-c continue one")
    chat = _Chat(ctx, verbosity, policy)
    stop_tracing = start_tracing(opts.pop("otlp"))
    try:  # a config, key, agent or store that is wrong: one line (the group's error path)
        setup = chat.prepare(opts, log=False if no_log else (True if session_id or cont
                                                             else None))
        try:
            sid = pick_session(setup.store, session_id, cont)
            if new_session:
                if setup.store is None:
                    raise click.UsageError("--new-session ID needs the session log; drop "
                                           "--no-log")
                if any(i.id == new_session for i in setup.store.list()):
                    raise UserError(f"session {new_session!r} exists already; continue it "
                                    f"with --session {new_session}")
                sid = new_session
            asyncio.run(chat.main(sid))
        finally:
            if setup.store is not None:
                setup.store.close()
    finally:
        stop_tracing()


class _Chat:
    """One chat: the conversation, its renderer and approver, the slash commands; it is the
    :class:`~reactloop.cli._approve.Resumable` its waiting runs go on through."""

    def __init__(self, ctx: click.Context, verbosity: int, policy: Policy = "ask") -> None:
        self.ctx, self.policy, self.verbosity = ctx, policy, verbosity
        from reactloop.cli._render import Renderer  # rich: only when a chat starts

        self.err, self.out = consoles(verbosity)
        self.approver = Approver.for_terminal(policy, say(self.err), terminal=False)
        self.seen: dict[str, Any] = {}
        """Tools of MCP servers by name (``Setup.tools_seen``), kept across ``/model``."""
        self.renderer = Renderer(self.err, self.out, verbosity=verbosity, tools_seen=self.seen)
        self.base_opts: dict[str, Any] = {}
        self.setup: Setup
        self.conversation: Any = None
        self.commands: dict[str, Callable[[str], Awaitable[bool]]] = {
            "help": self._help, "exit": self._exit, "quit": self._exit, "clear": self._clear,
            "session": self._session, "model": self._model, "tools": self._tools,
            "attach": self._attach, "resource": self._resource, "prompt": self._prompt}
        self.staged: list[Attachment] = []
        """Files ``/attach`` staged for the next message."""
        self.attached: list[str] = []
        """Resources (``/resource``) sent with the next message."""

    def prepare(self, opts: dict[str, Any], *, log: bool | None) -> Setup:
        """Build the agent (its model calls drawn by this chat's renderer) and open the
        store; ``opts`` are kept for ``/model``."""
        self.base_opts = dict(opts)
        self.setup = prepare(self.ctx, opts, log=log, observer=self.renderer,
                             seen=self.seen)
        self.renderer.model_spec = self.setup.model_spec
        return self.setup

    async def main(self, sid: str | None) -> None:
        from rich.markup import escape

        setup = self.setup
        if setup.store is not None:
            self.conversation = setup.agent.session(sid, setup.store)
        else:
            self.conversation = setup.agent.conversation()
        show_notice(setup, self.err, self.verbosity)
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
        if interactive:  # piped input gets answers only: no banner in a script's output
            self._say(f"[dim]reactloop chat · model {escape(setup.model_spec)} · "
                      f"{escape(self._where())} · /help for commands, Ctrl-D to leave[/]")
        waiting = getattr(self.conversation, "waiting_for", None)
        if waiting:
            self._say(f"[yellow]The agent asked: {escape(str(waiting))}[/]")
        if interactive:
            self.approver = Approver.for_terminal(self.policy, self._plain, terminal=True)
        self._configure_servers()
        from reactloop.cli._mcp_client import ask_here

        ask_here(self.approver.prompt, self._plain, self.renderer.stop)
        if self.conversation.pending_approvals:  # a session left waiting: decide first
            result = await self.approver.settle(None, self.conversation.pending_approvals,
                                                self)
            await self._finish(result, "(decisions on waiting calls)", time.time())
        read = _terminal_reader() if interactive else _pipe_reader()
        while True:
            text = await read()
            if text is None:
                return
            if not text.strip():
                continue
            stripped = text.strip()
            if stripped.startswith("/") and not stripped.startswith("//"):
                if not await self._command(stripped[1:]):
                    return
                continue
            await self._turn(text[1:] if stripped.startswith("//") else text)

    def _plain(self, text: str) -> None:
        """A line on stderr, also with -q (questions about approvals)."""
        self.err.print(text, markup=False, highlight=False)

    async def resume(self, last: RunResult[Any] | None, decisions: list[Decision]
                     ) -> RunResult[Any] | None:
        """Go on with the conversation's waiting run (see :class:`Approver`)."""
        got, _ = await consume(self.conversation.resume_stream(decisions),
                               self.renderer.handle)
        self.renderer.stop()
        return got

    async def _finish(self, result: RunResult[Any] | None, text: str, started: float) -> None:
        from reactloop.cli._runlog import log_run, make_record

        if result is None:
            return
        outcome = self.renderer.finish(result, model=self.setup.agent.model,
                                       footer=f"run {result.run_id}")
        record = make_record(result, outcome, prompt=text, model=self.setup.model_spec,
                             started=started, trace=self.renderer.trace,
                             cost=self.renderer.cost)
        log_run(self.setup.store, getattr(self.conversation, "id", None), result, record)

    def _say(self, markup: str) -> None:
        from reactloop.cli._render import NORMAL

        if self.verbosity >= NORMAL:
            self.err.print(markup, highlight=False)

    def _where(self) -> str:
        c = self.conversation
        if self.setup.store is None:
            return "not stored (--no-log)"
        state = "continued" if c.messages else "new"
        return f"session {c.id} ({state})"

    def _configure_servers(self) -> None:
        """The servers of ``--mcp FILE``: the workspace is their root."""
        if self.base_opts.get("agent_spec"):
            return
        from reactloop.cli._mcp_client import configure_servers

        configure_servers(self.setup.agent.mcp_servers,
                          workspace=self.base_opts.get("workspace"))

    async def _turn(self, text: str) -> None:
        from reactloop.cli._mcp_client import attach
        from reactloop.cli._outcome import explain_error
        from reactloop.errors import ReactloopError

        text, self.attached = attach(text, self.attached), []
        self.renderer.reset()
        started = time.time()
        sent: Prompt = [text, *self.staged] if self.staged else text
        self.staged = []
        try:
            result, interrupted = await consume(self.conversation.stream(sent),
                                                self.renderer.handle)
            self.renderer.stop()
            if result is not None and result.state is RunState.WAITING_FOR_APPROVAL:
                result = await self.approver.settle(result, result.pending_approvals, self)
        except ReactloopError as exc:  # a busy session, a failing store: one line, go on
            self.renderer.stop()
            self.err.print(f"reactloop: {explain_error(exc)}", markup=False, highlight=False)
            return
        if result is None or (interrupted and result.state.value == "cancelled"):
            self.err.print("[yellow](cancelled this turn)[/]", highlight=False)
            if result is None:
                return
        await self._finish(result, text, started)

    # -- slash commands (each returns False to leave) -------------------------------------
    async def _command(self, line: str) -> bool:
        from rich.markup import escape

        name, _, arg = line.partition(" ")
        handler = self.commands.get(name.lower())
        if handler is None:
            self.err.print(f"unknown command /{escape(name)} — /help lists the commands "
                           "(start with // to send a message that begins with /)",
                           highlight=False)
            return True
        return await handler(arg.strip())

    async def _attach(self, arg: str) -> bool:
        from reactloop.cli._attach import load_attachment
        from reactloop.errors import UserError

        if not arg:
            self.err.print("/attach PATH: give the file to send with your next message",
                           highlight=False)
            return True
        try:
            part = load_attachment(arg)
        except UserError as exc:  # a bad file: one line, the chat goes on
            self.err.print(f"reactloop: {exc}", markup=False, highlight=False)
            return True
        self.staged.append(part)
        self.err.print(f"attached {part.label()}: it goes with your next message",
                       markup=False, highlight=False)
        return True

    async def _help(self, arg: str) -> bool:
        self.err.print(HELP, markup=False, highlight=False)
        return True

    async def _exit(self, arg: str) -> bool:
        return False

    async def _clear(self, arg: str) -> bool:
        c = self.conversation
        if hasattr(c, "clear"):
            c.clear()
        else:
            c.messages = []
        self.err.print("history cleared", highlight=False)
        return True

    async def _session(self, arg: str) -> bool:
        c, store = self.conversation, self.setup.store
        if store is None:
            self.err.print(f"not stored (--no-log) · {len(c.messages)} messages", highlight=False)
        else:
            from reactloop.cli._ids import store_label

            self.err.print(f"session {c.id} · {len(c.messages)} messages · store "
                           f"{store_label(store)}", markup=False, highlight=False)
        return True

    async def _model(self, arg: str) -> bool:
        if not arg:
            self.err.print(f"model {self.setup.model_spec} ({self.setup.agent.model!r})",
                           markup=False, highlight=False)
            return True
        if self.base_opts.get("agent_spec"):
            self.err.print("this chat's agent comes from --agent: its model cannot be switched",
                           highlight=False)
            return True
        from reactloop.cli._outcome import explain_error
        from reactloop.errors import ReactloopError

        opts = {**self.base_opts, "model": arg}
        try:
            fresh = prepare(self.ctx, opts, log=False, observer=self.renderer,
                            seen=self.setup.tools_seen)
        except (ReactloopError, click.ClickException) as exc:
            self.err.print(f"cannot switch: {explain_error(exc)}", markup=False,
                           highlight=False)
            return True
        self.setup.agent, self.setup.model_spec = fresh.agent, fresh.model_spec
        self.renderer.model_spec = fresh.model_spec
        self.conversation.agent = fresh.agent
        self._configure_servers()
        self.err.print(f"model {fresh.model_spec}", markup=False, highlight=False)
        show_notice(self.setup, self.err, self.verbosity)
        return True

    async def _tools(self, arg: str) -> bool:
        names = list(self.setup.agent.tools)
        for name in self.setup.tools_seen:
            if name not in names:
                names.append(name)
        for name in names:
            tool = self.setup.tools_seen.get(name)
            flag = "  (writes)" if getattr(tool, "writes", False) else ""
            self.err.print(f"  {name}{flag}", markup=False, highlight=False)
        if getattr(self.setup.agent, "mcp_servers", ()) and not self.setup.tools_seen:
            self.err.print("  (MCP servers' tools appear once the first message starts them)",
                           highlight=False)
        return True


    async def _resource(self, arg: str) -> bool:
        from reactloop.cli._mcp_client import read_resource_spec
        from reactloop.cli._outcome import explain_error
        from reactloop.errors import ReactloopError

        server, _, uri = arg.partition(" ")
        try:
            block = await read_resource_spec(self.setup.agent.mcp_servers,
                                             f"{server}:{uri.strip()}")
        except ReactloopError as exc:
            self.err.print(f"/resource: {explain_error(exc)}", markup=False, highlight=False)
            return True
        self.attached.append(block)
        self.err.print(f"attached {uri.strip()} ({len(block)} characters) to your next message",
                       markup=False, highlight=False)
        return True

    async def _prompt(self, arg: str) -> bool:
        from reactloop.cli._mcp_client import prompt_message
        from reactloop.cli._outcome import explain_error
        from reactloop.errors import ReactloopError

        try:
            text = await prompt_message(self.setup.agent.mcp_servers, arg)
        except (ReactloopError, ValueError) as exc:
            self.err.print(f"/prompt: {explain_error(exc)}", markup=False, highlight=False)
            return True
        await self._turn(text)
        return True


def _terminal_reader() -> Callable[[], Awaitable[str | None]]:
    """A prompt_toolkit prompt with history, multi-line input and Ctrl-C/Ctrl-D handling."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    from reactloop.sessions import default_store_path

    history = default_store_path().parent / "chat_history"
    history.parent.mkdir(parents=True, exist_ok=True)
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("enter")
    def _enter(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    session: PromptSession[str] = PromptSession(
        history=FileHistory(str(history)), key_bindings=keys, multiline=True,
        prompt_continuation="... ")

    async def read() -> str | None:
        while True:
            try:
                return await session.prompt_async("you> ")
            except KeyboardInterrupt:
                continue  # Ctrl-C clears the line
            except EOFError:
                return None

    return read


def _pipe_reader() -> Callable[[], Awaitable[str | None]]:
    async def read() -> str | None:
        line = await asyncio.to_thread(sys.stdin.readline)
        return line.rstrip("\n") if line else None

    return read
