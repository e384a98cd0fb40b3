"""Answers that cite nothing: a final answer that states a specific value (a number, a file's
path, a name) found in no tool result of the conversation is asked once which result
shows it, before it is accepted (the `answer_check` setting, off by default: small models state
values about files they never read; docs/DECISIONS.md).

Only for a run that used a tool (a question about the workspace, not small talk); a value the
person's or a parent's prompt holds counts as given. Pure functions: no I/O, no state.
"""

from __future__ import annotations

import re

from workbench.core.feedback import model_text
from workbench.engine.advice import FILE_NAME
from workbench.pb import workbench_pb2 as pb

_NUMBER = re.compile(r"(?<![\w.])\d[\d,_]*(?:\.\d+)*(?![\w])")  # 8080, 4.2.1, 1,234
_QUOTED = re.compile(r"`([^`\n]{2,80})`")
_NAME = re.compile(r"\b(?:[a-z]+_\w+|[A-Z][a-z]+[A-Z]\w*|[A-Z][A-Z0-9_]{4,})\b")  # max_retries, CheckLogin, WARNING
SHOWN_VALUES = 3  # values named in the question

# The question after an answer whose values no tool result shows (docs/DECISIONS.md).
QUESTION = (
    "Your answer states {values}, which no tool result in this conversation shows. Which tool result shows "
    "it? If none does, read what holds it first (read_file), then answer from what you read."
)


def claimed(answer: str) -> list[str]:
    """The specific values an answer states: numbers of two characters or more, paths with an
    extension, `quoted` names, identifiers (snake_case, CamelCase, ALL_CAPS of five or more);
    each once, in order."""
    values = [m.group(0) for m in _NUMBER.finditer(answer) if len(m.group(0)) >= 2]
    values += [m.group(0) for m in FILE_NAME.finditer(answer)]
    values += [m.group(1).strip() for m in _QUOTED.finditer(answer)]
    values += [m.group(0) for m in _NAME.finditer(answer)]
    return list(dict.fromkeys(v.rstrip(".,") for v in values if v.rstrip(".,")))


def unsupported(answer: str, messages: list[pb.Message]) -> list[str]:
    """The values `answer` states that no tool result (nor prompt) of `messages` holds; [] when
    the conversation used no tool."""
    results = [model_text(m.tool_result) for m in messages if m.role == pb.ROLE_TOOL]
    if not results:
        return []
    given = "\n".join([*results, *(m.text for m in messages if m.role in (pb.ROLE_USER, pb.ROLE_SYSTEM))])
    return [v for v in claimed(answer) if v not in given and v.replace(",", "") not in given]


def question(values: list[str]) -> str:
    shown = ", ".join(repr(v) for v in values[:SHOWN_VALUES])
    return QUESTION.format(values=shown)


__all__ = ["QUESTION", "claimed", "question", "unsupported"]
