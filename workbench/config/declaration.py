"""How a setting is declared: `About` (its doc, env var, choices, range), kept in its field's
metadata by `about(...)`, and its `ProjectRule` (how a project config may change it: FREE,
USER_ONLY, LOWER, NARROW, ADD, ALLOWED or `tighter(...)`). The declarations themselves are the
fields of `Settings` in `config/settings.py`; `config/load.py` applies the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

RuleKind = Literal["free", "user-only", "lower", "narrow", "add", "tighter", "allowed"]


@dataclass(frozen=True)
class ProjectRule:
    """How a project config may change one setting, relative to the user config or default.

    kind: "free" (any value), "user-only" (never), "lower" (a number only down; 0 means no
    limit and counts as infinity), "narrow" (a list only to a subset), "add" (a list only
    gains entries), "tighter" (a choice only toward the front of `order`, tightest first),
    "allowed" (a table of tables, e.g. MCP servers: a project adds an entry only when the user
    config allows that exact table by its hash, in `mcp_allowed`; it never changes the user's).
    """

    kind: RuleKind
    order: tuple[Any, ...] = ()
    unset: Any = None  # "tighter": what an empty value is compared as (approval: "ask", the TUI's default)

    def words(self) -> str:
        """The rule as a person reads it (docs/CONFIG.md, notes)."""
        if self.kind == "tighter":
            return "only tighter: " + " < ".join(_shown(v) for v in self.order)
        return _RULE_WORDS[self.kind]


_RULE_WORDS = {
    "free": "yes",
    "user-only": "no",
    "lower": "only lower",
    "narrow": "only remove entries",
    "add": "only add entries",
    "allowed": "only add tables the user config allows by hash (mcp_allowed)",
}
FREE = ProjectRule("free")
USER_ONLY = ProjectRule("user-only")
LOWER = ProjectRule("lower")
NARROW = ProjectRule("narrow")
ADD = ProjectRule("add")
ALLOWED = ProjectRule("allowed")


def tighter(*order: Any, unset: Any = None) -> ProjectRule:
    return ProjectRule("tighter", order, unset)


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class About:
    """Everything about one setting besides its type and default, kept in its field's metadata.

    doc: one line for docs/CONFIG.md and --help; project: how a project config may change it;
    env: its env var; choices: the allowed values; shown_default: the default in words, where
    the value depends on the machine; between: (low, high], a number's range; home_paths: a
    list of paths whose ~ is expanded.
    """

    doc: str
    project: ProjectRule
    env: str = ""
    choices: tuple[Any, ...] = ()
    shown_default: str = ""
    between: tuple[float, float] | None = None
    home_paths: bool = False


def about(
    *,
    doc: str,
    project: ProjectRule,
    env: str = "",
    choices: tuple[Any, ...] = (),
    shown_default: str = "",
    between: tuple[float, float] | None = None,
    home_paths: bool = False,
) -> dict[str, About]:
    """A field's metadata: `field(default=..., metadata=about(doc=..., project=...))`."""
    return {"about": About(doc, project, env, choices, shown_default, between, home_paths)}
