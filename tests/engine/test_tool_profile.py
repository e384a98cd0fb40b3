"""The `tool_profile` setting (workbench/engine/tool_profile.py): which built-in tools the main
agent's requests offer; core (and auto, for a model litellm does not know) leaves out subagent,
tmux, web and skill."""

from __future__ import annotations

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, reply
from workbench.config.settings import Settings
from workbench.engine.tool_profile import CORE, narrowed


def offered(scripted_model: ScriptedModel, index: int = -1) -> list[str]:
    return [t["function"]["name"] for t in scripted_model.requests[index].get("tools", [])]


def test_the_profiles() -> None:
    names = ["read_file", "bash", "subagent", "tmux", "web_fetch", "mcp__git__log"]
    assert narrowed(names, "full", known_model=False) == names
    assert narrowed(names, "core", known_model=True) == ["read_file", "bash"]
    assert narrowed(names, "auto", known_model=False) == ["read_file", "bash"]
    assert narrowed(names, "auto", known_model=True) == names


async def test_core_offers_the_file_tools_and_bash_only(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("hi"), reply("hi"))
    await run_agent(settings, "hello")
    assert {"subagent", "tmux", "web_fetch"} <= set(offered(scripted_model))  # full, the default
    settings.tool_profile = "auto"  # openai/scripted: a model litellm does not know
    await run_agent(settings, "hello")
    assert offered(scripted_model) == list(CORE)
