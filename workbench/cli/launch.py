"""The `workbench` command's process: it always ends, and Ctrl-C is one line at any moment.

`entry` is the console script. Ctrl-C while starting (importing, waiting for litellm's
import, checking the model, opening the store) is "workbench: interrupted" and exit 130,
never a traceback; and whatever litellm's background import is doing, the process ends once
`main` returns (`workbench.model.gateway.exit_process`).
"""

from __future__ import annotations

import sys


def entry() -> None:
    """Run `workbench.cli.main.main` as the process and end it with main's exit status."""
    try:
        from workbench.cli.main import main

        code = main()
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        code = 130
    model = sys.modules.get("workbench.model.gateway")
    if model is not None and hasattr(model, "exit_process"):  # imported whole: the preload may run
        model.exit_process(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
