"""An answer that only says what comes next: a small model often ends its reply with the step it
is about to take ("I will make the next call.", "Now I'll copy app.ini into the build folder.")
and no call, and the run ends with that step not taken (issue 38: one_command, twice after the
rest line, 2026-12-07). Such an answer gets one line back, once a run, on an allowance of its own
(the other lines share one, turn_back.py): the announced step was not taken; take it now.

An announcement is the answer's last sentence, in the first person, about to act ("I will", "I'll",
"let me", "I am going to", "next, I", "now I need to"); not a question, not a refusal ("I will
not"), not an offer ("let me know", "I'll be happy to"), not a reply with a code block (that is a
how-to: advice.py). Only for models litellm does not know (the `announce_check` setting; decided
by turn_back.py). Pure functions.
"""

from __future__ import annotations

import re

ANNOUNCE_CHARS = 600  # a longer answer says more than its next step
QUOTED_CHARS = 120  # of the announced step, in the line

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")  # a dot inside a word (app.ini) ends none
_ABOUT_TO_ACT = re.compile(
    r"^(?:(?:now|next|then|first|okay|ok|sure|great|alright|so)[,!.]?\s+)*"
    r"(?:i\s+will|i'll|i\s+am\s+going\s+to|i'm\s+going\s+to|i\s+need\s+to|i\s+have\s+to|i\s+must|i\s+should|"
    r"let\s+me|let's|let\s+us|we\s+will|we'll|we\s+need\s+to)\s+(?P<step>\S.*)$",
    re.IGNORECASE,
)
_NO_STEP = re.compile(  # a refusal ("I will not"), an offer ("let me know"), waiting on the person
    r"^(?:not|never|know|be\s+(?:happy|glad)|wait|stop|leave|assume|help|note|mention|point\s+out)\b"
    r"|^(?:keep|let)\s+you\b",
    re.IGNORECASE,
)

LINE = (
    'Your answer ends with a step you are about to take ("{step}") but makes no call, so that step '
    "was not taken. Make the call now; answer when the task is done."
)


def announced_step(answer: str) -> str:
    """The step an answer only announces ('' when it is no announcement): its last sentence, when that
    sentence is the writer about to act and the answer is short, with no code block and no question."""
    text = answer.strip()
    if not text or len(text) > ANNOUNCE_CHARS or "```" in text or text.endswith("?"):
        return ""
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip(" .!\t")]
    if not sentences:
        return ""
    last = sentences[-1].rstrip(":")
    match = _ABOUT_TO_ACT.match(last.replace("\u2019", "'"))
    if match is None or _NO_STEP.match(match.group("step")):
        return ""
    return last if len(last) <= QUOTED_CHARS else last[: QUOTED_CHARS - 1].rstrip() + "…"


def line(answer: str) -> str:
    """The line back for an answer that only announces its next step ('' for any other answer)."""
    step = announced_step(answer)
    return LINE.format(step=step.rstrip(".!")) if step else ""


__all__ = ["announced_step", "line"]
