"""Shared fixtures: the scripted model server, a temporary workspace, settings, a test's own tools,
a run helper."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (litellm's pydantic models, Textual, ...) lives to the end: frozen,
    the garbage collector stops walking it at every full collection, pytest's own at the end too."""
    gc.freeze()


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Tests never read the person's home, config or env settings: a HOME of the test's own."""
    for var in list(os.environ):
        if var.startswith("WORKBENCH_"):
            monkeypatch.delenv(var)
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    return folder


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    server = ScriptedModel()
    yield server
    server.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def settings(tmp_path: Path, workspace: Path, scripted_model: ScriptedModel) -> Settings:
    """Settings that point at the scripted server through litellm's openai provider."""
    return Settings(
        model="openai/scripted",
        api_base=scripted_model.url,
        api_key="sk-test-key",
        workspace=workspace,
        data_dir=tmp_path / "data",
        # the scripted model is one litellm does not know, for which `task_files` (auto) reads the files
        # a task names before the first model call; tests of other behaviour script their replies for
        # a run without those reads (tests/engine/test_task_files.py turns it back on)
        task_files="off",
    )


FAST_MARKS = ("tmux", "sandbox")  # a run that leaves these out must not start what they start


@pytest.fixture(autouse=True)
def _unmarked_tmux_fails_the_fast_subset(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """In a run that leaves out `tmux` tests (the fast subset), a test that starts a tmux server
    without the mark fails, saying which mark it needs; the full run (`pytest`) checks nothing.

    The server still starts and the test runs as usual: only its outcome says it is misfiled.
    """
    chosen = request.config.option.markexpr or ""
    if "not tmux" not in chosen or any(request.node.get_closest_marker(m) for m in FAST_MARKS):
        yield
        return
    import workbench.terminal.server_lifecycle as lifecycle

    real = lifecycle.start_server
    started: list[bool] = []

    async def start_server(*args: Any, **kwargs: Any) -> None:
        started.append(True)
        await real(*args, **kwargs)

    monkeypatch.setattr(lifecycle, "start_server", start_server)
    yield
    if started:
        pytest.fail(
            f"{request.node.nodeid} starts a tmux server: mark it @pytest.mark.tmux (see README, Run the tests)"
        )


RegisterTool = Callable[..., None]


@pytest.fixture
def register_tool() -> Iterator[RegisterTool]:
    """`register_tool(fn, name=..., read_only=...)` adds a test's own tool for this test only.

    The tool is taken out of the registry when the test ends, so no test's tool is ever offered
    to another test, whatever order the modules were imported in.
    """
    from workbench.tools.registry import tool, unregister

    added: list[str] = []

    def register(fn: Callable[..., Any], name: str | None = None, read_only: bool = False) -> None:
        tool(fn, name=name, read_only=read_only)
        added.append(name or fn.__name__)

    yield register
    for name in added:
        unregister(name)


@dataclass
class Run:
    """What a run produced: its outcome, every committed event, the loop's conversation."""

    outcome: pb.RunFinished
    events: list[pb.Event] = field(default_factory=list)

    def kinds(self) -> list[str]:
        return [str(e.WhichOneof("kind")) for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [getattr(e, kind) for e in self.events if e.WhichOneof("kind") == kind]

    def results(self) -> list[pb.ToolResult]:
        return [m.tool_result for m in self.of("message") if m.role == pb.ROLE_TOOL]


def provider_ids(messages: list[pb.Message]) -> dict[str, str]:
    """Our tool-call ids -> the ids the test scripted for the provider (from the assistant messages)."""
    return {c.id: c.provider_id for m in messages for c in m.tool_calls}


async def run_agent(settings: Settings, prompt: str, tools: list[str] | None = None) -> Run:
    """Run the root agent of a new session in a real SQLite store; collect committed events."""
    from workbench.engine.agents import AgentTree
    from workbench.engine.recorder import Recorder
    from workbench.engine.store import Store
    from workbench.terminal.host import TerminalHost

    store = Store(settings.db_path)
    session_id = store.create_session(settings.workspace, settings.model, prompt)
    events: list[pb.Event] = []
    store.subscribe(events.append, session_id)
    terminal = TerminalHost(
        f"workbench-{session_id}",
        Recorder(store, session_id, "main").emit,
        env_passthrough=tuple(settings.shell_env_passthrough),
        data_dir=settings.data_dir,
        session_id=session_id,
    )
    tree = AgentTree(settings, store, session_id, terminal=terminal)
    try:
        outcome = await tree.run_root(prompt, tools)
    finally:
        await tree.close()
        store.close()
    return Run(outcome, events)
