"""The `workbench` command's process: it always ends, and Ctrl-C is one line at any moment.

`entry` is the console script. Ctrl-C while starting (importing, waiting for litellm's
import, checking the model, opening the store) is "workbench: interrupted" and exit 130,
never a traceback; and whatever litellm's background import is doing, the process ends once
`main` returns (`workbench.session.startup.exit_process`). The garbage collector waits for the
app's first frame. SIGHUP and SIGTERM, and every way out, first end what the process's sessions
still run (`workbench.session.ending`).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import NoReturn


def entry() -> None:
    """Run `workbench.cli.main.main` as the process and end it with main's exit status.

    The garbage collector is off until the app's first frame (`main` turns it on for the other
    commands): the imports and the first frame allocate much and free little, and collecting
    meanwhile cost the first frame 10-30 ms (docs/DECISIONS.md, 2026-12-01)."""
    gc.disable()
    end: Callable[[int], NoReturn] = sys.exit  # until the session package's own exit is imported
    try:
        from workbench.session import ending, startup

        ending.end_leftovers_on_signals()
        end = startup.exit_process
        from workbench.cli.main import main

        code = main()
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        code = 130
    finally:  # closed sessions left nothing; an error or Ctrl-C may have
        if (ending_module := sys.modules.get("workbench.session.ending")) is not None:
            ending_module.end_sessions_leftovers()
    end(code)


if __name__ == "__main__":
    entry()
