"""What the agent's shells may see of the workbench's environment: no provider keys."""

from __future__ import annotations

import os

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.secrets import secrets_of
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


@pytest.mark.tmux
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


KEY_NAMES = ["MISTRAL_API_KEY", "azure_openai_key", "DEEPSEEK_API_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN"]
KEY_NAMES += ["SLACK_BOT_TOKEN", "DATABASE_PASSWORD", "MY_SECRET", "DB_PASSWD", "GOOGLE_APPLICATION_CREDENTIALS"]
KEY_NAMES += ["SSH_PRIVATE_KEY", "OPENAI_ORG_ID", "OAUTH_CLIENTSECRET"]
PLAIN_NAMES = ["PATH", "HOME", "KEYBOARD", "API_BASE", "MONKEY", "SESSION_MANAGER", "XDG_SESSION_TYPE"]
PLAIN_NAMES += [
    "TOKENIZERS_PARALLELISM",
    "TIKTOKEN_CACHE_DIR",
    "SSH_AUTH_SOCK",
    "GIT_ASKPASS",
    "DBUS_SESSION_BUS_ADDRESS",
]


@pytest.mark.parametrize("name", KEY_NAMES)
def test_known_key_names_are_secret(name: str) -> None:
    assert is_secret(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret(name)


def test_one_rule_strips_from_the_shells_and_redacts_from_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["GITHUB_TOKEN", "SLACK_BOT_TOKEN", "DATABASE_PASSWORD", "MY_SECRET", "SESSION_MANAGER", "XDG_SESSION_TYPE"]
    for i, name in enumerate(names):
        monkeypatch.setenv(name, f"value-{i:04d}-{name}")
    env = shell_environment(os.environ, "s1")
    redacted = secrets_of(Settings())
    for name in names:
        assert (name not in env) == (os.environ[name] in redacted) == is_secret(name), name
    assert "SESSION_MANAGER" in env and "GITHUB_TOKEN" not in env


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'test -n \"$GITHUB_TOKEN\" || { echo error: GITHUB_TOKEN is not set >&2; exit 1; }'",
        "echo \"fatal: could not read Username for 'https://github.com': terminal prompts disabled\" >&2; false",
    ],
)
@pytest.mark.tmux
async def test_a_command_failing_for_a_kept_token_is_told_its_name_and_the_setting(
    command: str, settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_kept-0001")
    scripted_model.add(reply("", call("bash", command=command)), reply("done"))
    run = await run_agent(settings, "push it")
    (result,) = run.results()
    assert result.is_error and "GITHUB_TOKEN" in result.error and "shell_env_passthrough" in result.error, result.error
    monkeypatch.delenv("GITHUB_TOKEN")
    scripted_model.add(reply("", call("bash", command=command)), reply("done"))
    (result,) = (await run_agent(settings, "push it")).results()
    assert "shell_env_passthrough" not in result.error  # nothing was kept: no such note
