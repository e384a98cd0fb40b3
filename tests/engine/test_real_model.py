"""The edit trap and the misspelled path against a real model (skipped unless one is named).

    WORKBENCH_TEST_MODEL=openai/gpt-4.1 OPENAI_API_KEY=... .venv/bin/python -m pytest -m real_model

Any litellm model string works, with the provider's key in its usual env var. For an
OpenAI-compatible server of your own (a local llama-server, say), add WORKBENCH_TEST_API_BASE
(and WORKBENCH_TEST_API_KEY); the README shows the three for a local model. Each test may
take WORKBENCH_TEST_TIMEOUT seconds (1800 by default: a small local model on a shared CPU is slow).
The variables are read when this module is imported: the shared fixtures clear WORKBENCH_*
for every test so that no test sees the person's settings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_agent
from workbench.config.settings import Settings
from workbench.model.demo import SAMPLE
from workbench.pb import workbench_pb2 as pb

MODEL = os.environ.get("WORKBENCH_TEST_MODEL", "")
API_BASE = os.environ.get("WORKBENCH_TEST_API_BASE", "")
API_KEY = os.environ.get("WORKBENCH_TEST_API_KEY", "")
# A small local model on a shared CPU takes minutes per run (a first prompt ~50 s, ~20 tokens/s)
TIMEOUT = float(os.environ.get("WORKBENCH_TEST_TIMEOUT", "1800"))
FILE_TOOLS = ["read_file", "write_file", "edit_file", "ls", "glob", "grep"]

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.timeout(TIMEOUT),
    pytest.mark.skipif(not MODEL, reason="set WORKBENCH_TEST_MODEL (and the provider's key) to run"),
]

AUTH_GO = SAMPLE


def real_settings(workspace: Path, tmp_path: Path) -> Settings:
    return Settings(
        model=MODEL,
        api_base=API_BASE,
        api_key=API_KEY,
        workspace=workspace,
        data_dir=tmp_path / "data",
        max_turns=15,
    )


async def test_edit_trap_with_a_real_model(workspace: Path, tmp_path: Path) -> None:
    (workspace / "auth.go").write_text(AUTH_GO)
    prompt = (
        "In auth.go, CheckLogin lets an empty password in. A reviewer pasted the block like this:\n\n"
        '    // reject empty passwords\n    if password == "" {\n        return true\n    }\n\n'
        "Make it return false for an empty password. Change nothing else in the file "
        "(keep its indentation and comments as they are) and do not add the reviewer's comment."
    )
    run = await run_agent(real_settings(workspace, tmp_path), prompt, FILE_TOOLS)
    assert run.outcome.status == pb.RUN_STATUS_FINISHED, run.outcome.reason
    assert (workspace / "auth.go").read_text() == AUTH_GO.replace("return true", "return false")


async def test_misspelled_path_with_a_real_model(workspace: Path, tmp_path: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "auth.py").write_text('def login(user):\n    return user == "admin"\n')
    prompt = "In src/auht.py, rename the function login to sign_in. Do not create new files."
    run = await run_agent(real_settings(workspace, tmp_path), prompt, FILE_TOOLS)
    assert run.outcome.status == pb.RUN_STATUS_FINISHED, run.outcome.reason
    # a call on the misspelled path is told the right one (the model may also spell it right
    # from the start: then its first call may fail for another reason, which this is not about)
    calls = {started.call.id: started.call for started in run.of("tool_call_started")}
    misspelled = [r for r in run.results() if "auht.py" in calls[r.call_id].arguments]
    assert all("did you mean src/auth.py?" in r.error for r in misspelled)
    assert (workspace / "src" / "auth.py").read_text() == 'def sign_in(user):\n    return user == "admin"\n'
    assert sorted(p.name for p in (workspace / "src").iterdir()) == ["auth.py"]
