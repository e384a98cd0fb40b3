"""The stored-sessions catalog (workbench/session/catalog.py): what its import costs the app."""

from __future__ import annotations

import subprocess
import sys


def test_resume_and_continue_look_up_the_session_without_the_engine() -> None:
    """`workbench --resume ID` and `--continue` find the stored session before the app's first
    frame: the catalog needs the store, not the loop, the tools or the checkpoints (~60 ms more)."""
    code = (
        "import sys, workbench.session.catalog; "
        "print(sorted(m for m in sys.modules if m == 'litellm' or m.split('.')[:2] in "
        "[['workbench', p] for p in ('tools', 'model', 'guard', 'terminal', 'checkpoints', 'mcp')] "
        "or m == 'workbench.engine.loop'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
