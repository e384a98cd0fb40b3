"""The lines a final answer of a model litellm does not know may get back, once each a run, before
the answer is accepted (issue 38): a how-to for work the task asks for (advice.py, `work_nudge`),
and a change claimed when every changing call failed (claims.py, `change_check`). The loop appends
the line as a Workbench-authored user message and takes another turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.engine import advice, claims
from workbench.model.gateway import litellm_knows

if TYPE_CHECKING:
    from workbench.engine.loop import AgentLoop


def _on(mode: str, known_model: bool) -> bool:
    return mode == "on" or (mode == "auto" and not known_model)


def line(answer: str, loop: AgentLoop) -> str:
    """The line `answer` gets back ('' none); the run's state remembers it was given."""
    state, settings, known = loop.state, loop.settings, litellm_knows(loop.client.spec)
    if _on(settings.work_nudge, known) and not state.nudged_to_work:
        if advice.asks_for_work(loop.task) and advice.is_advice(answer):
            workspace = loop.ctx.workspace
            text = advice.nudge(answer, loop.toolbox.tools, lambda path: advice.workspace_text(workspace, path))
            if text:
                state.nudged_to_work = True
                return text
    if _on(settings.change_check, known) and not state.checked_claim:
        failed = claims.failed_changes(state.calls, list(loop.toolbox.changing()))
        if failed and claims.claims_change(answer):
            state.checked_claim = True
            return claims.line(failed)
    return ""


__all__ = ["line"]
