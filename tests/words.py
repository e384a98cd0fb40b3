"""Helpers of the tests that pin the texts the model reads (tests/**/test_words_*.py).

Each of those tests makes a text the way the product makes it (a real tool call on a real workspace,
the engine's own function) and compares the whole text with an inline-snapshot `snapshot("...")`: a
change of wording is then a reviewed diff (`pytest --inline-snapshot=review`, README "Run the tests").
What varies between runs (the temporary folders) is replaced by a fixed placeholder first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext


def steady(text: str, *places: tuple[Path | str, str]) -> str:
    """`text` with each folder of `places` ((path, placeholder) pairs) written as its placeholder,
    the longest path first (a workspace inside tmp_path is `<ws>`, not `<tmp>/ws`)."""
    for path, mark in sorted(places, key=lambda p: -len(str(p[0]))):
        text = text.replace(str(path), mark)
    return text


def tool_ctx(workspace: Path, tmp_path: Path, **settings: Any) -> ToolContext:
    """A tool's context on `workspace`, its session folder and data under `tmp_path`."""
    return ToolContext(
        workspace=workspace,
        settings=Settings(workspace=workspace, data_dir=tmp_path / "data", **settings),
        session_dir=tmp_path / "session",
    )


async def said(box: Toolbox, ctx: ToolContext, name: str, arguments: dict[str, Any] | str = "") -> str:
    """What the model reads back for its call of `name` with `arguments` (a dict, or the raw text it
    sent), the temporary folders written `<ws>` (the workspace) and `<tmp>` (the rest)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    result = await box.invoke(pb.ToolCall(id="c1", name=name, arguments=raw), ctx)
    return steady(model_text(result), (ctx.workspace, "<ws>"), (ctx.session_dir.parent, "<tmp>"))


def transcript(wire: list[dict[str, Any]]) -> str:
    """Wire messages (gateway.messages_to_wire, or a request the scripted model got) as the model
    reads them, one `[role]` header each; a tool call as `[assistant calls] name {arguments}`."""
    parts = []
    for m in wire:
        if m.get("content"):
            parts.append(f"[{m['role']}]\n{m['content']}")
        for c in m.get("tool_calls") or []:
            parts.append(f"[{m['role']} calls] {c['function']['name']} {c['function']['arguments']}")
    return "\n\n".join(parts)
