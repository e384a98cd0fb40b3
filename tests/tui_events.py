"""Fixed event streams for the TUI's snapshot tests, screenshots and benchmarks: fixed ids and
times, so a screen drawn from them is the same on every run. Real runs feed the Pilot tests."""

from __future__ import annotations

import json
from typing import Any

from workbench.pb import workbench_pb2 as pb

START = 1_764_547_200.0  # 2025-12-01 00:00:00 UTC
SESSION = "3f2a9c1d0b7e"


class EventLog:
    """Builds events with consecutive seqs and times that advance by `step` seconds."""

    def __init__(self, session_id: str = SESSION, start: float = START, step: float = 0.5) -> None:
        self.session_id, self.now, self.seq, self.step = session_id, start, 0, step
        self.events: list[pb.Event] = []

    def add(self, agent_id: str, kind: str, message: Any, step: float | None = None) -> pb.Event:
        self.seq += 1
        self.now += self.step if step is None else step
        event = pb.Event(session_id=self.session_id, agent_id=agent_id, seq=self.seq)
        event.time.FromNanoseconds(int(self.now * 1e9))
        getattr(event, kind).CopyFrom(message)
        self.events.append(event)
        return event

    def spawn(self, agent_id: str, name: str, prompt: str, parent: str = "", mode: int = pb.SPAWN_MODE_ASYNC) -> None:
        info = pb.AgentInfo(
            id=agent_id,
            parent_id=parent,
            name=name,
            mode=pb.SPAWN_MODE_ROOT if not parent else mode,
            status=pb.AGENT_STATUS_RUNNING,
            prompt=prompt,
            model="openai/gpt-4.1",
        )
        self.add(agent_id, "agent_spawned", pb.AgentSpawned(agent=info))

    def run(self, prompt: str, agent_id: str = "main", workspace: str = "/home/dev/src/app") -> None:
        self.add(agent_id, "run_started", pb.RunStarted(prompt=prompt, model="openai/gpt-4.1", workspace=workspace))
        self.add(agent_id, "message", pb.Message(role=pb.ROLE_USER, text=prompt))

    def say(self, text: str, agent_id: str = "main", calls: list[pb.ToolCall] | None = None) -> None:
        self.add(agent_id, "text_delta", pb.TextDelta(text=text))
        usage = pb.Usage(input_tokens=1200 * self.seq, output_tokens=90 * self.seq, cost=0.0004 * self.seq)
        self.add(agent_id, "usage_update", pb.UsageUpdate(call=usage, agent_total=usage, session_total=usage))
        self.add(agent_id, "message", pb.Message(role=pb.ROLE_ASSISTANT, text=text, tool_calls=calls or []))

    def tool(
        self,
        name: str,
        args: dict[str, Any],
        *,
        output: str = "",
        error: str = "",
        agent_id: str = "main",
        streamed: str = "",
        seconds: float = 0.4,
        metadata: dict[str, Any] | None = None,
    ) -> pb.ToolCall:
        call = pb.ToolCall(id=f"call_{self.seq + 1:04d}", name=name, arguments=json.dumps(args))
        self.add(agent_id, "tool_call_started", pb.ToolCallStarted(call=call))
        if streamed:
            self.add(agent_id, "tool_output", pb.ToolOutputChunk(call_id=call.id, text=streamed))
        result = pb.ToolResult(
            call_id=call.id, name=name, output=output, error=error, is_error=bool(error), duration=seconds
        )
        if metadata:
            result.metadata.update(metadata)
        self.add(agent_id, "tool_call_finished", pb.ToolCallFinished(result=result), step=seconds)
        return call

    def finish(self, agent_id: str, status: int, result: str = "", cause: str = "") -> None:
        self.add(
            agent_id, "agent_finished", pb.AgentFinished(agent_id=agent_id, status=status, result=result, cause=cause)
        )


AUTH_DIFF = """--- a/auth.go
+++ b/auth.go
@@ -3,7 +3,7 @@
 // CheckLogin reports whether the user may log in.
 func CheckLogin(user, password string) bool {
 \tif password == "" {
-\t\treturn true
+\t\treturn false
 \t}
 \treturn checkHash(user, password)
 }
"""


def main_view() -> EventLog:
    """A finished run: streamed answer, a failed edit, the recovery with its diff."""
    log = EventLog()
    log.spawn("main", "main", "fix the login check in auth.go")
    log.run("fix the login check in auth.go")
    log.say("I'll look at the login check in `auth.go` first.")
    log.tool("read_file", {"path": "auth.go"}, output="     1\tpackage auth\n     2\t\n     3\t// CheckLogin ...")
    log.say("Empty passwords are accepted. I'll make **CheckLogin** reject them.")
    log.tool(
        "edit_file",
        {"path": "auth.go", "old_text": '    if password == "" {', "new_text": "..."},
        error="old_text not found in auth.go; closest: lines 5-7 (the file indents with tabs where old_text "
        "uses spaces). Re-read the file and copy the exact text.",
        output='auth.go, lines 5-7 as they are now:\n     5\t\tif password == "" {\n'
        "     6\t\t\treturn true\n     7\t\t}",
    )
    log.say("The file uses tabs. Editing the exact lines now.")
    log.tool(
        "edit_file",
        {"path": "auth.go", "old_text": "\t\treturn true", "new_text": "\t\treturn false"},
        output="edited auth.go: replaced 1 occurrence at line 6",
        metadata={"path": "auth.go", "diff": AUTH_DIFF},
    )
    log.say("Done: `CheckLogin` now rejects an empty password.\n\n- edited `auth.go` line 6\n- no other file changed")
    log.add("main", "run_finished", pb.RunFinished(status=pb.RUN_STATUS_FINISHED, text="Done"))
    log.finish("main", pb.AGENT_STATUS_COMPLETED, result="Done")
    return log


def failed_call() -> EventLog:
    """A bash call that printed output, then failed; the model keeps going."""
    log = EventLog()
    log.spawn("main", "main", "run the tests")
    log.run("run the tests")
    log.say("Running the test suite.")
    partial = "".join(f"tests/test_{n}.py::test_case PASSED\n" for n in ("auth", "db", "api", "cli"))
    partial += "tests/test_web.py::test_login \x1b[31mFAILED\x1b[0m [markup]not markup[/markup]\n"
    log.tool(
        "bash",
        {"command": "pytest -x -q"},
        streamed=partial,
        error="exit code 1: 1 failed, 4 passed in 3.2s (the command's output is above)",
        seconds=3.2,
    )
    log.say("One test fails in `test_web.py`; I'll read it.")
    log.add("main", "agent_status", pb.AgentStatusChanged(agent_id="main", status=pb.AGENT_STATUS_RUNNING))
    return log


def subagents_with_inbox() -> EventLog:
    """A parent with three async children: one done, one failed, one cancelled, one still running."""
    log = EventLog()
    log.spawn("main", "main", "review the repository")
    log.run("review the repository")
    log.say("I'll split the review across subagents.")
    for agent_id, name, prompt in (
        ("a1", "tests", "run the test suite and report failures"),
        ("a2", "lint", "run the linters"),
        ("a3", "docs", "check the README against the code"),
        ("a4", "deps", "list outdated dependencies"),
    ):
        log.tool("subagent", {"action": "create", "mode": "async", "name": name, "prompt": prompt}, output=agent_id)
        log.spawn(agent_id, name, prompt, parent="main")
        log.run(prompt, agent_id=agent_id)
    log.add("main", "agent_status", pb.AgentStatusChanged(agent_id="main", status=pb.AGENT_STATUS_WAITING))
    log.tool("bash", {"command": "pytest -q"}, agent_id="a1", output="31 passed in 2.1s", seconds=2.1)
    log.say("All 31 tests pass.", agent_id="a1")
    log.finish("a1", pb.AGENT_STATUS_COMPLETED, result="31 passed")
    inbox = pb.InboxItem(
        kind=pb.INBOX_KIND_COMPLETION,
        child_id="a1",
        child_name="tests",
        status=pb.AGENT_STATUS_COMPLETED,
        result="All 31 tests pass.",
    )
    log.add("main", "inbox_item", inbox)
    log.finish("a2", pb.AGENT_STATUS_FAILED, cause="model call failed: 401 invalid API key")
    inbox = pb.InboxItem(
        kind=pb.INBOX_KIND_COMPLETION,
        child_id="a2",
        child_name="lint",
        status=pb.AGENT_STATUS_FAILED,
        cause="model call failed: 401 invalid API key",
    )
    log.add("main", "inbox_item", inbox)
    log.finish("a3", pb.AGENT_STATUS_CANCELLED, cause="cancelled by the person")
    inbox = pb.InboxItem(
        kind=pb.INBOX_KIND_COMPLETION,
        child_id="a3",
        child_name="docs",
        status=pb.AGENT_STATUS_CANCELLED,
        cause="cancelled by the person",
    )
    log.add("main", "inbox_item", inbox)
    log.tool("web_search", {"query": "latest httpx release"}, agent_id="a4", output="httpx 0.28.1 ...")
    return log
