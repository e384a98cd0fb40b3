"""A tmux server that stops answering (SIGSTOP) is killed and replaced, never waited on for good."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from tests.tools.test_shell import Term, host, term  # noqa: F401 - the shell fixtures
from workbench.terminal.host import TerminalHost

pytestmark = pytest.mark.tmux


def _stop_server(host: TerminalHost) -> int:  # noqa: F811 - a TerminalHost, not the fixture
    os.kill(host.server_pid, signal.SIGSTOP)
    return host.server_pid


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


async def test_a_stopped_server_is_replaced_and_the_bash_call_runs_in_a_fresh_shell(term: Term) -> None:  # noqa: F811
    await term.ok("bash", command="export KEPT=1")
    term.host.command_timeout = 3.0  # after the start: a loaded machine may take a while to start
    stopped = _stop_server(term.host)
    try:  # the stopped server never took the line: the command runs once, in a fresh server's shell
        result = await asyncio.wait_for(term.call("bash", command="echo hi:$KEPT"), 30)
    finally:
        _kill(stopped)
    assert not result.is_error and result.output == "hi:\n"
    assert any("stopped answering" in n and "killed" in n and "variables" in n for n in result.notes), result.notes
    assert term.host.server_pid != stopped and term.host.alive()
    assert await term.ok("bash", command="echo again") == "again\n"


async def test_a_stopped_server_fails_a_tmux_tool_call_as_feedback(term: Term) -> None:  # noqa: F811
    await term.ok("tmux", action="new", window="w", command="sleep 60")
    term.host.command_timeout = 3.0
    stopped = _stop_server(term.host)
    try:
        result = await asyncio.wait_for(term.call("tmux", action="list"), 30)
        assert result.is_error and "stopped answering" in result.error
    finally:
        _kill(stopped)
    assert "no windows" in await term.ok("tmux", action="list")  # a fresh server
