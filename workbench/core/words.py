"""The one table from each protocol enum to the word a person (or the model) reads.

Used by the CLI, the Inbox text, the subagent tool and the TUI; nothing else spells them.
"""

from __future__ import annotations

from workbench.pb import workbench_pb2 as pb

ROOT_ID = "main"  # the root agent's id in every session (its name too): defined here only

RUN_STATUS: dict[int, str] = {
    pb.RUN_STATUS_UNSPECIFIED: "new",
    pb.RUN_STATUS_FINISHED: "finished",
    pb.RUN_STATUS_TERMINATED: "terminated",
    pb.RUN_STATUS_FAILED: "failed",
    pb.RUN_STATUS_BUDGET_EXHAUSTED: "budget exhausted",
    pb.RUN_STATUS_CANCELLED: "cancelled",
    pb.RUN_STATUS_WAIT_TIMEOUT: "wait timeout",
    pb.RUN_STATUS_INTERRUPTED: "interrupted",
    pb.RUN_STATUS_STOPPED: "stopped",
}
AGENT_STATUS: dict[int, str] = {
    pb.AGENT_STATUS_UNSPECIFIED: "unknown",
    pb.AGENT_STATUS_QUEUED: "queued",
    pb.AGENT_STATUS_RUNNING: "running",
    pb.AGENT_STATUS_WAITING: "waiting",
    pb.AGENT_STATUS_COMPLETED: "completed",
    pb.AGENT_STATUS_FAILED: "failed",
    pb.AGENT_STATUS_TIMED_OUT: "timed out",
    pb.AGENT_STATUS_CANCELLED: "cancelled",
    pb.AGENT_STATUS_INTERRUPTED: "interrupted",
    pb.AGENT_STATUS_AWAITING_APPROVAL: "awaiting approval",
}
# How an ended agent's end reads in a sentence: "subagent x <phrase>".
AGENT_ENDED: dict[int, str] = {
    pb.AGENT_STATUS_COMPLETED: "completed",
    pb.AGENT_STATUS_FAILED: "failed",
    pb.AGENT_STATUS_TIMED_OUT: "timed out",
    pb.AGENT_STATUS_CANCELLED: "was cancelled",
    pb.AGENT_STATUS_INTERRUPTED: "was interrupted",
}
SPAWN_MODE: dict[int, str] = {
    pb.SPAWN_MODE_UNSPECIFIED: "unknown",
    pb.SPAWN_MODE_ROOT: "root",
    pb.SPAWN_MODE_SYNC: "sync",
    pb.SPAWN_MODE_ASYNC: "async",
    pb.SPAWN_MODE_FORK: "fork",
}
GUARD_VERDICT: dict[int, str] = {
    pb.GUARD_VERDICT_UNSPECIFIED: "unknown",
    pb.GUARD_VERDICT_RECORD: "record",
    pb.GUARD_VERDICT_REVIEW: "review",
    pb.GUARD_VERDICT_BLOCK: "block",
}
# Who wrote a user message, as a transcript or an export labels it.
AUTHOR: dict[int, str] = {
    pb.AUTHOR_UNSPECIFIED: "user",
    pb.AUTHOR_PERSON: "person",
    pb.AUTHOR_PARENT: "parent agent",
    pb.AUTHOR_INBOX: "Inbox",
    pb.AUTHOR_WORKBENCH: "Workbench",
}
FINAL_AGENT_STATUSES = frozenset(
    (
        pb.AGENT_STATUS_COMPLETED,
        pb.AGENT_STATUS_FAILED,
        pb.AGENT_STATUS_TIMED_OUT,
        pb.AGENT_STATUS_CANCELLED,
        pb.AGENT_STATUS_INTERRUPTED,
    )
)


def run_status(status: int) -> str:
    return RUN_STATUS.get(status, f"status {status}")


def agent_status(status: int) -> str:
    return AGENT_STATUS.get(status, f"status {status}")


def agent_ended(status: int) -> str:
    return AGENT_ENDED.get(status, "finished")


def spawn_mode(mode: int) -> str:
    return SPAWN_MODE.get(mode, f"mode {mode}")


def guard_verdict(verdict: int) -> str:
    return GUARD_VERDICT.get(verdict, f"verdict {verdict}")


def author(value: int) -> str:
    return AUTHOR.get(value, f"author {value}")


def with_reason(word: str, reason: str) -> str:
    """`word: reason` said once: a reason that already starts with the word is not prefixed again
    ("stopped" + "stopped: agent main repeated …", "cancelled" + "cancelled", "was cancelled" +
    "cancelled by the person" read "stopped: agent main repeated …", "cancelled", "was cancelled by
    the person")."""
    reason = reason.strip()
    if not reason:
        return word
    bare = word.removeprefix("was ")
    if reason.lower() == bare.lower():
        return word
    for joint in (":", " "):
        if reason.lower().startswith(bare.lower() + joint):
            return word[: len(word) - len(bare)] + reason
    return f"{word}: {reason}"
