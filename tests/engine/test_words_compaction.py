"""The texts of a compaction the model reads, pinned whole (issue 36 item 8): the summary request
(its instructions and the transcript of the older turns, a long item cut head and tail) and the
message that stands for them afterwards. The summary is asked of the scripted server through the
real model client (litellm's HTTP); a change of wording is a reviewed diff
(`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import re

from inline_snapshot import snapshot

from tests.scripted_server import ScriptedModel, reply
from tests.words import transcript
from workbench.engine.compaction import Compactor
from workbench.model.gateway import ModelClient, ModelSpec
from workbench.pb import workbench_pb2 as pb


def conversation() -> list[pb.Message]:
    messages = [pb.Message(role=pb.ROLE_SYSTEM, text="the system prompt")]
    messages.append(pb.Message(role=pb.ROLE_USER, text="Find the port the app uses and change it to 8081."))
    for n, (name, args, output, error) in enumerate(
        [
            ("read_file", '{"path": "app.toml"}', "     1\tport = 8080\n" + "     2\t# filler\n" * 600, ""),
            (
                "edit_file",
                '{"path": "app.toml", "old_text": "port = 80", "new_text": "port = 8081"}',
                "",
                "old_text not found",
            ),
            ("read_file", '{"path": "app.toml", "limit": 1}', "     1\tport = 8080", ""),
        ]
    ):
        call = pb.ToolCall(id=f"c{n}", name=name, arguments=args)
        messages.append(pb.Message(role=pb.ROLE_ASSISTANT, text=f"Step {n}.", tool_calls=[call]))
        result = pb.ToolResult(call_id=call.id, name=name, output=output, error=error, is_error=bool(error))
        messages.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
    messages.append(pb.Message(role=pb.ROLE_ASSISTANT, text="The port is 8080; changing it now."))
    return messages


async def test_the_summary_request_and_the_summary(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("The task: change port 8080 to 8081 in app.toml. The first edit failed."))
    client = ModelClient(ModelSpec("openai/scripted", api_base=scripted_model.url, api_key="k"))
    compactor = Compactor("openai/scripted", lambda request: client.complete(request, []), lambda event: None, 0.8)
    messages = conversation()
    await compactor.compact(messages, "the person asked to compact", [])
    (request,) = scripted_model.requests
    seen = re.sub(
        r"(     2\t# filler\n)+",
        lambda m: f"<{m.group(0).count(chr(10))} filler lines>\n",
        transcript(request["messages"]),
    )
    assert seen == snapshot("""\
[system]
You compact an agent's conversation so it can continue within its context window.
Write a summary that lets the agent carry on without the original messages:
- the person's task and every requirement or preference they stated, quoted where short;
- what has been done: files read, created or changed (with paths), commands run, results;
- errors met and how they were resolved, and anything that did not work;
- facts found that are still needed (names, paths, numbers, decisions);
- what remains to do next.
Be specific and concise. Do not address the person; write notes for the agent.

[user]
The conversation so far:

USER:
Find the port the app uses and change it to 8081.

ASSISTANT:
Step 0.

TOOL CALL read_file {"path": "app.toml"}

TOOL RESULT read_file (ok):
     1	port = 8080
<123 filler lines>
     2	# fill
[... 5618 characters left out ...]

<125 filler lines>

ASSISTANT:
Step 1.

TOOL CALL edit_file {"path": "app.toml", "old_text": "port = 80", "new_text": "port = 8081"}

TOOL RESULT edit_file (error):
Error: old_text not found\
""")
    assert transcript([{"role": "user", "content": messages[1].text}]) == snapshot("""\
[user]
[Earlier conversation, compacted] 5 earlier messages were summarized to fit the context window:

The task: change port 8080 to 8081 in app.toml. The first edit failed.\
""")
