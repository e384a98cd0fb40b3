"""What the session package raises to its clients: one line a person can act on."""

from __future__ import annotations

from pathlib import Path

from workbench.core.causes import advice


class SessionError(Exception):
    """The session cannot be opened or used as asked: one line a person can act on."""


class NotWaiting(SessionError):
    """`Session.decide` on a call that does not wait for review (never did, answered, or cancelled)."""


def event_log_failure(data_dir: Path, err: BaseException) -> str:
    """One line for an event log that could not be written: the error, and what to do about that
    error ("Free some space" only for a full disk; the open-file limit named when it ran out)."""
    text = f"cannot write the event log in {data_dir}: {err}; what was committed before is kept"
    hint = advice(err, "Free some space or choose another --data-dir")
    return f"{text}. {hint[0].upper()}{hint[1:]}" if hint else text
