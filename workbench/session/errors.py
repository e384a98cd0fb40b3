"""What the session package raises to its clients: one line a person can act on."""

from __future__ import annotations


class SessionError(Exception):
    """The session cannot be opened or used as asked: one line a person can act on."""


class NotWaiting(SessionError):
    """`Session.decide` on a call that does not wait for review (never did, answered, or cancelled)."""
