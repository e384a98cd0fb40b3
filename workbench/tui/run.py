"""`workbench` on a terminal: run the app, then say on the way out how to come back to its session."""

from __future__ import annotations

import sys

from workbench.config.settings import Settings
from workbench.tui.app import WorkbenchApp


def run_app(settings: Settings, prompt: str | None, resume: str | None, pick: bool) -> int:
    """`workbench`, `workbench "TASK"`, `workbench --resume [ID]`: run the TUI; the exit status."""
    app = WorkbenchApp(settings, prompt=prompt, resume=resume, pick=pick)
    code = app.run()
    if app.detached:
        print(
            f"workbench: session {app.session_id} goes on in the engine; come back with "
            f"`workbench attach {app.session_id}`",
            file=sys.stderr,
        )
    elif session_id := app.session_id:  # as `workbench run` does: how to go on
        print(
            f"workbench: session {session_id}; continue it with `workbench --resume {session_id}`, "
            f"read it with `workbench export {session_id}`",
            file=sys.stderr,
        )
    return code if isinstance(code, int) else app.return_code or 0
