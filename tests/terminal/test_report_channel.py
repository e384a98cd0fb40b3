"""The shells' report channel under attack from inside the sandbox (issue 39 item 8).

Real bwrap, a real tmux server and real shells; nothing mocked. A sandboxed command floods the
channel the shells report on, or forges a command's end in every way it can find (the shared
FIFO of before, the report descriptor a background job of the shell inherited, the tokens in
/proc/*/environ, the run ids in the session's folder); the host must keep its memory bounded and
take only the shell's own reports.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from tests.terminal.test_sandbox import SandboxedTerm, open_session, outside  # noqa: F401 - the fixtures
from workbench.core.feedback import model_text

pytestmark = [pytest.mark.tmux, pytest.mark.sandbox]

FLOOD = 48 << 20  # bytes written into the channel
GROWTH_LIMIT = 12 << 20  # bytes the host's memory may grow meanwhile


def _rss() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


# Every FIFO a command can write that the host reads: the session's shared one (before the fix),
# any whose path is in a variable of the shell's (a subshell has them all), any the process holds
# open. Each one reached is noted in /tmp/reached (the sandbox's own /tmp), so that a test can
# tell that its attack was made.
_EVERY_FIFO = (
    "__paths=$(set | sed -n 's/^__wb[a-z_]*=//p' | tr -d \"'\"); "
    "for __f in /tmp/workbench-*/done.fifo $__paths /proc/$BASHPID/fd/*; do "
    '[ -p "$__f" ] && {{ echo "$__f" >> /tmp/reached; {{ {write}; }} > "$__f"; }} 2>/dev/null; done; true'
)


async def _reached(s: SandboxedTerm) -> list[str]:
    """The FIFOs an attack reached: the shared one (before the fix), a shell's channel (after it)."""
    return (await s.ok("bash", command="sort -u /tmp/reached 2>/dev/null; true")).split()


async def _reached_a_channel(s: SandboxedTerm) -> bool:
    return any(path.endswith("/done.fifo") or "/reports/" in path for path in await _reached(s))


async def test_a_flood_of_the_report_channel_keeps_memory_bounded_and_the_next_status_true(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
) -> None:
    s = open_session()
    await s.ok("bash", command="true")  # the server and the shell are up
    base = peak = _rss()
    flooding = True

    async def sample() -> None:
        nonlocal peak
        while flooding:
            peak = max(peak, _rss())
            await asyncio.sleep(0.005)

    sampler = asyncio.create_task(sample())
    try:
        flood = await s.call("bash", command=_EVERY_FIFO.format(write=f"head -c {FLOOD} /dev/zero"), timeout=60)
    finally:
        flooding = False
        await sampler
    assert peak - base < GROWTH_LIMIT, f"the host grew by {(peak - base) >> 20} MB reading a {FLOOD >> 20} MB flood"
    assert not flood.is_error, model_text(flood)
    assert await _reached_a_channel(s)
    after = await s.call("bash", command="sleep 0.2; (exit 3)", timeout=20)
    assert after.is_error and after.metadata["exit_code"] == 3, model_text(after)
    assert "timed out" not in model_text(after)
    assert await s.ok("bash", command="echo still here") == "still here\n"


async def test_a_flood_from_a_job_of_an_earlier_command_does_not_hide_the_next_command_s_end(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
) -> None:
    """The flood goes on while the next commands end: their reports still arrive whole."""
    s = open_session()
    flood = _EVERY_FIFO.format(write="timeout 6 cat /dev/zero")
    await s.ok("bash", command=f"( {flood} ) >/dev/null 2>&1 &")
    await asyncio.sleep(0.5)
    base = _rss()
    for status in (3, 4, 5):
        result = await s.call("bash", command=f"sleep 0.3; (exit {status})", timeout=20)
        assert result.is_error and "exit_code" in result.metadata, model_text(result)
        assert result.metadata["exit_code"] == status, model_text(result)
    assert _rss() - base < GROWTH_LIMIT
    assert await _reached_a_channel(s)  # the job did flood (the shell's own channel: it has the shell's variables)


def _forger(token_source: str) -> str:
    """A loop that writes `done` lines, in the format before the fix (`done TOKEN RUN STATUS PWD`)
    and after it (`RS done RUN KEY STATUS PWD`), for every run id in the session's folder, with
    every token and key it can read (`token_source` lists them)."""
    lines = (
        'for __r in $__runs; do for __t in $__tokens x; do printf "\\ndone %s %s 0 /\\n" "$__t" "$__r"; '
        'printf "\\036done %s %s 0 /\\n" "$__r" "$__t"; done; done'
    )
    return (
        "while :; do "
        "__runs=$(ls /tmp/workbench-*/ /tmp/workbench-*/io/ 2>/dev/null "
        "| sed -n 's/^\\(r[0-9]*-[0-9a-f]*\\)\\..*/\\1/p'); "
        f"__tokens=$({token_source}); " + _EVERY_FIFO.format(write=lines) + "; sleep 0.05; done"
    )


async def _survives_forgery(s: SandboxedTerm) -> None:
    started = time.monotonic()
    result = await s.call("bash", command="sleep 2; (exit 5)", timeout=20)
    assert result.is_error and "exit_code" in result.metadata and result.metadata["exit_code"] == 5, model_text(result)
    assert time.monotonic() - started >= 2


async def test_a_done_line_forged_by_another_window_is_not_a_completion(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
) -> None:
    """Another process in the sandbox (a tmux window): it reads the tokens in every process's
    environment and every FIFO any process holds."""
    s = open_session()
    await s.ok("bash", command="true")
    tokens = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | sed -n 's/^__WB_TOKEN=//p'"
    every_fd = _forger(tokens).replace("/proc/$BASHPID/fd/*", "/proc/[0-9]*/fd/*")
    await s.ok("tmux", action="new", window="forger", command=f"bash -c {_quoted(every_fd)}")
    await asyncio.sleep(0.5)  # it is writing
    await _survives_forgery(s)
    # what it could reach: nothing since the fix (the shared FIFO before it)
    assert not [path for path in await _reached(s) if not path.endswith("/done.fifo")]


async def test_a_done_line_forged_by_a_job_of_an_earlier_command_is_not_a_completion(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
) -> None:
    """A background job an earlier command left in the shell: it has the shell's variables (every
    one of them is tried as a token and as a path) and its descriptors."""
    s = open_session()
    variables = "set | sed -n 's/^__wb[a-z_]*=//p' | tr -d \"'\""
    await s.ok("bash", command=f"( {_forger(variables)} ) >/dev/null 2>&1 &")
    await asyncio.sleep(0.5)
    await _survives_forgery(s)
    assert await _reached_a_channel(s)  # it did write (into the shell's own channel: it has the shell's variables)
    assert s.host.reports.dropped > 0  # and its lines were read, and dropped


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
