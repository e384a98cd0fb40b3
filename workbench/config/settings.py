"""Settings: flags > env > project config > user config; paths and limits.

Every setting is declared once, below, with its type, default, documentation, env var and
its project rule: how a project's config (`.workbench/config.toml`, which a cloned repo
brings along) may change it. A project config may only tighten what the person's own
config (or the default) gives. `docs/CONFIG.md` is generated from these declarations.
What a declaration holds (`About`, `ProjectRule`) is `config/declaration.py`; the fixed sets of
names (the choices, the paths hidden by default) are `config/choices.py`; reading the
declarations back (`about_setting`) and the layers (`load`, from `user_config_path`) is
`config/load.py`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from workbench.config.choices import (
    ANSWER_REMINDER,
    APPROVAL_MODES,
    CHECKPOINT_FAILURES,
    ENGINE_MODES,
    GUARD_FAILURES,
    HIDDEN_BY_DEFAULT,
    SANDBOX_MODES,
    SEARCH_BACKENDS,
)
from workbench.config.declaration import ADD, ALLOWED, FREE, LOWER, NARROW, USER_ONLY, about, tighter
from workbench.config.mcp_servers import McpServer


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the setting and the source."""


def _hidden_default() -> list[str]:
    return [os.path.expanduser(p) for p in HIDDEN_BY_DEFAULT]


@dataclass
class Settings:
    # model
    model: str = field(
        default="",
        metadata=about(
            doc="litellm model string (provider/model), or 'demo' (the offline scripted demo); empty: none set",
            project=FREE,
            env="WORKBENCH_MODEL",
        ),
    )
    api_base: str = field(
        default="",
        metadata=about(doc="API base URL of the model's server", project=USER_ONLY, env="WORKBENCH_API_BASE"),
    )
    api_key: str = field(
        default="",
        metadata=about(doc="API key (else the provider's own variable)", project=USER_ONLY, env="WORKBENCH_API_KEY"),
    )
    max_output_tokens: int = field(
        default=0,
        metadata=about(
            doc="output tokens per model call; 0: the model's known output limit (8192 if unknown)", project=LOWER
        ),
    )
    model_call_deadline: float = field(
        default=900.0,
        metadata=about(doc="seconds one model call (with its stream) may take in all; 0: no limit", project=LOWER),
    )
    request_timeout: float = field(
        default=600.0, metadata=about(doc="seconds of one HTTP request to the model; 0: no limit", project=LOWER)
    )
    retry_max_attempts: int = field(
        default=5, metadata=about(doc="attempts of one model call; 0: no limit", project=LOWER)
    )
    retry_deadline: float = field(
        default=300.0, metadata=about(doc="seconds of retrying one model call; 0: no limit", project=LOWER)
    )
    retry_after_cap: float = field(
        default=60.0,
        metadata=about(doc="longest wait a server's Retry-After may ask, in seconds; 0: no limit", project=LOWER),
    )
    compact_threshold: float = field(
        default=0.8,
        metadata=about(
            doc="compact the conversation at this fraction of the model's window (above 0, at most 1)",
            project=FREE,
            between=(0.0, 1.0),
        ),
    )
    # where
    workspace: Path = field(
        default_factory=Path.cwd,
        metadata=about(
            doc="the repository to work in",
            project=USER_ONLY,
            shown_default="the current folder",
        ),
    )
    data_dir: Path = field(
        default_factory=lambda: Path(platformdirs.user_state_dir("workbench")),
        metadata=about(
            doc="where sessions, the event log and workbench.log are stored",
            project=USER_ONLY,
            env="WORKBENCH_DATA_DIR",
            shown_default="the user's state folder, ~/.local/state/workbench",
        ),
    )
    # budgets and limits
    max_turns: int = field(
        default=100,
        metadata=about(doc="model calls of one agent; 0: no limit", project=LOWER, env="WORKBENCH_MAX_TURNS"),
    )
    repeat_stop: int = field(
        default=3,
        metadata=about(
            doc="an agent that made one call this many times in a row with the same outcome and nothing changed "
            "stops before the next one and asks the person (headless with no terminal: the run or the subagent "
            "ends, stopped); 0: never",
            project=LOWER,
        ),
    )
    max_tokens: int = field(default=0, metadata=about(doc="token budget of the session; 0: no limit", project=LOWER))
    max_cost: float = field(
        default=0.0, metadata=about(doc="cost budget of the session in USD; 0: no limit", project=LOWER)
    )
    output_limit: int = field(
        default=30000, metadata=about(doc="characters of one tool result the model sees; 0: no limit", project=LOWER)
    )
    recovery_hints: bool = field(
        default=True,
        metadata=about(
            doc="tool errors say what to do next (did-you-mean, closest region, ...); false: only the bare "
            "error, cut at its first sentence (to measure the hints: tools/eval_recovery.py --ablate-hints)",
            project=USER_ONLY,
        ),
    )
    answer_check: bool = field(
        default=False,
        metadata=about(
            doc="a final answer that states a value (a number, a file's path, a `quoted` name) no tool result of "
            "the conversation shows is asked once which result shows it before it is accepted (small models "
            "answered about files they never read); off unless turned on, to be measured with "
            "tools/eval_recovery.py --answer-check",
            project=USER_ONLY,
        ),
    )
    answer_reminder: str = field(
        default="auto",
        metadata=about(
            doc="a request that ends with tool results ends with a line that follows what they are: after "
            "content (a file's text, a command's output) answer now if this answers the task, else make the next "
            "call (small models kept calling tools with the answer in hand); after paths (ls, glob) read the file "
            "first; after a search that found nothing, what it searched; auto: for models litellm's table does "
            "not know (local and small ones), on, off",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    work_nudge: str = field(
        default="auto",
        metadata=about(
            doc="a final answer that describes the change or command the task asks for (code blocks, numbered "
            "steps) and makes no call gets one line back, once a run, with a ready call where its text gives one; "
            "never for a question; auto: for models litellm's table does not know, on, off",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    change_check: str = field(
        default="auto",
        metadata=about(
            doc="a final answer that says a change was made, in a run where every call of a tool that can change "
            "something failed, gets one line back, once a run, naming the failed calls; auto: for models "
            "litellm's table does not know, on, off",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    undone_check: str = field(
        default="auto",
        metadata=about(
            doc="a final answer to a task that asks for a change or a command, in a run where no call that could "
            "change something succeeded, gets one line back, once a run, with a ready call where one follows (a "
            "failed change's call corrected, a read of the file the task names); never for a question; auto: for "
            "models litellm's table does not know, on, off",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    rest_check: str = field(
        default="auto",
        metadata=about(
            doc="a final answer to a task that asks for work, in a run that made changes, gets one line back, once "
            "a run, when the task has more clauses of work than the run made changes, or quotes a command not run "
            "since the last change; auto: for models litellm's table does not know, on, off (one line back a run "
            "is shared by work_nudge, change_check, undone_check and rest_check)",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    announce_check: str = field(
        default="auto",
        metadata=about(
            doc='a final answer that ends with a step about to be taken ("I will make the next call.") and makes '
            "no call gets one line back, once a run, besides the one line the four checks above share; auto: for "
            "models litellm's table does not know, on, off",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    task_files: str = field(
        default="auto",
        metadata=about(
            doc="before a run's first model call, the workspace files its prompt names (at most 3 text files of at "
            "most 12 KB, 24 KB together; a bare name also finds the one file of that name in a folder) are read "
            "with read_file, and the code names it gives (snake_case, camelCase) searched with grep, as calls "
            "Workbench makes; auto: for models litellm's table does not know, on, off",
            project=USER_ONLY,
            choices=ANSWER_REMINDER,
        ),
    )
    tool_profile: str = field(
        default="full",
        metadata=about(
            doc="the built-in tools the main agent is offered: full (all), core (read_file, write_file, edit_file, "
            "ls, glob, grep, bash: no subagent, tmux, web or skill; configured MCP servers stay), auto: core for "
            "models litellm's table does not know (a 1.5B model reached for subagents for one-command tasks)",
            project=USER_ONLY,
            choices=("full", "core", "auto"),
        ),
    )
    output_event_cap: int = field(
        default=1000000, metadata=about(doc="bytes of one call's output stored as events; 0: no limit", project=LOWER)
    )
    saved_output_cap: int = field(
        default=64000000,
        metadata=about(doc="bytes of one call's full output saved to a file; 0: no limit", project=LOWER),
    )
    # approvals and the guard
    approval: str = field(
        default="",
        metadata=about(
            doc="approval mode; empty: the mode's default (ask in the TUI, auto headless)",
            project=tighter(*APPROVAL_MODES, unset="ask"),
            env="WORKBENCH_APPROVAL",
            choices=("", *APPROVAL_MODES),
        ),
    )
    theme: str = field(
        default="dark",
        metadata=about(
            doc="the TUI's colours: dark or light (NO_COLOR in the environment turns colour off)",
            project=USER_ONLY,
            env="WORKBENCH_THEME",
            choices=("dark", "light"),
        ),
    )
    review_alert: str = field(
        default="osc9",
        metadata=about(
            doc="how the TUI tells a person who looked away that a review waits: the terminal bell and a desktop "
            "notification as OSC 9 (iTerm2, WezTerm, Ghostty, Windows Terminal) or OSC 777 (foot, urxvt, "
            "Ghostty), the bell alone, or off",
            project=USER_ONLY,
            choices=("osc9", "osc777", "bell", "off"),
        ),
    )
    guard_model: str = field(
        default="", metadata=about(doc="litellm model of the model judge; empty: no model judge", project=USER_ONLY)
    )
    guard_timeout: float = field(
        default=10.0, metadata=about(doc="seconds the model judge may take; 0: no limit", project=LOWER)
    )
    guard_failure: str = field(
        default="block",
        metadata=about(
            doc="decision when a judge fails (raises, times out, answers malformed output)",
            project=tighter(*GUARD_FAILURES),
            choices=GUARD_FAILURES,
        ),
    )
    guard_allow: list[str] = field(
        default_factory=list,
        metadata=about(doc="rules 'tool:pattern' that turn the mode's review into record", project=USER_ONLY),
    )
    guard_review: list[str] = field(
        default_factory=list, metadata=about(doc="rules 'tool:pattern' that always need review", project=ADD)
    )
    guard_block: list[str] = field(
        default_factory=list, metadata=about(doc="rules 'tool:pattern' that are always blocked", project=ADD)
    )
    # the engine service (workbench/service/): sessions hosted by a long-lived process
    engine: str = field(
        default="off",
        metadata=about(
            doc="run sessions in the engine: auto (when one runs; start one for later), off, require",
            project=USER_ONLY,
            env="WORKBENCH_ENGINE",
            choices=ENGINE_MODES,
        ),
    )
    engine_idle: float = field(
        default=30.0,
        metadata=about(
            doc="minutes an engine with no session and no client waits before it exits",
            project=USER_ONLY,
            between=(0.05, 24 * 60),
        ),
    )
    engine_hangup: str = field(
        default="keep",
        metadata=about(
            doc="a closed terminal (SIGHUP) under `workbench run` in the engine: keep its run going, or cancel it",
            project=USER_ONLY,
            env="WORKBENCH_ENGINE_HANGUP",
            choices=("keep", "cancel"),
        ),
    )
    # sandbox for bash and tmux
    sandbox: str = field(
        default="workspace-write",
        metadata=about(
            doc="sandbox of bash and tmux",
            project=tighter(*SANDBOX_MODES),
            env="WORKBENCH_SANDBOX",
            choices=SANDBOX_MODES,
        ),
    )
    sandbox_network: bool = field(
        default=False, metadata=about(doc="network inside the sandbox", project=tighter(False, True))
    )
    sandbox_writable: list[Path] = field(
        default_factory=list, metadata=about(doc="extra folders writable inside the sandbox", project=NARROW)
    )
    sandbox_hidden: list[str] = field(
        default_factory=_hidden_default,
        metadata=about(
            doc="paths hidden inside the sandbox (~ expanded)",
            project=ADD,
            home_paths=True,
            shown_default=", ".join(HIDDEN_BY_DEFAULT),
        ),
    )
    sandbox_run_visible: list[str] = field(
        default_factory=list,
        metadata=about(
            doc="paths under /run (hidden inside the sandbox) shown read-only, e.g. a socket a tool needs",
            project=USER_ONLY,
        ),
    )
    bwrap_path: str = field(default="bwrap", metadata=about(doc="the bubblewrap binary", project=USER_ONLY))
    shell_env_passthrough: list[str] = field(
        default_factory=list,
        metadata=about(doc="variables that look like secrets (README) the shells may still see", project=USER_ONLY),
    )
    # subagents
    max_depth: int = field(default=2, metadata=about(doc="nesting depth of subagents; 0: no limit", project=LOWER))
    max_running_children: int = field(
        default=8, metadata=about(doc="subagents of one parent running at once; 0: no limit", project=LOWER)
    )
    max_total_children: int = field(
        default=64, metadata=about(doc="subagents of one session in all; 0: no limit", project=LOWER)
    )
    wait_cap: float = field(
        default=600.0,
        metadata=about(doc="seconds a parent waits for its children's next Inbox item; 0: no limit", project=LOWER),
    )
    inbox_limit: int = field(
        default=100, metadata=about(doc="message items kept per Inbox; 0: no limit", project=LOWER)
    )
    # bash
    bash_timeout: float = field(
        default=120.0, metadata=about(doc="default seconds of one bash command; 0: no limit", project=LOWER)
    )
    # files
    read_roots: list[Path] = field(
        default_factory=list, metadata=about(doc="extra readable roots outside the workspace", project=NARROW)
    )
    # checkpoints of the workspace (undo, rewind)
    checkpoints: bool = field(
        default=True,
        metadata=about(
            doc="keep a checkpoint of the workspace before each tool call that can change it (undo, rewind)",
            project=USER_ONLY,
            env="WORKBENCH_CHECKPOINTS",
        ),
    )
    checkpoint_failure: str = field(
        default="refuse",
        metadata=about(
            doc="when no checkpoint can be taken (a full disk): refuse the tool call with the reason, or allow it "
            "with a notice",
            project=tighter(*CHECKPOINT_FAILURES),
            choices=CHECKPOINT_FAILURES,
        ),
    )
    checkpoint_file_limit: int = field(
        default=50_000_000,
        metadata=about(
            doc="bytes of one file a checkpoint keeps; larger ones are skipped with a notice; 0: no limit",
            project=USER_ONLY,
        ),
    )
    checkpoint_ignored_file_limit: int = field(
        default=1_000_000,
        metadata=about(
            doc="bytes of one git-ignored file a checkpoint still keeps (an .env); 0: no limit", project=USER_ONLY
        ),
    )
    checkpoint_ignored_total: int = field(
        default=50_000_000,
        metadata=about(
            doc="bytes of git-ignored files kept in all; an ignored tree over it (node_modules) is skipped with a "
            "notice; 0: no limit",
            project=USER_ONLY,
        ),
    )
    checkpoint_store_cap: int = field(
        default=20_000_000_000,
        metadata=about(
            doc="bytes the checkpoint store of a workspace may hold; over it checkpoints fail (see "
            "checkpoint_failure) until `workbench sessions --prune` frees it; 0: no limit",
            project=USER_ONLY,
        ),
    )
    # web
    search_backend: str = field(
        default="",
        metadata=about(
            doc="web_search backend; empty: the first one configured",
            project=FREE,
            env="WORKBENCH_SEARCH_BACKEND",
            choices=("", *SEARCH_BACKENDS),
        ),
    )
    searxng_url: str = field(
        default="", metadata=about(doc="SearXNG instance URL", project=USER_ONLY, env="WORKBENCH_SEARXNG_URL")
    )
    brave_api_key: str = field(
        default="", metadata=about(doc="Brave Search API key", project=USER_ONLY, env="BRAVE_API_KEY")
    )
    brave_url: str = field(
        default="https://api.search.brave.com/res/v1/web/search",
        metadata=about(doc="Brave Search endpoint", project=USER_ONLY, env="WORKBENCH_BRAVE_URL"),
    )
    tavily_api_key: str = field(
        default="", metadata=about(doc="Tavily API key", project=USER_ONLY, env="TAVILY_API_KEY")
    )
    tavily_url: str = field(
        default="https://api.tavily.com/search",
        metadata=about(doc="Tavily endpoint", project=USER_ONLY, env="WORKBENCH_TAVILY_URL"),
    )
    web_allow_hosts: list[str] = field(
        default_factory=list, metadata=about(doc="private hosts web_fetch may reach", project=NARROW)
    )
    web_timeout: float = field(
        default=20.0, metadata=about(doc="seconds of each web request step; 0: no limit", project=LOWER)
    )
    web_max_bytes: int = field(
        default=5000000, metadata=about(doc="bytes of one web response; 0: no limit", project=LOWER)
    )
    # MCP servers
    mcp_servers: dict[str, McpServer] = field(
        default_factory=dict,
        metadata=about(
            doc="MCP servers, one table [mcp.servers.NAME] each (see README, MCP servers): command, args, env, "
            "cwd, or url, headers; enabled, tools, timeout, network, writable, sandbox, read_only",
            project=ALLOWED,
        ),
    )
    mcp_defer_above: int = field(
        default=40,
        metadata=about(
            doc="an MCP server offering more tools than this is deferred: one line about it in the prompt, its "
            "tools offered once the model lists them with the mcp__tools tool (at most 60 per listing); 0: never "
            "(every tool in every request: providers refuse more than about 128)",
            project=LOWER,
        ),
    )
    mcp_startup_timeout: float = field(
        default=10.0,
        metadata=about(
            doc="seconds the first model request waits for MCP servers with no tool list cached from an earlier "
            "start (a server's first start in this data folder); 0: never wait",
            project=LOWER,
        ),
    )
    mcp_allowed: list[str] = field(
        default_factory=list,
        metadata=about(
            doc="hashes of server tables a project config may add ('sha256:...', the note that refused one "
            "gives the line)",
            project=USER_ONLY,
        ),
    )

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "workbench.db"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "workbench.log"


def bound(limit: float) -> float:
    """A limit setting as a bound to compare against: 0 (no limit) is infinity."""
    return math.inf if limit == 0 else limit


def effective_approval(settings: Settings, interactive: bool) -> str:
    """The approval mode in force: the setting, else the mode's default (ask in the TUI, auto headless)."""
    return settings.approval or ("ask" if interactive else "auto")
