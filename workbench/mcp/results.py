"""An MCP tool's result as the text the model reads (before the one boundary, `feedback.to_result`).

Text blocks are the text; an image or audio block is a note with its type and size (the model
of a text conversation cannot see it); a resource is its text under its URI (a binary one, a
note with its size); a resource link is its URI; structured content is compact JSON, unless a
text block already says the same. An `isError` result becomes Feedback naming the server.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types

from workbench.core.feedback import Feedback


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def block_text(block: Any) -> str:
    """One content block in words."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {_size(block.data):,} bytes: not shown to the model]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "binary"
        return f"[resource {resource.uri}: {mime}, {_size(resource.blob):,} bytes: not shown]"
    if isinstance(block, types.ResourceLink):
        described = f": {block.description}" if block.description else ""
        return f"[resource link {block.uri} ({block.name}){described}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content: not shown]"


def _said_by_text(structured: Any, texts: list[str]) -> bool:
    """Whether a text block already holds the structured content (servers send both, per the spec)."""
    for text in texts:
        try:
            if json.loads(text) == structured:
                return True
        except ValueError:
            pass
        if structured == {"result": text}:  # the SDK's wrapping of a plain return value
            return True
    return False


def result_text(result: types.CallToolResult) -> str:
    """All of a result's content as one text."""
    parts = [block_text(block) for block in result.content]
    structured = result.structured_content
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    if structured is not None and not _said_by_text(structured, texts):
        parts.append(json.dumps(structured, separators=(",", ":"), ensure_ascii=False, default=str))
    return "\n".join(p for p in parts if p)


_ASKS = (("elicitation", "a question to the person (elicitation)"), ("sampling", "a model call (sampling)"))
_ASK_WORDS = {"elicitation": ("elicitation", "elicit"), "sampling": ("sampling", "createmessage", "create_message")}


def refused_request(server: str, tool: str, text: str) -> Feedback | None:
    """Feedback when a failure says the server asked Workbench for sampling or elicitation, which it
    refuses (a server may not make the person's model calls, nor ask the person behind the agent's back)."""
    lowered = text.lower()
    for kind, words in _ASKS:
        if any(w in lowered for w in _ASK_WORDS[kind]):
            return Feedback(
                f"MCP server {server}: tool {tool} needs {words}, which Workbench refuses to MCP servers; "
                f"this tool cannot be used here (the server said: {text.strip()[:300]}). Do the task another way"
            )
    return None


def outcome(server: str, tool: str, result: types.CallToolResult) -> str:
    """The output of a successful call; Feedback for an `isError` result, naming the server."""
    text = result_text(result)
    if not result.is_error:
        return text or "(the tool returned no content)"
    said = text.strip() or "no message"
    if (refused := refused_request(server, tool, said)) is not None:
        raise refused
    raise Feedback(
        f"MCP server {server}: tool {tool} reported an error: {said}. Read it, correct the arguments or "
        "the approach, and call it again only if that can change the outcome"
    )
