"""The offline demo model's script (workbench/model/demo.py): what it answers at each step."""

from __future__ import annotations

import json

from workbench.model.demo import SAMPLE_PATH, decide


def test_a_denied_call_is_the_persons_answer_not_a_failed_edit() -> None:
    """Defect 12: denied, the demo said the edit had not matched the file and re-read it."""
    args = json.dumps({"path": SAMPLE_PATH, "old_text": "x", "new_text": "y"})
    messages = [
        {"role": "user", "content": "fix the login check in auth.go"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "edit_file", "arguments": args}}]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "Error: The person denied this call: not now. It did not run; adapt your approach to that.",
        },
    ]
    text, call = decide(messages)
    assert call is None and "denied" in text and "not now" in text and "did not match" not in text
