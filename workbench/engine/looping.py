"""An agent that keeps repeating one call stops for the person: the repeat detector's review.

`repeats.Repeats.looping` says when a call was made `repeat_stop` times in a row with one
outcome and nothing changed. Before it runs again, the person is asked through the guard's
review queue (a `GuardDecision` whose judge is "repeats", the agent AWAITING_APPROVAL), so the
TUI's modal, its queue and the agent's status work as for any review. The person lets it go
on (approve), writes the agent a note (deny with a reason: the call does not run and the note
reaches the agent as the person's words), or cancels the agent. Where no person can answer (a
headless run without a terminal) the agent stops: the call does not run and its run ends
STOPPED with one line that says what it repeated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workbench.core.safe_text import printable
from workbench.guard.guardrail import Emit, Guard, arguments, refused
from workbench.guard.rules import primary_text
from workbench.pb import workbench_pb2 as pb

JUDGE = "repeats"  # GuardDecision.judge of a looping call's review
SHOWN_ARGUMENT = 60  # characters of the call's main argument in the stop line


def described(call: pb.ToolCall) -> str:
    """The call in a person's words: `read_file(same.txt)`, `bash(pytest -q)`."""
    text = " ".join(primary_text(call.name, arguments(call), call.arguments).split())
    if len(text) > SHOWN_ARGUMENT:
        text = text[: SHOWN_ARGUMENT - 1] + "…"
    return printable(f"{call.name}({text})")


@dataclass
class Stop:
    """What the person (or the lack of one) made of a looping call.

    `result` is the call's result when it does not run (None: it goes on as usual); `note` is the
    person's note for the agent; `reason` is set when the agent's run ends here."""

    result: pb.ToolResult | None = None
    note: str = ""
    reason: str = ""


async def ask(
    call: pb.ToolCall,
    times: int,
    *,
    agent_id: str,
    guard: Guard | None,
    emit: Emit,
    on_status: Callable[[pb.AgentStatus], None],
) -> Stop:
    """Ask the person about `call`, made `times` times in a row already with nothing changed."""
    what, made = described(call), times + 1
    if guard is not None:
        decision = pb.GuardDecision(
            call_id=call.id,
            verdict=pb.GUARD_VERDICT_REVIEW,
            judge=JUDGE,
            reason=(
                f"agent {agent_id} is looping: it made {what} {times} times in a row with the same outcome and "
                "nothing changed, and asks to make it again. Let it go on, write it a note, or cancel it"
            ),
            call=call,
        )
        answer = await guard.ask_person(decision, agent_id=agent_id, emit=emit, on_status=on_status)
        if answer is not None:
            if answer.approved:
                return Stop()
            said = "and wrote to you (the next message)" if answer.reason else "and did not let it run"
            result = refused(
                call,
                f"not run: you made this exact call {made} times in a row with nothing changed; the person "
                f"stopped it {said}. Do not repeat it: take another approach.",
            )
            result.metadata.update({"repeat_refused": True, "loop_stopped": True})
            return Stop(result, note=answer.reason)
    reason = f"stopped: agent {agent_id} repeated {what} {made} times"
    emit(pb.Notice(level="error", text=f"{reason} (nothing changed in between; no person can be asked here)"))
    result = refused(call, f"not run: {reason} with nothing changed; the run stops here for the person.")
    result.metadata.update({"repeat_refused": True, "loop_stopped": True})
    return Stop(result, reason=reason)
