"""A command's output in bounds: memory, output events and the saved copy (CappedOutput, bash)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.tools.test_shell import Term, host, term  # noqa: F401 - the shell fixtures
from tests.waiting import until
from tools.benchmarks.shell_output import ROOT, measure
from workbench.terminal import bash_run
from workbench.terminal.output_cap import CappedOutput

pytestmark = pytest.mark.tmux


def test_small_output_is_kept_whole_and_saves_nothing(tmp_path: Path) -> None:
    events: list[str] = []
    out = CappedOutput(100, tmp_path / "saved.txt", 1000, publish=events.append, event_cap=1000)
    out.add("hello\n")
    out.add("world\n")
    assert out.finish() == ("hello\nworld\n", {})
    assert events == ["hello\n", "world\n"]
    assert not (tmp_path / "saved.txt").exists()


def test_the_view_is_head_and_tail_and_the_copy_is_whole(tmp_path: Path) -> None:
    out = CappedOutput(100, tmp_path / "saved.txt", 0)
    text = "".join(f"line {i}\n" for i in range(1000))
    for i in range(0, len(text), 37):
        out.add(text[i : i + 37])
    view, meta = out.finish()
    assert view.startswith(text[:50]) and view.endswith(text[-50:])
    assert f"{len(text) - 100:,} characters" in view and "the whole output" in view
    assert meta == {"saved_output": str(tmp_path / "saved.txt"), "original_chars": len(text)}
    assert (tmp_path / "saved.txt").read_text() == text


def test_events_stop_at_their_cap_with_a_note_and_a_summary(tmp_path: Path) -> None:
    events: list[str] = []
    out = CappedOutput(100, tmp_path / "saved.txt", 0, publish=events.append, event_cap=1000)
    for _ in range(100):
        out.add("x" * 99 + "\n")
    out.finish()
    assert "".join(events[:-2]) == "x" * 99 + "\n" + ("x" * 99 + "\n") * 9
    assert "output events stop here, at 1,000 bytes" in events[-2]
    assert "9,000 more bytes of output were not streamed" in events[-1]


def test_the_saved_copy_stops_at_its_cap_with_a_note(tmp_path: Path) -> None:
    out = CappedOutput(100, tmp_path / "saved.txt", 5000)
    for _ in range(1000):
        out.add("y" * 99 + "\n")
    view, meta = out.finish()
    saved = (tmp_path / "saved.txt").read_text()
    body, note = saved[:5000], saved[5000:]
    assert body == ("y" * 99 + "\n") * 50
    assert "the saved output stops here, at 5,000 bytes (saved_output_cap); 95,000 more characters" in note
    assert meta["saved_output_cut"] is True and meta["original_chars"] == 100_000
    assert "its first 5,000 bytes are saved at" in view


async def test_bash_output_events_and_saved_copy_obey_their_caps(term: Term) -> None:  # noqa: F811
    term.settings.output_event_cap = 2000
    term.settings.saved_output_cap = 10_000
    call_id = term.next_id()
    result = await term.call("bash", call_id=call_id, command="yes 0123456789 | head -c 100000; echo; echo END")
    assert not result.is_error, result.error
    streamed = "".join(term.chunks[call_id])
    assert streamed.startswith("0123456789\n" * 181) and len(streamed.encode()) < 2000 + 300
    assert "output events stop here" in streamed and "more bytes of output were not streamed" in streamed
    assert result.metadata["original_chars"] == 100_005
    saved = Path(result.metadata["saved_output"]).read_text()
    assert saved.startswith("0123456789\n") and len(saved) < 10_000 + 300
    assert "the saved output stops here, at 10,000 bytes" in saved
    assert result.output.endswith("0123456789\n0123456789\nEND\n")  # the model's view keeps the tail


def test_memory_and_event_log_stay_flat_whatever_a_command_prints() -> None:
    """In a child process, as `tools/benchmarks/shell_output.py` measures it: 128 MB of output."""
    base = measure(ROOT, "true")
    big = measure(ROOT, "yes | head -c 128M")
    assert not big["error"], big["error"]
    assert big["rss_mb"] < base["rss_mb"] + 100, (big, base)  # before: ~0.9 GB (1.8 GB for 256 MB)
    assert big["db_mb"] < 2, big  # the events stop at 1 MB (before: the whole output)
    assert big["saved_mb"] <= 64.1, big  # saved_output_cap (before: the whole output)


def _on_disk(path: Path) -> int:
    return path.stat().st_blocks * 512 if path.exists() else 0


async def test_a_running_command_s_output_file_gives_back_what_was_read(
    term: Term,  # noqa: F811
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bash_run, "RELEASE_FROM", 16 << 20)  # from 256 MB: the same mechanism, sooner
    monkeypatch.setattr(bash_run, "RELEASE_STEP", 16 << 20)
    go = workspace / "go"  # the sandbox's /tmp is its own
    command = f"head -c 100M /dev/zero | tr '\\0' y; echo; while [ ! -e {go} ]; do sleep 0.05; done; echo end"
    await term.ok("bash", command="true")  # the host and its folder are up
    assert term.host.dir is not None
    folder = term.host.dir / "io"
    task = asyncio.create_task(term.call("bash", command=command, timeout=120))
    await until(lambda: any(folder.glob("*.out")))
    (out_file,) = folder.glob("*.out")
    # the whole output is written, then read: the file keeps its size but not its blocks
    await until(lambda: out_file.stat().st_size > 100_000_000 and _on_disk(out_file) < 40_000_000, 60)
    go.touch()
    result = await asyncio.wait_for(task, 60)
    assert not result.is_error and result.output.endswith("yyyy\nend\n")
    assert result.metadata["original_chars"] == 100 * 2**20 + 5


async def test_a_detached_command_s_output_file_keeps_only_its_tail_on_disk(term: Term) -> None:  # noqa: F811
    command = "head -c 100M /dev/zero | tr '\\0' y; echo; echo last line; sleep 1000"
    result = await term.call("bash", command=command, timeout=0.5)
    assert "timed out" in result.error
    (window,) = term.host.agent("a1").windows.values()
    assert window.output is not None
    out_file = window.output
    whole = 100 * 2**20 + len("\nlast line\n")  # wait for the last line too: 100 MB alone came first at times
    await until(lambda: out_file.stat().st_size >= whole and _on_disk(out_file) < 20_000_000, 60)
    assert "last line" in await term.ok("tmux", action="capture", window=window.name)
