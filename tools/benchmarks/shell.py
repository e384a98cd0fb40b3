"""The bash tool's round trip on tmux, against `subprocess.run(["bash", "-c", cmd])`.

    .venv/bin/python -m tools.benchmarks.shell      # or: .venv/bin/python tools/bench.py shell
    .venv/bin/python -m tools.benchmarks.shell --against OTHER_CHECKOUT   # before/after, alternating

Same process run, same commands, with a clean HOME; blocks of the two sides alternate so drift
hits both. The bash tool is measured through `Toolbox.invoke` (argument validation, the
registry, `to_result`, the output limit), on a warm shell (its first call starts the private
tmux server and the agent's shell; that start is printed separately). The tmux tool's send,
capture and list are measured against one tmux client process (`tmux display-message`, what
libtmux runs per command). For reference, a naive libtmux round trip (send-keys, then a
`tmux wait-for` channel) is measured too.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.benchmarks import in_clean_home  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402
from workbench.terminal.host import TerminalHost  # noqa: E402
from workbench.tools.registry import Toolbox, ToolContext  # noqa: E402

ROUNDS = {"true": 300, "seq 100000": 40}
BLOCKS = 5


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.9)]


def _line(name: str, value: tuple[float, float], base_name: str, base: tuple[float, float]) -> None:
    print(
        f"  {name:<34} median {value[0]:7.3f} ms  p90 {value[1]:7.3f} ms   vs {base_name:<28} "
        f"median {base[0]:7.3f} ms  p90 {base[1]:7.3f} ms   ratio {value[0] / base[0]:5.2f}x"
    )


def _baseline(command: str, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def _tool(toolbox: Toolbox, ctx: ToolContext, command: str, n: int) -> list[float]:
    samples = []
    args = json.dumps({"command": command})
    for i in range(n):
        call = pb.ToolCall(id=f"b{i}", name="bash", arguments=args)
        start = time.perf_counter()
        result = await toolbox.invoke(call, ctx)
        samples.append((time.perf_counter() - start) * 1000)
        assert not result.is_error, result.error
    return samples


def _tmux_cli(socket: str, n: int) -> list[float]:
    """One tmux command as a client process (what libtmux runs for each command)."""
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(["tmux", "-L", socket, "display-message", "-p", "x"], capture_output=True, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def _tmux_tool(toolbox: Toolbox, ctx: ToolContext, socket: str, n: int = 60) -> dict[str, float]:
    """The tmux tool's send, capture and list against one tmux client process, alternating."""
    ids = iter(range(10**9))

    async def timed(**args: object) -> float:
        call = pb.ToolCall(id=f"t{next(ids)}", name="tmux", arguments=json.dumps(args))
        start = time.perf_counter()
        result = await toolbox.invoke(call, ctx)
        assert not result.is_error, result.error
        return (time.perf_counter() - start) * 1000

    await timed(action="new", window="sh")
    actions = {
        "send": {"action": "send", "window": "sh", "text": ": hi\n"},
        "capture": {"action": "capture", "window": "sh", "lines": 5},
        "list": {"action": "list"},
    }
    samples: dict[str, list[float]] = {name: [] for name in actions}
    cli: list[float] = []
    for _ in range(BLOCKS):
        for name, args in actions.items():
            samples[name] += [await timed(**args) for _ in range(n // BLOCKS)]
        cli += _tmux_cli(socket, n // BLOCKS)
    for name, values in samples.items():
        _line(f"tmux tool {name}", _ms(values), "one tmux client process", _ms(cli))
    return {f"tmux {name}": _ms(values)[0] for name, values in samples.items()} | {"tmux cli": _ms(cli)[0]}


def _naive_libtmux(n: int) -> list[float]:
    """send-keys of `true; tmux wait-for -S ch` and a blocking `wait-for ch`: three tmux clients."""
    import libtmux

    server = libtmux.Server(socket_name=f"wbbench-naive-{uuid.uuid4().hex[:8]}", config_file="/dev/null")
    try:
        session = server.new_session(session_name="b", window_command="exec bash --noprofile --norc -i")
        pane = session.active_window.active_pane
        assert pane is not None
        samples = []
        for i in range(n):
            start = time.perf_counter()
            pane.send_keys(f"true; tmux wait-for -S ch{i}", enter=True)
            server.cmd("wait-for", f"ch{i}")
            samples.append((time.perf_counter() - start) * 1000)
        return samples
    finally:
        server.kill()


async def _run(home: Path) -> dict[str, float]:
    workspace = home / "ws"
    workspace.mkdir()
    settings = Settings(workspace=workspace, data_dir=home / "data")
    host = TerminalHost(f"wbbench-{uuid.uuid4().hex[:8]}")
    ctx = ToolContext(
        workspace=workspace, settings=settings, session_dir=home / "session", agent_id="bench", terminal=host
    )
    toolbox = Toolbox(["bash"])
    figures: dict[str, float] = {}
    try:
        start = time.perf_counter()
        await _tool(toolbox, ctx, "true", 1)
        first = (time.perf_counter() - start) * 1000
        await _tool(toolbox, ctx, "true", 20)  # warm
        _baseline("true", 20)
        for command, n in ROUNDS.items():
            ours: list[float] = []
            base: list[float] = []
            for _ in range(BLOCKS):
                ours += await _tool(toolbox, ctx, command, n // BLOCKS)
                base += _baseline(command, n // BLOCKS)
            _line(f"bash tool {command!r}", _ms(ours), f"bash -c {command!r}", _ms(base))
            figures[f"bash {command}"] = _ms(ours)[0]
            figures[f"bash -c {command}"] = _ms(base)[0]
        figures.update(await _tmux_tool(Toolbox(["tmux"]), ctx, host.socket_name))
        naive = await asyncio.to_thread(_naive_libtmux, 100)
        base = _baseline("true", 100)
        _line("naive libtmux send + wait-for", _ms(naive), "bash -c 'true'", _ms(base))
        figures["naive libtmux true"] = _ms(naive)[0]
        print(f"  first call (start tmux server + shell)  {first:7.1f} ms")
        figures["first call"] = first
    finally:
        await host.close()
    return figures


ROUND_TRIP_CHILD = """
import asyncio, json, statistics, sys, tempfile, time, uuid
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext
from workbench.terminal.host import TerminalHost

async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        host = TerminalHost(f"wbbench-rt-{uuid.uuid4().hex[:8]}")
        ctx = ToolContext(workspace=root, settings=Settings(workspace=root, data_dir=root / "d"),
                          session_dir=root / "s", terminal=host)
        box, args, samples = Toolbox(["bash"]), json.dumps({"command": "true"}), []
        try:
            for i in range(n + 20):
                start = time.perf_counter()
                result = await box.invoke(pb.ToolCall(id=f"c{i}", name="bash", arguments=args), ctx)
                if i >= 20:
                    samples.append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result.error
        finally:
            await host.close()
        print(statistics.median(samples))

asyncio.run(main(int(sys.argv[2])))
"""


def compare(other: Path, rounds: int = 5, n: int = 200) -> None:
    """`true` through the bash tool, this tree against another checkout, in alternating child processes."""
    print(f"shell: bash tool 'true' round trip, this tree vs {other} (alternating, {rounds} x {n} calls)")
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        for tree, into in ((other, theirs), (ROOT, ours)):
            out = subprocess.run(
                [sys.executable, "-c", ROUND_TRIP_CHILD, str(tree), str(n)], capture_output=True, text=True, check=True
            )
            into.append(float(out.stdout.split()[-1]))
    mine, base = statistics.median(ours), statistics.median(theirs)
    print(f"  this tree  median of medians {mine:7.3f} ms   vs other tree {base:7.3f} ms   ratio {mine / base:5.2f}x")


def main() -> dict[str, float]:
    """Print the bash round trip for `true` and `seq 100000` against `bash -c`, as ratios."""
    print("shell: bash tool round trip on tmux vs subprocess.run(['bash', '-c', cmd]), same run")
    return in_clean_home("wbbench-shell-", _run)


if __name__ == "__main__":
    if "--against" in sys.argv:  # e.g. a `git worktree` of main before a change
        compare(Path(sys.argv[sys.argv.index("--against") + 1]).resolve())
    else:
        main()
