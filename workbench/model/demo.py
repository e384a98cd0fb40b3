"""The embedded offline demo model: a scripted litellm custom provider (`--model demo`).

It is not a language model. It plays one scenario, the edit trap, and reacts to the real tool
results it is given: it reads `auth.go` (creating the sample when it is missing), makes an
edit with the wrong indentation and a comment line that is not in the file, gets the real
edit_file failure, re-reads the file, and makes the corrected edit from what it read.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import GenericStreamingChunk

SAMPLE_PATH = "auth.go"
SAMPLE = """package auth

// CheckLogin reports whether the user may log in.
func CheckLogin(user string, password string) bool {
\tif password == "" {
\t\treturn true
\t}
\treturn verify(user, password)
}
"""
# The first edit: spaces instead of tabs and a comment that is not in the file.
WRONG_OLD = '    // reject empty passwords\n    if password == "" {\n        return true\n    }'
WRONG_NEW = '    // reject empty passwords\n    if password == "" {\n        return false\n    }'
_NUMBERED = re.compile(r"^\s*\d+(?:\t|[:|→] ?)(.*)$")


def _results(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result text) for each tool result, in order."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for m in messages:
        for tc in m.get("tool_calls") or []:
            fn = tc["function"] if isinstance(tc, dict) else tc.function
            name = fn["name"] if isinstance(fn, dict) else fn.name
            raw = fn["arguments"] if isinstance(fn, dict) else fn.arguments
            tc_id = tc["id"] if isinstance(tc, dict) else tc.id
            try:
                calls[tc_id] = (name, json.loads(raw or "{}"))
            except (json.JSONDecodeError, RecursionError):
                calls[tc_id] = (name, {})
        if m.get("role") == "tool":
            name, args = calls.get(m.get("tool_call_id", ""), ("", {}))
            out.append((name, args, str(m.get("content") or "")))
    return out


def _failed(text: str) -> bool:
    return text.startswith("Error:") or "\nError:" in text


def _fix_from_read(text: str) -> tuple[str, str] | None:
    """The exact block around `if password == ""`, as read_file showed it, and its fix."""
    lines = [m.group(1) for line in text.splitlines() if (m := _NUMBERED.match(line))]
    for i, line in enumerate(lines):
        if 'if password == ""' in line and i + 2 < len(lines) and "return true" in lines[i + 1]:
            old = "\n".join(lines[i : i + 3])
            return old, old.replace("return true", "return false")
    return None


def decide(messages: list[dict[str, Any]]) -> tuple[str, tuple[str, dict[str, Any]] | None]:
    """The next reply: (text, (tool, arguments) or None), from the conversation so far."""
    results = _results(messages)
    edits = [r for r in results if r[0] == "edit_file"]
    if not results:
        return "I'll look at the login check in auth.go first.", ("read_file", {"path": SAMPLE_PATH})
    name, _, text = results[-1]
    if "The person denied this call" in text:  # a denial is the person's answer, not a failed edit
        reason = text.split("denied this call", 1)[1].split(". It did not run", 1)[0].strip(" :")
        why = f" ({reason})" if reason else ""
        return f"You denied the {name} call{why}, so I stop here and change nothing more.", None
    if name == "read_file" and _failed(text) and not edits:
        return (
            "auth.go is not here yet, so I'll create the sample file this demo fixes.",
            ("write_file", {"path": SAMPLE_PATH, "content": SAMPLE}),
        )
    if name in ("read_file", "write_file") and not edits and not _failed(text):
        return (
            "Empty passwords are accepted. I'll make CheckLogin reject them.",
            ("edit_file", {"path": SAMPLE_PATH, "old_text": WRONG_OLD, "new_text": WRONG_NEW}),
        )
    if name == "edit_file" and _failed(text) and len(edits) == 1:
        return "That edit did not match the file. I'll re-read it as the error says.", (
            "read_file",
            {"path": SAMPLE_PATH},
        )
    if name == "read_file" and len(edits) == 1:
        fix = _fix_from_read(text)
        if fix is None:
            return "auth.go does not hold the check this demo fixes, so I stop here.", None
        return "The file uses tabs and has no such comment. Editing the exact lines now.", (
            "edit_file",
            {"path": SAMPLE_PATH, "old_text": fix[0], "new_text": fix[1]},
        )
    if name == "edit_file" and not _failed(text):
        return "Done: CheckLogin in auth.go now rejects an empty password (it returned true before).", None
    return f"I could not finish the demo scenario; the last tool said:\n{text[:500]}", None


class DemoModel(CustomLLM):
    """A litellm custom provider that streams the scripted replies of `decide`."""

    async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[GenericStreamingChunk]:  # type: ignore[override]
        messages = kwargs.get("messages") or (args[1] if len(args) > 1 else [])
        text, call = decide(messages)
        words = re.findall(r"\S+\s*", text)
        for i in range(0, len(words), 4):
            yield GenericStreamingChunk(
                text="".join(words[i : i + 4]),
                tool_use=None,
                is_finished=False,
                finish_reason="",
                usage=None,
                index=0,
            )
        if call is not None:
            yield GenericStreamingChunk(
                text="",
                tool_use={
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": call[0], "arguments": json.dumps(call[1])},
                    "index": 0,
                },
                is_finished=False,
                finish_reason="",
                usage=None,
                index=0,
            )
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4
        yield GenericStreamingChunk(
            text="",
            tool_use=None,
            is_finished=True,
            finish_reason="tool_calls" if call else "stop",
            usage={
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(text) // 4 + 8,
                "total_tokens": 0,
            },
            index=0,
        )
