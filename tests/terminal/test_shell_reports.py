"""The shells' report channels as the host reads them: a real FIFO written by a real writer thread,
no tmux (the sandboxed attacks on them are in test_report_channel.py)."""

from __future__ import annotations

import asyncio
import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from workbench.terminal.shell_reports import MAX_LINE, ShellReports, new_secret
from workbench.terminal.state import Completion

FLOOD = 8 << 20  # bytes without a newline


def _writer(path: Path, pieces: list[bytes]) -> threading.Thread:
    def write() -> None:
        fd = os.open(path, os.O_WRONLY)
        try:
            for piece in pieces:
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view[:65536]) :]
        finally:
            os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


async def test_a_channel_takes_only_well_formed_reports_of_what_is_awaited_in_bounded_memory(tmp_path: Path) -> None:
    reports = ShellReports()
    reports.open(tmp_path / "reports")
    token = new_secret()
    ready = reports.expect_ready(token)
    key, other = new_secret(), new_secret()
    done: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
    reports.expect_run("r1-0123abcd", key, done)
    forged = [  # each a report as the shell writes it (an RS, the fields, a newline), but not a true one
        f"\x1eready {new_secret()} 7\n",  # another shell's token
        f"\x1edone r1-0123abcd {other} 0 /\n",  # not the run's key
        f"\x1edone r1-0123abcd {key} 1234 /\n",  # not a status
        f"\x1edone r1-0123abcd {key[:-1]} 0 /\n",
        f"\x1edone r2-0123abcd {key} 0 /\n",  # a run nobody waits for
        f"\x1edone {token} r1-0123abcd 0 /\n",  # the fields of before, with the shell's token
        f"done r1-0123abcd {key} 0 /\n",  # no RS: not a report
    ]
    pieces = [b"x" * FLOOD, b"\n", b"\x1e" + b"y" * (MAX_LINE + 1), b"\n", *[line.encode() for line in forged]]
    # a flood without a newline, then the true reports right after it
    pieces += [
        b"z" * FLOOD,
        f"\x1eready {token} 42\n".encode(),
        f"\x1edone r1-0123abcd {key} 3 /a\\nb\\\\c\\s\n".encode(),
    ]
    tracemalloc.start()
    try:
        writer = _writer(tmp_path / "reports" / token, pieces)
        assert await asyncio.wait_for(ready, 30) == 42
        assert await asyncio.wait_for(done, 30) == Completion(3, "/a\nb\\c\x1e", False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        reports.close()
    await asyncio.to_thread(writer.join, 10)
    assert peak < MAX_LINE + (1 << 20), f"{peak >> 20} MB held while reading {2 * FLOOD >> 20} MB of lines too long"
    assert reports.dropped == len(forged)  # the long report and each forged one but the last (no RS: not one)


def test_the_channels_folder_cannot_be_listed_by_its_owner_without_privileges(tmp_path: Path) -> None:
    reports = ShellReports()
    reports.open(tmp_path / "reports")
    assert (tmp_path / "reports").stat().st_mode & 0o777 == 0o300
    reports.close()
    assert (tmp_path / "reports").stat().st_mode & 0o777 == 0o700  # removable again


@pytest.mark.parametrize("line", ["\x1eready", "\x1edone", "\x1edone a b c d e f", "\x00\x1e\x00done", "\x1e"])
async def test_a_line_that_is_not_a_report_is_dropped(tmp_path: Path, line: str) -> None:
    reports = ShellReports()
    reports.open(tmp_path / "reports")
    token = new_secret()
    reports.expect_ready(token)
    try:
        writer = _writer(tmp_path / "reports" / token, [f"{line}\n".encode()])
        await asyncio.to_thread(writer.join, 10)
        for _ in range(100):
            reports.read_all()
            if reports.dropped:
                break
            await asyncio.sleep(0.01)
        assert reports.dropped == 1
    finally:
        reports.close()
