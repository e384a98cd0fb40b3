"""One ACP session on one Workbench Session: its events sent to the client as updates, its
prompts' turns, and its reviews asked as `session/request_permission`.

Every committed event of the session goes through one queue to the client, in order (one
subscription for the session's life, so what happens between turns, an async subagent's end or
a notice, reaches the client too). A turn ends once every event up to the run's end was sent:
the response to `session/prompt` comes after its last update, as ACP requires.

A review (the guard's, or the repeat detector's for a looping agent) becomes a permission
request with allow once, allow always (this tool, or this exact command, for the session), reject
once and reject always (this tool or exact command denied for the session: every later call is
refused without asking, the model told why); the answer goes to `Session.decide`. A reject's
reason reaches the model when the client puts one in the outcome's `_meta.reason`. A client
that fails to answer denies the call, saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.helpers import text_block, tool_content, update_agent_message_text
from acp.interfaces import Client
from acp.schema import PermissionOption, PromptResponse, ToolCallUpdate, Usage

from workbench.acp.updates import KINDS, ROOT, Updates, fenced, stop_reason, title
from workbench.core.words import run_status, with_reason
from workbench.pb import workbench_pb2 as pb
from workbench.service.client import EngineGone, Refused
from workbench.session.errors import NotWaiting, SessionError

if TYPE_CHECKING:
    from workbench.session.port import SessionPort

log = logging.getLogger("workbench.acp")

ALLOW, ALWAYS, REJECT, NEVER = "allow_once", "allow_always", "reject_once", "reject_always"
OPTIONS = [
    PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALWAYS, name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
    PermissionOption(option_id=NEVER, name="Reject for this session", kind="reject_always"),
]
LOOP_OPTIONS = [  # a looping agent's review: let the repeated call go on, or stop it
    PermissionOption(option_id=ALLOW, name="Let it go on", kind="allow_once"),
    PermissionOption(option_id=REJECT, name="Stop this call", kind="reject_once"),
]
FAILED = (pb.RUN_STATUS_FAILED, pb.RUN_STATUS_INTERRUPTED, pb.RUN_STATUS_WAIT_TIMEOUT)
RUN_END_SECONDS = 10.0  # after the run's outcome, the longest wait for its run_finished event to reach the client
RUN_FAILED = -32603  # JSON-RPC's internal error code, with the run's reason as the message


class LiveSession:
    """An open Workbench Session as the client sees it (see the module's doc)."""

    def __init__(self, session: SessionPort, client: Client):
        self.session, self.client = session, client
        self.updates = Updates(session.settings.workspace)
        self.queue: asyncio.Queue[pb.Event] = asyncio.Queue()
        self.delivered = 0  # the last event's seq sent to the client
        self.asking: dict[str, asyncio.Task[None]] = {}  # a reviewed call's id -> its permission request
        self._unsubscribe: Any = None
        self._pump: asyncio.Task[None] | None = None
        self.runs_ended = 0  # the root's run_finished events sent to the client
        self._run_ended = asyncio.Event()

    @property
    def id(self) -> str:
        return self.session.id

    async def replay(self) -> None:
        """A stored session's conversation sent as updates (session/load): prompts, answers, calls."""
        self.updates.replaying = True
        try:
            for event in await self._stored():
                self.delivered = event.seq
                await self._send(self.updates.of(event))
        finally:
            self.updates.replaying = False

    async def _stored(self) -> list[pb.Event]:
        """The session's stored events: the Session's own, or (in the engine) read from the store."""
        events = getattr(self.session, "events", None)
        if events is not None:
            return list(events())
        from workbench.session.catalog import transcript

        return (await asyncio.to_thread(transcript, self.session.settings, self.id)).events

    async def prepare(self) -> None:
        """What updates need to know before the first: the model's context window."""
        try:
            self.updates.window = await self.session.context_window()
        except Exception as err:  # litellm knows no window for this model: usage says 0
            log.info("no context window for %s: %s", self.session.settings.model, err)

    def start(self) -> None:
        """Follow the session's events from the last one sent."""
        self._unsubscribe = self.session.subscribe(self.queue.put_nowait, after=self.delivered)
        self._pump = asyncio.create_task(self._run_pump(), name=f"acp updates {self.id}")

    async def _run_pump(self) -> None:
        while True:
            event = await self.queue.get()
            try:
                if event.seq > self.delivered:
                    self.delivered = event.seq
                    await self._deliver(event)
            except Exception:  # the client went away mid-send, or a defect here: the session goes on
                log.exception("sending event %s of session %s to the ACP client", event.seq, self.id)
            finally:
                self.queue.task_done()

    async def _deliver(self, event: pb.Event) -> None:
        await self._send(self.updates.of(event))
        kind = event.WhichOneof("kind")
        if kind == "run_finished" and event.agent_id == ROOT:
            self.runs_ended += 1
            self._run_ended.set()
        if kind == "guard_decision" and event.guard_decision.verdict == pb.GUARD_VERDICT_REVIEW:
            call_id = event.guard_decision.call_id
            task = asyncio.create_task(self._ask(event.guard_decision, event.agent_id), name="acp review")
            self.asking[call_id] = task
            task.add_done_callback(lambda _: self.asking.pop(call_id, None))
        elif kind == "review_decided" and (asked := self.asking.get(event.review_decided.call_id)) is not None:
            asked.cancel()  # answered already: an approval for the session covered it

    async def _send(self, updates: list[Any]) -> None:
        for update in updates:
            await self.client.session_update(session_id=self.id, update=update)

    # --- a turn ---------------------------------------------------------------------------------

    async def prompt(self, text: str) -> PromptResponse:
        """Send the prompt (queued for the root's next turn while a run goes, as the TUI does) and
        answer once the run ended and every event of it reached the client."""
        ended = self.runs_ended
        try:
            self.session.send(text)
            outcome = await self.session.wait()
        except SessionError as err:
            raise RequestError(-32602, str(err)) from err
        except Refused as err:  # the engine's session refused the prompt
            raise RequestError(-32602, f"workbench: {err}") from err
        except EngineGone as err:
            raise RequestError(
                RUN_FAILED, f"workbench: the engine's process for session {self.id} ended ({err}); load it again"
            ) from err
        if (flush := getattr(self.session, "events", None)) is not None:
            flush(after=sys.maxsize)  # in-process: writes what the store still holds, and the queue gets it
        await self._run_end_sent(ended)
        await self.queue.join()
        if outcome.status in FAILED:
            raise RequestError(RUN_FAILED, f"workbench: {with_reason(run_status(outcome.status), outcome.reason)}")
        if outcome.status == pb.RUN_STATUS_STOPPED:
            await self._send([update_agent_message_text(f"\n\n> workbench: {outcome.reason}\n")])
        usage = outcome.usage
        return PromptResponse(
            stop_reason=stop_reason(outcome),  # type: ignore[arg-type]  # one of its literals
            usage=Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.input_tokens + usage.output_tokens,
                cached_read_tokens=usage.cache_read_tokens or None,
            ),
        )

    async def _run_end_sent(self, ended: int) -> None:
        """Until the run's run_finished event was sent (in the engine it comes after the outcome)."""
        deadline = asyncio.get_running_loop().time() + RUN_END_SECONDS
        while self.runs_ended <= ended:
            self._run_ended.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                log.warning("session %s: the run's end event did not come within %s s", self.id, RUN_END_SECONDS)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._run_ended.wait(), left)

    async def cancel(self) -> None:
        """session/cancel: the run ends CANCELLED (its prompt answers `cancelled`); the session stays.
        Permission requests still open are dropped (the client answers them `cancelled` itself)."""
        await self.session.cancel()
        for task in list(self.asking.values()):
            task.cancel()

    # --- reviews ----------------------------------------------------------------------------------

    async def _ask(self, decision: pb.GuardDecision, agent_id: str) -> None:
        call = self.updates.calls.get(decision.call_id, decision.call)
        who = "" if agent_id == ROOT else self.updates.agents.get(agent_id, agent_id)
        looping = decision.judge == "repeats"
        shown = f"{decision.reason}\n\n{fenced(decision.shown)}" if decision.shown else decision.reason
        tool_call = ToolCallUpdate(
            tool_call_id=decision.call_id,
            title=title(call, who),
            kind=KINDS.get(call.name, "other"),  # type: ignore[arg-type]  # a ToolKind literal
            status="pending",
            content=[tool_content(text_block(shown))],
        )
        tool_call.field_meta = {"workbench": {"agent_id": agent_id, "judge": decision.judge}}
        try:
            response = await self.client.request_permission(
                session_id=self.id, tool_call=tool_call, options=LOOP_OPTIONS if looping else OPTIONS
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:  # an error answer, or the client went away
            log.warning("permission request for call %s failed: %s", decision.call_id, err)
            answer = (False, f"the editor did not answer the review ({err or type(err).__name__})", False)
        else:
            answer = _answer(response)
        try:
            self.session.decide(decision.call_id, *answer)
        except NotWaiting:
            pass  # it stopped waiting meanwhile (the run was cancelled)

    async def close(self) -> None:
        """The client went away: an in-process session ends (its run cancelled); one in the engine
        is left running there, for `workbench attach ID` (its reviews wait for a person)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        tasks = [*self.asking.values(), *([self._pump] if self._pump else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        detach = getattr(self.session, "detach", None)
        await (detach() if detach is not None else self.session.close())


def _answer(response: Any) -> tuple[bool, str, bool]:
    """(approve, reason, remember) from a permission response."""
    outcome = response.outcome
    if outcome.outcome != "selected":
        return False, "the person cancelled the review", False
    meta = {**(response.field_meta or {}), **(getattr(outcome, "field_meta", None) or {})}
    reason = str(meta["reason"]) if isinstance(meta.get("reason"), str) else ""
    if outcome.option_id == ALLOW:
        return True, "", False
    if outcome.option_id == ALWAYS:
        return True, "", True
    return False, reason, outcome.option_id == NEVER
