"""The nine ways an outside review passed the guard's "recursive delete of the workspace" rule
in auto mode, each run through the real bash tool (sandboxed, as a session runs it); one undo
puts every file back byte for byte, modes, links and empty folders included (issue 24)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.checkpoints.test_checkpointer import make_workspace
from tests.checkpoints.treestate import tree_state
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.session.session import Session

SKIP = (".git", ".workbench")  # the sandbox makes .workbench/ (read-only to commands); never checkpointed
WIPE = base64.b64encode(b'rm -rf "$PWD"/* "$PWD"/.[!.]*\n').decode()

BYPASSES = {
    "cd .. then rm -rf ws": ["cd ..", "rm -rf ws", "cd ws"],  # back in, for the next ones
    "xargs rm -rf": ['echo "$PWD" | xargs rm -rf'],
    "alias used in the next call": ["alias wipe='rm -rf'", 'wipe "$PWD"'],
    "function used in the next call": ['wipe() { rm -rf "$1"; }', 'wipe "$PWD"'],
    "exported variable": ["export W=$PWD", 'rm -rf "$W"'],
    "python shutil.rmtree": ['python3 -c "import os, shutil; shutil.rmtree(os.getcwd())"'],
    "base64 piped to sh": [f"echo {WIPE} | base64 -d | sh"],
    "base64 through eval": [f'eval "$(echo {WIPE} | base64 -d)"'],
    "script written to /tmp": ['printf \'rm -rf "%s"\\n\' "$PWD" > /tmp/wipe.sh && sh /tmp/wipe.sh'],
}


@pytest.fixture
def session_settings(settings: Settings, workspace: Path) -> Settings:
    make_workspace(workspace)
    settings.approval = "auto"
    return settings


@pytest.mark.slow
async def test_each_bypass_is_undone_byte_for_byte(
    session_settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    before = tree_state(workspace, SKIP)
    session = await Session.open(session_settings)
    try:
        for name, commands in BYPASSES.items():
            scripted_model.add(*[reply("", call("bash", command=c)) for c in commands], reply("done"))
            session.send(f"try: {name}")
            await session.wait()
            left = tree_state(workspace, SKIP)
            assert len(left) < len(before), f"{name}: nothing was deleted"  # (rmtree stops at .workbench/)
            plan = await session.plan_rewind()
            assert not plan.outside, name
            await session.rewind(plan)
            assert tree_state(workspace, SKIP) == before, f"{name}: not put back as it was"
    finally:
        await session.close()
