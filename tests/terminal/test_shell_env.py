"""What the agent's shells may see of the workbench's environment: no provider keys."""

from __future__ import annotations

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.terminal.shell_env import is_secret, shell_environment

SECRETS = {
    "OPENAI_API_KEY": "sk-leak-openai-0001",
    "ANTHROPIC_API_KEY": "sk-leak-anthropic-0002",
    "WORKBENCH_API_KEY": "wb-leak-0003",
    "ACME_API_KEY": "acme-leak-0004",
    "AZURE_SPEECH_KEY": "azure-leak-0005",
    "HF_TOKEN": "hf-leak-0006",
    "AWS_SECRET_ACCESS_KEY": "aws-leak-0007",
    "TOGETHERAI_API_KEY": "together-leak-0008",
}


async def test_provider_keys_reach_neither_the_shell_nor_the_event_log(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLAIN_SETTING", "visible-value-0009")
    # `env` in the agent's shell, and the tmux server's global environment that new windows get;
    # unsandboxed, since sandboxed commands cannot reach the server (the environment is the same)
    settings.sandbox = "off"
    command = "env; echo ---; tmux show-environment -g"
    scripted_model.add(reply("", call("bash", command=command)), reply("done"))
    run = await run_agent(settings, "show the environment")
    (result,) = run.results()
    assert not result.is_error, result.error
    assert "PLAIN_SETTING=visible-value-0009" in result.output
    assert "WORKBENCH_SESSION=" in result.output
    stored = b"".join(p.read_bytes() for p in settings.data_dir.glob("workbench.db*"))
    assert b"visible-value-0009" in stored
    for name, value in SECRETS.items():
        assert value not in result.output, name
        assert value.encode() not in stored, name


def test_a_setting_passes_a_named_key_through() -> None:
    env = shell_environment({"OPENAI_API_KEY": "a", "GROQ_API_KEY": "b", "PATH": "/bin"}, "s1", ["GROQ_API_KEY"])
    assert env["GROQ_API_KEY"] == "b" and env["PATH"] == "/bin" and env["WORKBENCH_SESSION"] == "s1"
    assert "OPENAI_API_KEY" not in env


@pytest.mark.parametrize("name", ["MISTRAL_API_KEY", "azure_openai_key", "DEEPSEEK_API_KEY", "AWS_SESSION_TOKEN"])
def test_known_key_names_are_secret(name: str) -> None:
    assert is_secret(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "KEYBOARD", "API_BASE", "MONKEY"])
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret(name)
