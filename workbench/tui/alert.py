"""Telling a person who looked away that a review waits: the terminal bell and a desktop
notification (OSC 9, or OSC 777 for the terminals that read that one), per the `review_alert`
setting. The text comes from the model (an agent's name, a tool's name): every control
character and the separators of the sequence are taken out, so it can never end the sequence
early or perform anything on the terminal."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from workbench.core.words import ROOT_ID
from workbench.pb import workbench_pb2 as pb

if TYPE_CHECKING:
    from textual.app import App

BELL = "\a"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")  # control characters (C0, DEL, C1) and OSC 777's field separator
MAX_BODY = 160


def clean(text: str) -> str:
    return " ".join(_UNSAFE.sub(" ", text).split())[:MAX_BODY]


def alert_text(decision: pb.GuardDecision, agent: str) -> str:
    """What the notification says: `a2 needs you: review bash`."""
    what = "is looping" if decision.judge == "repeats" else f"review {decision.call.name or 'a call'}"
    return clean(f"{agent or ROOT_ID} needs you: {what}")


def alert_sequence(mode: str, body: str) -> str:
    """The bytes to write for `mode` (off, bell, osc9, osc777): the bell, then the notification."""
    if mode == "off":
        return ""
    body = clean(body)
    if mode == "osc9":
        # a body that starts with a digit and ';' would be read as another OSC 9 command (ConEmu)
        return f"{BELL}\x1b]9;workbench: {body}\x1b\\"
    if mode == "osc777":
        return f"{BELL}\x1b]777;notify;workbench;{body}\x1b\\"
    return BELL


def ring(app: App[Any], sequence: str) -> str:
    """Write `sequence` to the app's terminal (as `App.bell()` writes its bell; not when headless)."""
    driver = app._driver
    if sequence and driver is not None and not app.is_headless:
        driver.write(sequence)
    return sequence
