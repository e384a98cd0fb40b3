"""What a warm engine would give (docs/STARTUP.md): the Session API in a process where litellm is
already imported, against a cold `workbench run`, to the same scripted server in the same run.

    .venv/bin/python -m tools.benchmarks.warm      # or: .venv/bin/python tools/bench.py warm

Warm: `Session.open(settings)` + `send(prompt)` to the model request, in this process after one
untimed session (litellm imported, its first call made). Cold: `workbench run` as a new process,
start to the model request. No engine server exists; this measures what one would serve.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel, reply  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402

SESSIONS = 8


async def _warm(server: ScriptedModel, tmp: Path) -> list[float]:
    from workbench.session.session import Session

    samples = []
    for i in range(SESSIONS + 1):  # the first one is untimed: litellm's import and first call
        workspace = tmp / f"ws{i}"
        workspace.mkdir()
        settings = Settings(
            model="openai/scripted", api_base=server.url, api_key="k", workspace=workspace, data_dir=tmp / "data"
        )
        server.request_times.clear()
        server.add(reply("ok"))
        start = time.monotonic()
        session = await Session.open(settings)
        session.send("hi")
        await session.wait()
        samples.append((server.request_times[0] - start) * 1000)
        await session.close()
    return samples[1:]


def _cold(server: ScriptedModel, tmp: Path) -> float:
    server.request_times.clear()
    server.add(reply("ok"))
    cmd = [sys.executable, "-m", "workbench.cli.launch", "run", "hi", "--model", "openai/scripted"]
    cmd += ["--api-base", server.url, "--workspace", str(tmp), "--data-dir", str(tmp / "cold")]
    start = time.monotonic()
    subprocess.run(cmd, env={**os.environ, "HOME": str(tmp)}, check=True, capture_output=True)
    return (server.request_times[0] - start) * 1000


def main() -> dict[str, float]:
    print("warm: start to first model request, warm process (Session API) vs a cold `workbench run`")
    server = ScriptedModel()
    try:
        with tempfile.TemporaryDirectory(prefix="wbbench-warm-") as tmp:
            cold = _cold(server, Path(tmp))
            warm = asyncio.run(_warm(server, Path(tmp)))
    finally:
        server.close()
    median = statistics.median(warm)
    print(
        f"  {'warm: Session.open + send (median)':<44} {median:9.1f} ms   vs cold workbench run "
        f"{cold:9.1f} ms   ratio {median / cold:5.2f}x   (target < 300 ms)"
    )
    print(f"  {'warm samples':<44} {', '.join(f'{s:.0f}' for s in warm)} ms")
    print(f"  {'warm process max RSS':<44} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:9.0f} MB")
    return {"warm_ms": median, "cold_ms": cold}


if __name__ == "__main__":
    main()
