"""Recovery eval: failure scenarios against any model, each run in a fresh workspace, through the Session API.

    .venv/bin/python tools/eval_recovery.py --model openai/qwen2.5-coder-1.5b \\
        --api-base http://127.0.0.1:8089/v1 --api-key none --runs 1 --temperature 0 --seed 7 \\
        [--scenario edit_trap ...] [--group evidence ...] [--ablate-hints] [--answer-reminder off]
        [--work-nudge off] [--change-check off] [--undone-check off] [--rest-check off]
        [--announce-check off] [--task-files off] [--tool-profile core] [--label after]
        [--out eval-out]

Per scenario it prints runs, failed (the scenario's failure happened: a model may avoid it),
recovered (after it, a successful call of a fixing tool or a correct end), correct (the
workspace or the answer checks out, in code), mean turns (model calls of all agents) and
mean tokens, per group (recovery: the first eight; evidence: issue 28's kinds; multistep: issue 38's; generalization:
kinds the hints were not written for, reported apart). Every run's committed events are saved
as JSON lines under --out, with a summary.json. --ablate-hints turns the `recovery_hints`
setting off: each tool error is cut to its first sentence, so what the hints are worth is
measured; --answer-reminder sets the closing line after results (off: to measure it);
--answer-check turns on the question after an answer whose value no result shows; --work-nudge
sets the line after a how-to answer, --change-check the line after a claimed change no call made,
--undone-check the line after an answer to a task asking for work with no change made, --rest-check
the line after an answer that left part of its task, --announce-check the line after an answer that
only announces its next step, --task-files the reads of the files a task names before its first
model call (off: to measure them; group multistep: issue 38's kinds).
--temperature and --seed are sent with every model request (Workbench has no such setting:
the eval adds them to the request it builds). In the failed-child scenarios the root's first
subagent cannot reach its model: the eval sends that child's requests to a closed port, so it
fails after its retries through the real path. The scenarios are in
tools/eval_recovery_scenarios.py.

A "before" run measures an older checkout: `git worktree add /tmp/before <commit>`, copy this
file and eval_recovery_scenarios.py into its tools/ (if it has no eval), and run them there with
PYTHONPATH=/tmp/before: the workbench package then comes from that checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def add_root(path: list[str], pythonpath: str) -> None:
    """Put this checkout on `path` after the PYTHONPATH entries: a PYTHONPATH that points at another
    checkout (a "before" run) gives the workbench package, this checkout only the eval's own modules."""
    if str(ROOT) in path:
        return
    entries = {str(Path(p).resolve()) for p in pythonpath.split(os.pathsep) if p}
    after = max((i for i, p in enumerate(path) if p and str(Path(p).resolve()) in entries), default=0)
    path.insert(after + 1, str(ROOT))


add_root(sys.path, os.environ.get("PYTHONPATH", ""))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from google.protobuf import json_format  # noqa: E402

from tools.eval_recovery_scenarios import SCENARIOS, Outcome, Scenario  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.model.gateway import ModelClient  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402
from workbench.session.session import Session  # noqa: E402


@dataclass
class Row:
    """One run of one scenario."""

    scenario: str
    group: str  # the scenario's group: recovery, evidence (issue 28), multistep (issue 38), generalization
    run: int
    failed: bool
    recovered: bool
    correct: bool
    turns: int
    tokens: int
    seconds: float
    status: str
    answer: str
    events: str  # the saved events file
    told: list[str]  # the Workbench-authored lines the root got in the run (issue 38's turn-backs), cut


TOLD_CHARS = 60  # characters of each Workbench-authored line kept in a row
ANSWER_LINE = ("auto", "on", "off")
# settings an arm may set (--answer-reminder off, --tool-profile core, ...): name -> its choices
SWITCHES = {
    "answer_reminder": ANSWER_LINE,
    "work_nudge": ANSWER_LINE,
    "change_check": ANSWER_LINE,
    "undone_check": ANSWER_LINE,
    "rest_check": ANSWER_LINE,
    "announce_check": ANSWER_LINE,
    "task_files": ANSWER_LINE,
    "tool_profile": ("full", "core", "auto"),
}
DEAD_ENDPOINT = "http://127.0.0.1:9/v1"  # nothing listens on the discard port: connection refused
failing_child = {"id": ""}  # the subagent whose model calls go to DEAD_ENDPOINT in this run ("" none)


def is_child(messages: list[pb.Message], child_id: str) -> bool:
    """Whether a request is the subagent `child_id`'s: its system prompt names it (engine/spawning.py, CHILD_NOTE)."""
    return bool(messages) and messages[0].role == pb.ROLE_SYSTEM and f", id {child_id}) started by" in messages[0].text


def patch_requests(temperature: float | None, seed: int | None) -> None:
    """Send `temperature` and `seed` with every model request this process makes, and send the
    failing child's requests (a scenario's `fail_first_child`) to an endpoint that refuses them."""
    build = ModelClient.request

    def request(self: ModelClient, messages: list[pb.Message], tools: list[pb.ToolDefinition]) -> dict[str, Any]:
        kwargs = build(self, messages, tools)
        if temperature is not None:
            kwargs["temperature"] = temperature
        if seed is not None:
            kwargs["seed"] = seed
        if failing_child["id"] and is_child(messages, failing_child["id"]):
            kwargs["api_base"] = DEAD_ENDPOINT
        return kwargs

    ModelClient.request = request  # type: ignore[method-assign]


def prepare(scenario: Scenario, folder: Path) -> Path:
    """A fresh workspace for one run, always at the same path (`folder`/../ws): the system prompt
    names it, so every run's prompt starts the same and a local server reuses its cached prefix."""
    workspace = folder.parent / "ws"
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    for rel, text in scenario.files.items():
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    for rel in scenario.executable:
        (workspace / rel).chmod(0o755)
    return workspace


async def run_once(scenario: Scenario, args: argparse.Namespace, folder: Path, index: int) -> Row:
    """One run of `scenario` in a fresh workspace under `folder`; its events saved in args.out."""
    workspace = prepare(scenario, folder)
    settings = Settings(
        model=args.model,
        api_base=args.api_base,
        api_key=args.api_key,
        workspace=workspace,
        data_dir=folder / "data",
        max_turns=args.max_turns,
    )
    if args.ablate_hints:
        if not hasattr(settings, "recovery_hints"):
            raise SystemExit("--ablate-hints: this workbench has no recovery_hints setting")
        settings.recovery_hints = False
    if args.answer_check:
        if not hasattr(settings, "answer_check"):
            raise SystemExit("--answer-check: this workbench has no answer_check setting")
        settings.answer_check = True
    for name in SWITCHES:  # a setting this workbench lacks: the arm cannot be measured on it
        if value := getattr(args, name):
            if not hasattr(settings, name):
                raise SystemExit(f"--{name.replace('_', '-')}: this workbench has no {name} setting")
            setattr(settings, name, value)
    session = await Session.open(settings)
    failing_child["id"] = "a1" if scenario.fail_first_child else ""  # AgentTree.spawn numbers children a1, a2, ...
    started = time.monotonic()
    session.send(scenario.prompt)
    try:
        outcome = await asyncio.wait_for(session.wait(), args.run_timeout)
    except TimeoutError:
        await session.cancel()
        outcome = pb.RunFinished(status=pb.RUN_STATUS_CANCELLED, reason=f"the eval's {args.run_timeout:g} s limit")
    seconds = time.monotonic() - started
    events = list(session.events())
    await session.close()
    saved = args.out / args.label / f"{scenario.name}-{index}.jsonl"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text("".join(json_format.MessageToJson(e, indent=None) + "\n" for e in events))
    run = Outcome(events, outcome.text, workspace, outcome.status)
    totals = [e.usage_update.session_total for e in events if e.WhichOneof("kind") == "usage_update"]
    return Row(
        scenario=scenario.name,
        group=scenario.group,
        run=index,
        failed=scenario.failed(run),
        recovered=scenario.recovered(run),
        correct=scenario.correct(run),
        turns=sum(1 for e in events if e.WhichOneof("kind") == "message" and e.message.role == pb.ROLE_ASSISTANT),
        tokens=(totals[-1].input_tokens + totals[-1].output_tokens) if totals else 0,
        seconds=round(seconds, 1),
        status=pb.RunStatus.Name(outcome.status).removeprefix("RUN_STATUS_").lower(),
        answer=outcome.text[:500],
        events=str(saved),
        told=[
            e.message.text[:TOLD_CHARS]
            for e in events
            if e.WhichOneof("kind") == "message" and e.agent_id == "main" and e.message.author == pb.AUTHOR_WORKBENCH
        ],
    )


def summary(rows: list[Row]) -> list[dict[str, Any]]:
    """Per scenario: runs, failed, recovered, correct, mean turns and tokens."""
    table = []
    for name in dict.fromkeys(r.scenario for r in rows):
        mine = [r for r in rows if r.scenario == name]
        table.append(
            {
                "scenario": name,
                "group": mine[0].group,
                "runs": len(mine),
                "failed": sum(r.failed for r in mine),
                "recovered": sum(r.recovered for r in mine),
                "correct": sum(r.correct for r in mine),
                "turns": round(statistics.mean(r.turns for r in mine), 1),
                "tokens": round(statistics.mean(r.tokens for r in mine)),
            }
        )
    return table


def render(table: list[dict[str, Any]], label: str) -> str:
    """The table, one block per group (the generalization check reported apart)."""
    head = f"{'scenario (' + label + ')':<28} runs failed recovered correct  turns  tokens"
    lines = [head, "-" * len(head)]
    for group in dict.fromkeys(t.get("group", "") for t in table):
        rows = [t for t in table if t.get("group", "") == group]
        if group:
            lines.append(f"[{group}]")
        for t in rows:
            lines.append(
                f"{t['scenario']:<28} {t['runs']:>4} {t['failed']:>6} {t['recovered']:>9} {t['correct']:>7} "
                f"{t['turns']:>6} {t['tokens']:>7}"
            )
        correct, runs = sum(t["correct"] for t in rows), sum(t["runs"] for t in rows)
        lines.append(f"correct in {group or 'all'}: {correct} of {runs} runs")
    return "\n".join(lines)


async def evaluate(args: argparse.Namespace) -> list[Row]:
    chosen = [
        s
        for s in SCENARIOS
        if (not args.scenario or s.name in args.scenario) and (not args.group or s.group in args.group)
    ]
    unknown = set(args.scenario or []) - {s.name for s in SCENARIOS}
    if unknown:
        raise SystemExit(
            f"unknown scenario(s) {', '.join(sorted(unknown))}; known: {', '.join(s.name for s in SCENARIOS)}"
        )
    patch_requests(args.temperature, args.seed)
    bin_dir = str(Path(sys.executable).parent)  # the shells find pytest (the misspelled-command scenario)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    rows: list[Row] = []
    # one fixed folder: the system prompt names the workspace, so a per-run temporary name changed every
    # prompt and, at temperature 0, the model's first reply between two runs of the same code (a 1.5B
    # model took other paths in 4 of 15 scenarios: docs/DECISIONS.md); one eval at a time holds it
    scratch = args.scratch
    scratch.mkdir(parents=True, exist_ok=True)
    lock = (scratch / ".lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit(f"another eval runs in {scratch}; wait for it to end") from None
    for old in scratch.iterdir():
        if old.name != ".lock":
            shutil.rmtree(old, ignore_errors=True)
    try:
        for scenario in chosen:
            for index in range(args.runs):
                row = await run_once(scenario, args, scratch / f"{scenario.name}-{index}", index)
                rows.append(row)
                print(
                    f"{scenario.name} #{index}: failed={row.failed} recovered={row.recovered} correct={row.correct} "
                    f"turns={row.turns} tokens={row.tokens} {row.seconds:g}s {row.status} told={row.told}",
                    flush=True,
                )
    finally:
        for old in scratch.iterdir():
            if old.name != ".lock":
                shutil.rmtree(old, ignore_errors=True)
        lock.close()
    return rows


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", required=True, help="litellm model string, e.g. openai/qwen2.5-coder-1.5b")
    parser.add_argument("--api-base", default="", help="an OpenAI-compatible server's base URL")
    parser.add_argument("--api-key", default="", help="the key for --api-base (a local server: any word)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each scenario")
    parser.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--group", action="append", help="only this group: recovery, evidence, generalization")
    parser.add_argument("--ablate-hints", action="store_true", help="tool errors without their recovery hints")
    parser.add_argument(
        "--answer-check", action="store_true", help="ask once which result shows an answer's uncited value"
    )
    for name, choices in SWITCHES.items():
        flag = f"--{name.replace('_', '-')}"
        parser.add_argument(flag, choices=choices, default="", help=f"the {name} setting for the run")
    parser.add_argument("--temperature", type=float, default=None, help="sent with every request")
    parser.add_argument("--seed", type=int, default=None, help="sent with every request")
    parser.add_argument("--max-turns", type=int, default=12, help="model calls of one agent per run")
    parser.add_argument("--run-timeout", type=float, default=300.0, help="seconds one run may take")
    parser.add_argument("--label", default="", help="names this variant in the output (default: after/ablated)")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=Path(tempfile.gettempdir()) / "wb-eval",
        help="the workspaces' folder, the same for every run (its path is in the prompt)",
    )
    parser.add_argument("--out", type=Path, default=Path("eval-out"), help="where events and summaries go")
    args = parser.parse_args(argv)
    args.label = args.label or ("ablated" if args.ablate_hints else "after")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    rows = asyncio.run(evaluate(args))
    table = summary(rows)
    print(render(table, args.label))
    folder = args.out / args.label
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(
        json.dumps(
            {"label": args.label, "model": args.model, "table": table, "runs": [asdict(r) for r in rows]}, indent=1
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
