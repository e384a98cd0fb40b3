"""What the agent's shells are made of: the tmux config, the bash rc file and the environment.

The environment is the workbench's own minus the secrets a shell must not see (provider keys:
`env` would put them into a tool result, the event log and `--jsonl`), plus the session's
marker that finds its processes later, and settings that make programs fit a shell nobody
types into (no pager, unbuffered Python).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from workbench.config.secrets import is_secret, stripped_names

TMUX_CONF = """\
set -g history-limit 50000
set -g remain-on-exit on
set -g default-shell /bin/sh
set -g default-size 200x50
set -g status-right ' workbench '
set -g update-environment ''
setw -g automatic-rename off
setw -g allow-rename off
set -s escape-time 0
set -s exit-empty on
"""
# update-environment '': a person who attaches brings no variables (SSH_AUTH_SOCK, DISPLAY) into
# the agent's new windows

# The agent shell's rc file. `__WB_TOKEN` comes from the window's environment and names the
# shell's own report channel (`shell_reports.py`); it is not exported. A report starts with an RS
# byte (\036) and ends with a newline, in one write. The completion line's fields are separated
# by spaces and the working directory comes last, with a backslash written as two backslashes,
# a newline as backslash-n and an RS as backslash-s (a directory's name may hold either):
# `decode_cwd`. `__wb_key` is the run's secret, typed with the run line.
BASH_RC = r"""
PS1='\W \$ '
# The run line starts with C-u (what a person typed is cleared), which on an empty line rings
# readline's bell: tmux would flag the window and run its alert work for every command.
bind 'set bell-style none'
PS2='> '
HISTFILE=
HISTCONTROL=ignorespace
__wb_token=$__WB_TOKEN
unset __WB_TOKEN
__wb_dir=%(dir)s
__wb_io=%(io)s
__wb_run=
__wb_key=
__wb_up=
__wb_chan=%(reports)s/$__wb_token
# Every helper returns 0 and guards its own tests: the agent may `set -e` in this shell.
__wb_done() {
  local p=${PWD//\\/\\\\}
  p=${p//$'\n'/\\n}
  p=${p//$'\036'/\\s}
  printf '\036%%s %%s %%s %%s %%s\n' "$1" "$__wb_run" "$__wb_key" "$2" "$p" > "$__wb_chan"
  __wb_run= __wb_key=
  return 0
}
__wb_echo() {  # for a person watching the pane: the output's start and a failing status
  local out=
  IFS= read -r -N 3000 out < "$__wb_io/$__wb_run.out" 2>/dev/null || :
  if [[ -n $out ]]; then printf '%%s' "$out"; [[ $out == *$'\n' ]] || printf '\n'; fi
  if (( ${#out} >= 3000 )); then printf '\e[2m[... the agent gets the whole output]\e[m\n'; fi
  if (( $1 )); then printf '\e[2m[exit %%s]\e[m\n' "$1"; fi
  return 0
}
__wb_prompt() {
  local s=$?
  if [[ -n $__wb_run ]]; then
    # `set -e` holds for the command that set it: in a shell that lives on, the next failing
    # test would end the shell and lose its variables
    set +e
    __wb_echo "$s"
    __wb_done done "$s"
  elif [[ -z $__wb_up ]]; then
    __wb_up=1
    printf '\036ready %%s %%s\n' "$__wb_token" "$$" > "$__wb_chan"
  fi
  # a command may have replaced PROMPT_COMMAND; Ctrl-C (cancel) still needs this hook
  [[ ${PROMPT_COMMAND-} == *__wb_prompt* ]] || PROMPT_COMMAND="__wb_prompt${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
  return 0
}
PROMPT_COMMAND=__wb_prompt
trap '__wb_s=$?; [[ -n $__wb_run ]] && __wb_done exit "$__wb_s"' EXIT
# The typed line is ` __wb_run=ID __wb_key=KEY; __wb_pre; eval -- "$__wb_cmd" >"$__wb_out" 2>&1; __wb_prompt`:
# no alias (a command may `unalias -a`), and completion does not wait for PROMPT_COMMAND (a
# command may clear it); PROMPT_COMMAND still reports a line that Ctrl-C cut short.
__wb_pre() {  # read the command, show it in the pane in place of the typed line
  IFS= read -r -d "" __wb_cmd < "$__wb_dir/$__wb_run.sh" || :
  __wb_out=$__wb_io/$__wb_run.out
  printf '\e[A\e[2K\e[1m$ %%s\e[m\n' "${__wb_cmd:0:2000}"
  return 0
}
"""

# Set in every shell: no pager waits for a key; Python writes its output as it goes, so a
# command that times out still shows what it printed.
SHELL_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "PYTHONUNBUFFERED": "1",
}

MARKER = "WORKBENCH_SESSION"  # names the session in the environment of every process it starts

# the terminal a workbench runs in is not the agent's: its shells are inside our own server
NOT_INHERITED = ("TMUX", "TMUX_PANE")


def decode_cwd(text: str) -> str:
    """The working directory as the completion line carries it (see BASH_RC)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "s": "\x1e"}.get(m.group(1), m.group(1)), text)


def shell_environment(base: Mapping[str, str], marker: str, passthrough: Iterable[str] = ()) -> dict[str, str]:
    """The environment of the session's tmux server, and so of every shell and program in it."""
    keep = set(passthrough)
    env = {k: v for k, v in base.items() if k not in NOT_INHERITED and (k in keep or not is_secret(k))}
    env.update(SHELL_ENV)
    env[MARKER] = marker
    return env


# a command that failed for want of credentials: gh, git over HTTPS, npm, a 401
_NO_CREDENTIALS = re.compile(
    r"gh auth login|GH_TOKEN|GITHUB_TOKEN|could not read (?:username|password)|terminal prompts disabled|"
    r"authentication (?:failed|required)|\bENEEDAUTH\b|not logged in|unauthorized|\b401\b|"
    r"(?:token|api key|password|credentials?) (?:is |was )?(?:not set|missing|required)",
    re.I,
)
SHOWN_NAMES = 5


def missing_secret_hint(output: str, environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> str | None:
    """A note for a command that failed while a secret variable was kept from the shells: the
    variables its output names, else (for an authentication failure) the ones that were kept."""
    kept = stripped_names(environ, passthrough)
    if not kept:
        return None
    named = [name for name in kept if re.search(rf"\b{re.escape(name)}\b", output)]
    if not named and _NO_CREDENTIALS.search(output):
        named = kept
    if not named:
        return None
    shown = ", ".join(named[:SHOWN_NAMES]) + (
        f" and {len(named) - SHOWN_NAMES} more" if len(named) > SHOWN_NAMES else ""
    )
    example = named[0]
    return (
        f"the shells do not get variables that look like secrets ({shown} here); the person can let one "
        f'through with shell_env_passthrough = ["{example}"] in the user config'
    )
