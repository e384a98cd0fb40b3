"""The rewind's dataclasses (`session/rewind.py`) as engine.proto messages, and back.

A plan crosses as what a client shows (`RewindPlanView`); the plan itself, with the checkpoint
changes it applies, stays in the session's process under its number (`worker.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.pb import engine_pb2 as epb

if TYPE_CHECKING:
    from workbench.session.rewind import FileChange, RewindPlan, TurnSummary


def file_to_pb(change: FileChange) -> epb.FileChange:
    return epb.FileChange(
        path=change.path, kind=change.kind, added=change.added, removed=change.removed, diff=change.diff
    )


def turns_to_pb(turns: list[TurnSummary]) -> epb.Turns:
    return epb.Turns(
        turns=[
            epb.TurnSummary(
                number=t.number,
                prompt=t.prompt,
                commit=t.commit,
                calls=[
                    epb.CallSummary(agent_id=c.agent_id, tool=c.tool, call_id=c.call_id, changed_by_it=c.changed_by_it)
                    for c in t.calls
                ],
                files=[file_to_pb(f) for f in t.files],
            )
            for t in turns
        ]
    )


def plan_to_pb(plan: RewindPlan, number: int) -> epb.RewindPlanView:
    return epb.RewindPlanView(
        plan=number,
        to_turn=plan.to_turn,
        code=plan.code,
        conversation=plan.conversation,
        undo=plan.undo,
        what=plan.what,
        files=[file_to_pb(f) for f in plan.files],
        outside=plan.outside,
        conversation_seq=plan.conversation_seq,
        messages_dropped=plan.messages_dropped,
        whole=plan.whole,
    )


def turns_from_pb(turns: epb.Turns) -> list[TurnSummary]:
    from workbench.session.rewind import CallSummary, TurnSummary

    return [
        TurnSummary(
            number=t.number,
            prompt=t.prompt,
            commit=t.commit,
            calls=[CallSummary(c.agent_id, c.tool, c.call_id, c.changed_by_it) for c in t.calls],
            files=[_file(f) for f in t.files],
        )
        for t in turns.turns
    ]


def plan_from_pb(view: epb.RewindPlanView) -> RewindPlan:
    """The plan as the client shows it; `target` names it in the session (`plan N`)."""
    from workbench.session.rewind import RewindPlan

    return RewindPlan(
        to_turn=view.to_turn,
        code=view.code,
        conversation=view.conversation,
        undo=view.undo,
        what=view.what,
        target=f"plan {view.plan}",
        files=[_file(f) for f in view.files],
        outside=list(view.outside),
        conversation_seq=view.conversation_seq,
        messages_dropped=view.messages_dropped,
        whole=view.whole,
    )


def plan_number(plan: RewindPlan) -> int:
    """The number a plan from `plan_from_pb` has in its session (0: not one of those)."""
    word, _, number = plan.target.partition(" ")
    return int(number) if word == "plan" and number.isdigit() else 0


def _file(change: epb.FileChange) -> FileChange:
    from workbench.session.rewind import FileChange

    return FileChange(path=change.path, kind=change.kind, added=change.added, removed=change.removed, diff=change.diff)
