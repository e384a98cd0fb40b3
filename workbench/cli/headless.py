"""`workbench run`: one prompt headless, on a Session; progress on stderr, the answer on stdout."""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from workbench.config.settings import Settings
from workbench.core import activity
from workbench.core.safe_text import printable
from workbench.core.words import ROOT_ID, agent_ended, spawn_mode, with_reason
from workbench.pb import workbench_pb2 as pb
from workbench.session.catalog import event_json
from workbench.session.port import SessionPort
from workbench.session.terminal_review import TerminalReviewer

WIDTH = 100  # wrap causes at this width on stderr
ARGS_SHOWN = 100  # characters of a call's arguments shown
SHOWN_LINES = 12  # lines of a failed call's output shown above its cause


class HeadlessSession(SessionPort, Protocol):
    """What a headless client drives: the in-process Session, or one the engine hosts
    (`service.client.RemoteSession`), through the client interface (`session/port.py`) and
    whether its event log failed. One code path, two transports."""

    @property
    def failure(self) -> object | None: ...

    def failure_text(self) -> str: ...


@dataclass
class Opened:
    """A session a headless client opened, what its first line says, and where its new events begin."""

    session: HeadlessSession
    header: str
    after: int  # the seq of its newest stored event (-1: the host's own newest, for a hosted session)


def header(session_id: str, model: str, data_dir: str, sandbox: str, mcp_servers: str) -> str:
    """The first stderr line: everything a run has to say at start, in one place."""
    model = f"{model} (scripted demo, not a language model)" if model == "demo" else model
    fields = [f"session {session_id}", f"data {data_dir}", f"model {model}", f"sandbox {sandbox}"]
    if mcp_servers:
        fields.append(f"MCP {mcp_servers}")
    return "workbench: " + " · ".join(fields)


def in_process(settings: Settings, resume: str | None) -> Callable[[bool], Awaitable[Opened]]:
    """The opener of an in-process session (the engine's: `hosted` in `commands/run.py`)."""

    async def open_here(answerable: bool) -> Opened:
        from workbench.session.session import Session  # the engine stack: not for a client of the engine

        session = await Session.open(settings, resume, answerable=answerable)
        s = session.settings
        first = header(session.id, s.model, str(s.data_dir), session.sandbox, session.mcp_servers)
        return Opened(session, first, max((e.seq for e in session.events()), default=0))

    return open_here


class Progress:
    """The plain headless printer: tool calls, failures and notices on stderr, one line each."""

    def __init__(self) -> None:
        self.started: dict[str, tuple[str, float]] = {}  # open calls: name + arguments, start time
        self.interrupted: list[str] = []  # what a cancel cut short, for the last line
        self.attach = ""  # the tmux attach command, said at the first shell call
        self.shell_ran = False

    def _say_attach(self) -> None:
        if self.attach and self.shell_ran:
            _stderr(f"watch the shell: {self.attach}")
            self.attach = ""

    def __call__(self, event: pb.Event) -> None:
        kind = event.WhichOneof("kind")
        who = "" if event.agent_id == ROOT_ID else f"[{event.agent_id}] "
        say = _stderr
        if kind == "tool_call_started":
            call = event.tool_call_started.call
            shown = f"{call.name} {_cut(call.arguments, ARGS_SHOWN)}"
            self.started[call.id] = (shown, time.monotonic())
            say(f"{who}> {shown}")
            if call.name in ("bash", "tmux"):
                self.shell_ran = True
                self._say_attach()
        elif kind == "tool_call_finished":
            result = event.tool_call_finished.result
            shown, began = self.started.pop(result.call_id, (result.name, time.monotonic()))
            if result.is_error and result.error.startswith("interrupted"):
                self.interrupted.append(f"{who}{shown} (ran {time.monotonic() - began:.1f} s)")
            if not result.is_error:
                say(f"{who}  ok ({result.duration:.2f} s)")
            else:
                if result.output:  # what the cause calls "shown above" (a file's closest lines, a command's output)
                    lines = result.output.splitlines()
                    for line in lines[:SHOWN_LINES]:
                        say(f"{who}    | {line}")
                    if len(lines) > SHOWN_LINES:
                        say(f"{who}    | … {len(lines) - SHOWN_LINES} more lines")
                cause = textwrap.fill(result.error, WIDTH, initial_indent=f"{who}  x ", subsequent_indent=f"{who}    ")
                say(f"{cause} ({result.duration:.2f} s)")
        elif kind == "retry_wait":
            wait = event.retry_wait
            say(f"{who}{activity.retrying_in(wait.seconds, wait.reason)}")
        elif kind == "defect":
            say(f"{who}defect in {event.defect.where}: {event.defect.message}")
        elif kind == "message" and event.message.role == pb.ROLE_ASSISTANT and event.message.text:
            if event.message.tool_calls:
                say(f"{who}{event.message.text}")
        elif kind == "terminal_ready":
            self.attach = event.terminal_ready.attach_command  # said once a shell runs, not before
            self._say_attach()
        elif kind == "agent_spawned" and event.agent_spawned.agent.parent_id:
            agent = event.agent_spawned.agent
            say(f"{who}{activity.started_subagent(agent.name, spawn_mode(agent.mode))}: {_cut(agent.prompt, 100)}")
        elif kind == "agent_finished" and event.agent_id != ROOT_ID:
            done = event.agent_finished
            say(f"{who}subagent {with_reason(agent_ended(done.status), done.cause)}")
        elif kind == "stream_discarded":
            say(f"{who}the model's reply broke off; asking again")
        elif kind == "compaction":
            c = event.compaction
            say(f"{who}compacted the conversation: {c.messages_before} -> {c.messages_after} messages")
        elif kind == "notice":
            say(f"workbench: {event.notice.text}")


def _stderr(line: str) -> None:
    print(printable(line), file=sys.stderr)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Ended:
    """Why the run was stopped from outside: the signal's exit status (or a closed stdout)."""

    code = 0
    at = 0.0


def guarded(print_line: Callable[[pb.Event], None], stop: Callable[[int], None]) -> Callable[[pb.Event], None]:
    """A subscriber that stops the run when its reader went away (stdout closed: `| head`)."""

    def deliver(event: pb.Event) -> None:
        try:
            print_line(event)
        except BrokenPipeError:
            stop(141)  # 128 + SIGPIPE, as a shell pipeline reports it

    return deliver


async def run_headless(
    opener: Callable[[bool], Awaitable[Opened]],
    prompt: str,
    *,
    jsonl: bool,
    ended: Ended,
    progress: Progress,
    hangup: bool = False,
) -> tuple[pb.RunFinished, HeadlessSession]:
    """Open (or resume) a session with `opener(answerable)`, send the prompt, wait for the run,
    close. SIGINT and SIGTERM cancel it, and SIGHUP too with `hangup` (else a closed terminal
    ends this process and a session hosted in an engine runs on). With stdin and stderr a
    terminal, a review asks y/n there; otherwise it is a denial."""
    answerable = sys.stdin.isatty() and sys.stderr.isatty()
    opened = await opener(answerable)
    session = opened.session
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    stopping: list[asyncio.Task[None]] = []
    prompting: asyncio.Task[None] | None = None  # the y/n prompt for reviews, on a terminal
    signals = (signal.SIGINT, signal.SIGTERM, *((signal.SIGHUP,) if hangup else ()))

    def stop(code: int) -> None:
        if not ended.code:
            ended.code, ended.at = code, time.monotonic() - started
            stopping.append(loop.create_task(session.cancel()))

    try:
        _stderr(opened.header)
        printer = (lambda e: print(event_json(e), flush=True)) if jsonl else progress
        session.subscribe(guarded(printer, stop), after=opened.after)
        if answerable:
            reviewer = TerminalReviewer(session.decide, session.pending_reviews, stdin=sys.stdin, stderr=sys.stderr)
            session.subscribe(reviewer.on_event, after=opened.after)
            prompting = loop.create_task(reviewer.run(), name="review prompt")
        for signum in signals:
            loop.add_signal_handler(signum, stop, 128 + signum)
        session.send(prompt)
        outcome = await session.wait()
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
        if prompting is not None:
            prompting.cancel()
        await session.close()  # the session's tmux server ends with it, also on SIGTERM
    return outcome, session
