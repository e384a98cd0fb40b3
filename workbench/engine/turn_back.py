"""The line a final answer of a model litellm does not know may get back before the answer is
accepted (issue 38), at most one a run: a how-to for work the task asks for (advice.py,
`work_nudge`), a change claimed when every changing call failed (claims.py, `change_check`), or
an answer to a task that asks for work when no call did any (undone.py, `undone_check`), or when
part of it looks left (rest.py, `rest_check`). One turn back a run, shared: a second line after the
first stacked nudges on a model that had answered twice. The one exception: when the first line
gave no ready call and the answer after it gives one (its how-to now holds the commands), that
line comes once more, with the call. An answer that only announces its next
step (announce.py, `announce_check`) has an allowance of its own, once a run: it came after one of
the other lines (the rest line, then "I will make the next call."). The loop appends the line as a
Workbench-authored user message and takes another turn."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from workbench.engine import advice, announce, claims, rest, undone
from workbench.model.gateway import litellm_knows

if TYPE_CHECKING:
    from workbench.engine.loop import AgentLoop


def _on(mode: str, known_model: bool) -> bool:
    return mode == "on" or (mode == "auto" and not known_model)


def line(answer: str, loop: AgentLoop) -> str:
    """The line `answer` gets back ('' none); the run's state remembers which was given."""
    known = litellm_knows(loop.client.spec)
    if not loop.state.announced and _on(loop.settings.announce_check, known):
        loop.state.announced = announce.line(answer)
        if loop.state.announced:
            return loop.state.announced
    if loop.state.turned_back:
        if advice.has_ready_call(loop.state.turned_back) or loop.state.turned_back_twice:
            return ""
        # the first line gave no ready call: a line with one, from the answer after it, once
        text = _line(answer, loop, known)
        if not advice.has_ready_call(text):
            return ""
        loop.state.turned_back_twice = True
        return text
    text = _line(answer, loop, known)
    if text:
        loop.state.turned_back = text
    return text


def _line(answer: str, loop: AgentLoop, known: bool) -> str:
    state, settings, task = loop.state, loop.settings, loop.task
    workspace, tools = loop.ctx.workspace, loop.toolbox.tools
    changing = list(loop.toolbox.changing())

    def read(path: str) -> str | None:
        return advice.workspace_text(workspace, path)

    verbs = advice.work_verbs(task)
    # a task that only asks to run a command it quotes: that command is the ready call
    command = next(iter(rest.task_commands(task, _is_program)), "") if undone.only_runs(verbs) else ""
    if _on(settings.work_nudge, known) and advice.asks_for_work(task) and advice.is_advice(answer):
        # a rename the task asks for, left in files a grep showed: its sed line before the how-to's
        # commands (seen: a how-to's `git add ... && git commit` offered as the rename)
        renamed = undone.rename_command(task, state.calls, read) if not command else ""
        if text := advice.nudge(answer, tools, read, task, command or renamed):
            return text
    if _on(settings.change_check, known):
        failed = claims.failed_changes(state.calls, changing)
        if failed and claims.claims_change(answer):
            return claims.line(failed)
    if _on(settings.undone_check, known) and verbs:
        written = advice.commands_written_as_run(answer, tools, _is_program)
        check = rest.not_run(task, state.calls, _is_program)
        if text := undone.line(task, verbs, state.calls, changing, tools, read, command, written, check):
            return text
    if _on(settings.rest_check, known) and verbs:
        return rest.line(task, state.calls, changing, tools, _is_program, read, str(workspace))
    return ""


def _is_program(word: str) -> bool:
    return shutil.which(word) is not None


__all__ = ["line"]
