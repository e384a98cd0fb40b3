"""The y/n prompt of a headless run on a terminal: each review of the session, asked on stderr.

It shows what the guard put in the review's event (`GuardDecision.shown`: the command, the
diff, the URL) and answers through the session's `decide`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TextIO

from workbench.core.safe_text import printable
from workbench.core.words import ROOT_ID
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import NotWaiting

Decide = Callable[[str, bool, str, bool], None]  # Session.decide(call_id, approve, reason, remember)
ANSWERS = "[y]es once / [a]lways (this tool or exact command, for the session) / [n]o, optionally 'n: why'"
LOOP_ANSWERS = "[y] let it go on / [n] stop this call, optionally 'n: a note for the agent'"


def parse_reply(line: str) -> tuple[bool, str, bool] | None:
    """(approve, reason, remember) from a typed answer; None when it is not one."""
    text = line.strip()
    word, _, rest = text.partition(":") if ":" in text else text.partition(" ")
    word = word.strip().lower()
    if word in ("y", "yes"):
        return True, "", False
    if word in ("a", "always"):
        return True, "", True
    if word in ("n", "no"):
        return False, rest.strip(), False
    return None


class TerminalReviewer:
    """Asks y/n on the terminal for each review of a headless run, one at a time, while the
    other agents keep running. Subscribe `on_event` to the session and run `run()` as a task."""

    def __init__(
        self,
        decide: Decide,
        pending: Callable[[], list[pb.GuardDecision]],
        *,
        stdin: TextIO,
        stderr: TextIO,
    ):
        self.decide, self.pending = decide, pending
        self.stdin, self.stderr = stdin, stderr
        self.queue: asyncio.Queue[tuple[pb.GuardDecision, str]] = asyncio.Queue()  # (decision, agent id)

    def on_event(self, event: pb.Event) -> None:
        if event.WhichOneof("kind") == "guard_decision" and event.guard_decision.verdict == pb.GUARD_VERDICT_REVIEW:
            self.queue.put_nowait((event.guard_decision, event.agent_id))

    async def run(self) -> None:
        while True:
            decision, agent_id = await self.queue.get()
            if decision.call_id not in {d.call_id for d in self.pending()}:
                continue  # answered already (an approval for the session covered it) or cancelled
            answer = await self._ask(decision, agent_id)
            try:
                self.decide(decision.call_id, *answer)
            except NotWaiting:
                pass  # it stopped waiting while the person typed (the run was cancelled)

    async def _ask(self, decision: pb.GuardDecision, agent_id: str = "") -> tuple[bool, str, bool]:
        """The review on stderr, naming a subagent; a looping agent's review offers go on or a note."""
        who = f" of agent {printable(agent_id)}" if agent_id and agent_id != ROOT_ID else ""
        self.stderr.write(f"\nreview{who}: {printable(decision.reason)}\n{printable(decision.shown)}\n")
        looping = decision.judge == "repeats"
        while True:
            self.stderr.write("looping: " + LOOP_ANSWERS + ": " if looping else f"approve? {ANSWERS}: ")
            self.stderr.flush()
            line = await self._read_line()
            if line is None:
                return False, "no answer (end of input)", False
            if (answer := parse_reply(line)) is not None:
                return answer

    async def _read_line(self) -> str | None:
        """One line from stdin in a daemon thread (a blocked read must not hold up the exit)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str | None] = loop.create_future()

        def answer(line: str) -> None:
            if not done.done():
                done.set_result(line or None)

        def read() -> None:
            loop.call_soon_threadsafe(answer, self.stdin.readline())

        threading.Thread(target=read, name="review-prompt", daemon=True).start()
        return await done
