"""One cgroup per agent (workbench/terminal/agent_cgroups.py), through the real Session, agent tree,
sandboxed tmux server and the scripted model: cancelling one subagent ends every process it started
(its running command, a `setsid` daemon, a `nohup` job) within 2 s, while its sibling's run on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.engine.test_agents import create, route
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import EventLog, until
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.session import Session
from workbench.terminal.leftovers import make_cgroup


def cgroups_here() -> bool:
    probe = make_cgroup(f"probe-{os.getpid()}")
    if probe is None:
        return False
    probe.rmdir()
    return True


pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(not cgroups_here(), reason="no cgroup v2 that this user may make here"),
]


def sleepers(seconds: str) -> list[int]:
    """Host pids of the `sleep SECONDS` processes running now."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [b"sleep", seconds.encode()]:
                found.append(int(entry.name))
    return found


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def command(tag: str) -> str:
    """A daemon that leaves the terminal session, a nohup job, and a command that keeps the call busy,
    all deaf to Ctrl-C (a cancel's first try)."""
    return (
        f"trap '' INT; setsid sleep 90{tag} >/dev/null 2>&1 < /dev/null & "
        f"nohup sleep 91{tag} >/dev/null 2>&1 & sleep 92{tag}"
    )


async def test_cancelling_one_subagent_ends_all_its_processes_and_none_of_its_siblings(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD ONE: work", name="one"), create("CHILD TWO: work", name="two"))]
            + [reply("waiting")] * 10,
            "CHILD ONE": [reply("", call("bash", command=command("1"))), reply("one done")],
            "CHILD TWO": [reply("", call("bash", command=command("2"))), reply("two done")],
        },
    )
    log = EventLog()
    session = await Session.open(settings, answerable=False)
    session.subscribe(log)
    try:
        session.send("ROOT task")
        mine = ["901", "911", "921"]
        theirs = ["902", "912", "922"]
        await until(lambda: all(sleepers(s) for s in mine + theirs), what="both children's processes")
        one = [p for s in mine for p in sleepers(s)]
        two = [p for s in theirs for p in sleepers(s)]
        started = time.monotonic()
        await session.cancel("a1")
        await until(lambda: not alive(one), timeout=2.0, what="every process of the cancelled child gone")
        took = time.monotonic() - started
        assert alive(two) == two, "the sibling's processes run on"
        finished = {e.agent_finished.agent_id: e.agent_finished.status for e in log.of("agent_finished")}
        assert finished.get("a1") == pb.AGENT_STATUS_CANCELLED and "a2" not in finished
        await session.cancel()
    finally:
        await session.close()
    assert took < 2.0
    await until(lambda: not alive(two), timeout=5.0, what="the session's end ends the rest")
