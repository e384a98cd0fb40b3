"""Workbench as a Harbor installed agent: `harbor run --agent workbench_harbor.agent:Workbench -m MODEL`.

install: Python >= 3.11, tmux and bubblewrap in the task's environment (the system's package manager
when one is missing), then a venv at /installed-agent/workbench with Workbench from the wheel given as
`--ak wheel=PATH` (built from the checkout: `pip wheel --no-deps -w dist .`), else from the checkout the
agent was imported from (built on the host the first time). `--ak workbench=PATH` names a Workbench
already in the environment instead (an image that has it; the local folder environment of the tests).

run: `workbench run --jsonl --no-engine --approval auto` in the task's working folder with Harbor's model
(any litellm name), the api base from `--ak api_base=URL` or WORKBENCH_API_BASE, the key from the
provider's variable or WORKBENCH_API_KEY (passed with `--ae`); events to /logs/agent/events.jsonl, the
session in /logs/agent/workbench-data, the log on /logs/agent/workbench.log. The sandbox is
workspace-write where bubblewrap can make a user namespace in the environment, else off (`--ak
sandbox=...` decides): in a container without user namespaces bash and tmux then run unsandboxed, and
the container is the only boundary. On Harbor's timeout Workbench gets SIGTERM, ends its commands and
keeps its store; in every case the ATIF trajectory is written to /logs/agent/trajectory.json
(`workbench export ID --format atif`) and its tokens and cost go into Harbor's agent context.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

LOGS = "/logs/agent"
DATA = f"{LOGS}/workbench-data"
VENV = "/installed-agent/workbench"
CHECKOUT = Path(__file__).resolve().parents[3]  # integrations/harbor/workbench_harbor/agent.py
INSTALL_SH = Path(__file__).with_name("install.sh")
SANDBOX_PROBE = "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-user --unshare-pid true >/dev/null 2>&1"
EXPORT_TIMEOUT_S = 60


class Workbench(BaseInstalledAgent):
    """Workbench run headless in the task's environment (see the module's doc)."""

    # agent/trajectory.json is ATIF (Harbor's trace export reads it); a multi-step task's next step can
    # continue the session (`harbor run --resume-trajectory`: `workbench run --resume ID`)
    capabilities = AgentCapabilities(atif=True, resume=True)

    def __init__(
        self,
        *args: Any,
        wheel: str | None = None,
        workbench: str | None = None,
        api_base: str | None = None,
        sandbox: str | None = None,
        max_turns: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if sandbox not in (None, "workspace-write", "read-only", "off"):
            raise ValueError(f"sandbox is workspace-write, read-only or off, not {sandbox!r}")
        self._wheel = Path(wheel).expanduser() if wheel else None
        self._workbench = workbench
        self._api_base = api_base
        self._sandbox = sandbox
        self._max_turns = max_turns

    @staticmethod
    def name() -> str:
        return "workbench"

    @property
    def binary(self) -> str:
        return self._workbench or f"{VENV}/bin/workbench"

    @property
    def session_id_command(self) -> str:
        """The session in the data folder (it holds this trial's only), as `workbench sessions` lists it."""
        wb = shlex.quote(self.binary)
        return f'{wb} sessions --json --data-dir {DATA} | sed -n \'s/^\\[{{"id": "\\([0-9a-f]*\\)".*/\\1/p\''

    def get_version_command(self) -> str | None:
        return f"{shlex.quote(self.binary)} --version"

    def parse_version(self, stdout: str) -> str:
        return stdout.strip().split()[-1] if stdout.strip() else "unknown"

    async def install(self, environment: BaseEnvironment) -> None:
        if self._workbench:
            await self._check(environment, f"{shlex.quote(self._workbench)} --version", "the Workbench named")
            return
        wheel: Path = self._wheel if self._wheel is not None else await asyncio.to_thread(_build_wheel)
        await environment.upload_file(INSTALL_SH, "/installed-agent/install.sh")
        await environment.upload_file(wheel, f"/installed-agent/{wheel.name}")
        await self._check(
            environment,
            f"bash /installed-agent/install.sh {shlex.quote('/installed-agent/' + wheel.name)} {VENV}",
            "installing Workbench",
            user="root",
        )

    async def _check(self, environment: BaseEnvironment, command: str, what: str, user: str | None = None) -> None:
        result = await environment.exec(command, user=user, timeout_sec=900)
        if result.return_code != 0:
            tail = "\n".join(((result.stdout or "") + (result.stderr or "")).splitlines()[-15:])
            raise RuntimeError(f"workbench: {what} failed (exit {result.return_code}):\n{tail}")

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        if not self.model_name:
            raise ValueError("workbench needs a model: harbor run -m MODEL (any litellm name)")
        probe = await environment.exec(SANDBOX_PROBE, timeout_sec=30)
        sandbox = self._sandbox or ("workspace-write" if probe.return_code == 0 else "off")
        self.logger.info(f"workbench: sandbox {sandbox}" + ("" if sandbox != "off" else " (no user namespaces)"))
        wb = shlex.quote(self.binary)
        flags = [
            "--no-engine",
            "--jsonl",
            "--approval auto",
            f"--sandbox {sandbox}",
            "--allow-net",
            f"--model {shlex.quote(self.model_name)}",
            f"--data-dir {DATA}",
        ]
        # a resumed step (Harbor keeps /logs/agent for it) continues the session in the data folder
        flags.append(f'--resume "$({self.session_id_command})"' if self._resume else '--workspace "$PWD"')
        if self._api_base:
            flags.append(f"--api-base {shlex.quote(self._api_base)}")
        if self._max_turns:
            flags.append(f"--max-turns {int(self._max_turns)}")
        command = (
            f"mkdir -p {LOGS} && {wb} run {' '.join(flags)} {shlex.quote(instruction)} "
            f">> {LOGS}/events.jsonl 2>> {LOGS}/workbench.log & echo $! > {LOGS}/workbench.pid; wait $!"
        )
        try:
            result = await environment.exec(command)
        finally:  # on Harbor's timeout too (a cancel): the trajectory so far is kept
            await asyncio.shield(self._export(environment))
        self.populate_context_post_run(context)
        if result.return_code != 0:  # a model error, a bad key, a budget: the trial ends with the reason
            log = await environment.exec(f"tail -n 5 {LOGS}/workbench.log", timeout_sec=30)
            raise RuntimeError(f"workbench run exited {result.return_code}: {(log.stdout or '').strip()}")

    async def _export(self, environment: BaseEnvironment) -> None:
        wb = shlex.quote(self.binary)
        command = (  # the data folder holds this trial's session only (events.jsonl may be cut by a signal)
            f"id=$({self.session_id_command}); "
            f"[ -n \"$id\" ] || {{ echo 'workbench: no session was started' >&2; exit 3; }}; "
            f'{wb} export "$id" --format atif --data-dir {DATA} > {LOGS}/trajectory.json.part '
            f"&& mv {LOGS}/trajectory.json.part {LOGS}/trajectory.json"
        )
        try:
            result = await environment.exec(command, timeout_sec=EXPORT_TIMEOUT_S)
        except Exception as err:  # the environment is going away: what was downloaded stays
            self.logger.warning(f"workbench: the trajectory was not exported: {err}")
            return
        if result.return_code != 0:
            self.logger.warning(f"workbench: the trajectory was not exported: {result.stderr}")
            return
        await environment.download_file(f"{LOGS}/trajectory.json", self.logs_dir / "trajectory.json")

    def populate_context_post_run(self, context: AgentContext) -> None:
        path = self.logs_dir / "trajectory.json"
        if not path.is_file():
            return
        doc = json.loads(path.read_text())
        totals = _totals(doc)
        context.n_input_tokens = totals["prompt"]
        context.n_output_tokens = totals["completion"]
        context.n_cache_tokens = totals["cached"]
        context.cost_usd = (doc.get("final_metrics") or {}).get("total_cost_usd")
        context.metadata = {
            "workbench_session": doc.get("session_id"),
            "status": (doc.get("extra") or {}).get("status"),
        }


def _totals(doc: dict[str, Any]) -> dict[str, int]:
    """Tokens of a trajectory's own steps and of every subagent embedded in it, at any depth."""
    final = doc.get("final_metrics") or {}
    out = {
        "prompt": final.get("total_prompt_tokens", 0),
        "completion": final.get("total_completion_tokens", 0),
        "cached": final.get("total_cached_tokens", 0),
    }
    for sub in doc.get("subagent_trajectories") or []:
        for key, value in _totals(sub).items():
            out[key] += value
    return out


def _build_wheel() -> Path:
    """A wheel of the checkout the agent was imported from, built once into integrations/harbor/dist (a
    file lock: concurrent trials wait for the first one's build)."""
    dist = CHECKOUT / "integrations" / "harbor" / "dist"
    if not (CHECKOUT / "pyproject.toml").is_file():
        raise RuntimeError("workbench: no checkout to build a wheel from; pass --ak wheel=PATH")
    dist.mkdir(parents=True, exist_ok=True)
    with open(dist / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = sorted(dist.glob("workbench-*.whl"))
        if not found:
            subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(CHECKOUT)],
                check=True,
                timeout=600,
            )
            found = sorted(dist.glob("workbench-*.whl"))
    return found[-1]
