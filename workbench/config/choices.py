"""The fixed sets of names the settings use: the values each choice setting takes (tightest first
where a project config may only tighten it), the paths hidden inside the sandbox by default, and
the settings a client's flags carry. The settings themselves are `Settings` in `config/settings.py`.
"""

from __future__ import annotations

APPROVAL_MODES = ("read-only", "ask", "auto")  # tightest first
APPROVAL_CYCLE = ("ask", "auto", "read-only")  # the order Ctrl+T steps through
ANSWER_REMINDER = ("auto", "on", "off")
SANDBOX_MODES = ("read-only", "workspace-write", "off")  # tightest first
ENGINE_MODES = ("auto", "off", "require")
# the settings a client's flags give, by name: what a client sends the engine to open a session with
FLAG_SETTINGS = (
    "model",
    "api_base",
    "api_key",
    "workspace",
    "max_turns",
    "max_tokens",
    "max_cost",
    "data_dir",
    "sandbox",
    "sandbox_network",
    "approval",
    "guard_model",
)
GUARD_FAILURES = ("block", "review")  # tightest first
CHECKPOINT_FAILURES = ("refuse", "allow")  # tightest first
SEARCH_BACKENDS = ("ddgs", "searxng", "brave", "tavily")
HIDDEN_BY_DEFAULT = (
    "~/.ssh",
    "~/.aws",
    "~/.config/gcloud",
    "~/.netrc",
    "~/.gnupg",
    "~/.docker",
    "~/.kube",
    "~/.config/gh",
    "~/.git-credentials",
    "~/.npmrc",
    "~/.pypirc",
)
