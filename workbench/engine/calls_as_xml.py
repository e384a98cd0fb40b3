"""Tool calls a model wrote in an XML style, read for models litellm does not know (small models
write `<read_file path="..." />` in `<tools>` tags; unread, the reply was taken as the answer:
docs/DECISIONS.md).

Forms read, with or without a wrapper such as `<tools>` around them:

    <read_file path="src/auth.py" limit="20"/>            the tag is an offered tool, attributes its arguments
    <read_file><path>src/auth.py</path></read_file>        or child elements
    <tool name="read_file"><parameter name="path">src/auth.py</parameter></tool>
    <function=read_file><parameter=path>src/auth.py</parameter></function>
    <function name="read_file" arguments='{"path": "src/auth.py"}'/>   a JSON object as the arguments

An `arguments` (or `args`, `parameters`, `input`) attribute that holds a JSON object is the call's
arguments, in either quotes, its own quotes raw or HTML-escaped (a 1.5B model wrote edits this way:
read as one argument named `arguments`, every call failed; docs/DECISIONS.md).
Values are text; each is made the type the tool's schema gives its argument ("20" -> 20).
A tag that names an offered tool but cannot be read is returned as unreadable, never left in
an answer. Pure functions: no I/O, no state.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import json5

from workbench.engine.call_help import Schema

WRAPPERS = ("tool", "tool_call", "invoke", "function", "call", "use_tool", "tool_use")
CODE_WORDS = ("function", "call")  # wrappers that name a call only when they name an offered tool
RESULT_NAMES = r"result|tool_result|tool_response|function_results?|output|response|observation"  # a result's tag
RESULT_TAGS = re.compile(rf"<({RESULT_NAMES})\b[^>]*>", re.IGNORECASE)
_ATTRS = r"(?:\s+[\w.:-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*"
_OPEN = re.compile(rf"<(?P<tag>[A-Za-z_][\w.-]*)(?P<attrs>{_ATTRS})\s*(?P<slash>/?)>")
_ATTR = re.compile(r"([\w.:-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_FUNCTION_EQ = re.compile(r"<function=(?P<name>[\w.-]+)>(?P<body>.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER_EQ = re.compile(r"<parameter=(?P<key>[\w.-]+)>(?P<value>.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter\s+name\s*=\s*[\"']([\w.-]+)[\"']\s*>(.*?)</parameter>", re.DOTALL)
_CHILD = re.compile(r"<([A-Za-z_][\w.-]*)\s*>(.*?)</\1\s*>", re.DOTALL)
# an attribute whose value is a JSON object, its inner quotes raw: arguments="{"path": "a.py"}"
_JSON_VALUE = re.compile(r"(\b[\w.:-]+\s*=\s*)([\"'])(\{.*?\})\2(?=\s*/?>|\s+[\w.:-]+\s*=)", re.DOTALL)
_MASKS = {'"': "\x01", "'": "\x02"}  # the same length: positions in the masked text are those of the text
ARGUMENT_ATTRS = ("arguments", "args", "parameters", "input")


@dataclass(frozen=True)
class XmlCall:
    """A call found in XML style: `arguments` None when its body could not be read."""

    start: int
    end: int
    name: str
    arguments: dict[str, Any] | None


def xml_calls(text: str, offered: Collection[str], schemas: Mapping[str, Schema]) -> list[XmlCall]:
    """The XML-style calls in `text`, in order, to offered tools or through a wrapper naming one."""
    found: list[XmlCall] = []
    for match in _FUNCTION_EQ.finditer(text):
        params = {m.group("key"): _trim(m.group("value")) for m in _PARAMETER_EQ.finditer(match.group("body"))}
        found.append(XmlCall(match.start(), match.end(), match.group("name"), params))
    taken = [(c.start, c.end) for c in found]
    for match in _OPEN.finditer(_masked(text)):
        if any(s <= match.start() < e for s, e in taken):
            continue
        tag, attrs = match.group("tag"), _attributes(match.group("attrs"))
        if tag in offered:
            name = tag
        elif tag.lower() in WRAPPERS and isinstance(attrs.get("name"), str):
            name = attrs.pop("name")
            if name not in offered and tag.lower() in CODE_WORDS:
                continue  # <function name="parse"> in a piece of code, not a call
        else:
            continue
        end, body = match.end(), ""
        if not match.group("slash"):
            close = re.search(rf"</{re.escape(tag)}\s*>", text[match.end() :])
            if close is not None:
                body = text[match.end() : match.end() + close.start()]
                end = match.end() + close.end()
        from_attr, from_body = _json_attribute(attrs), _body_arguments(body)
        arguments = None if from_body is None or from_attr is None else {**attrs, **from_attr, **from_body}
        found.append(XmlCall(match.start(), end, name, arguments))
        taken.append((match.start(), end))
    found.sort(key=lambda c: c.start)
    return [
        XmlCall(c.start, c.end, c.name, None if c.arguments is None else typed(c.arguments, schemas.get(c.name)))
        for c in found
    ]


def _masked(text: str) -> str:
    """`text` with the quotes inside a JSON-object attribute value masked, so the value reads as one."""

    def mask(match: re.Match[str]) -> str:
        inner = match.group(3)
        for quote, masked in _MASKS.items():
            inner = inner.replace(quote, masked)
        return match.group(1) + match.group(2) + inner + match.group(2)

    return _JSON_VALUE.sub(mask, text) if "{" in text else text


def _unmasked(value: str) -> str:
    for quote, masked in _MASKS.items():
        value = value.replace(masked, quote)
    return value


def _attributes(text: str) -> dict[str, Any]:
    return {
        m.group(1): html.unescape(_unmasked(m.group(2) if m.group(2) is not None else m.group(3)))
        for m in _ATTR.finditer(text)
    }


def _json_attribute(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments an `arguments`-like attribute holds as a JSON object, taken out of `attrs`;
    {} when there is none, None when it cannot be read as an object."""
    key = next((k for k in ARGUMENT_ATTRS if isinstance(attrs.get(k), str) and attrs[k].lstrip().startswith("{")), "")
    if not key:
        return {}
    try:
        value = json5.loads(attrs.pop(key))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _trim(value: str) -> str:
    """A value written between tags, without the one newline that opens and closes it."""
    return value.removeprefix("\n").removesuffix("\n")


def _body_arguments(body: str) -> dict[str, Any] | None:
    """The arguments a call's body holds: none, a JSON object, <parameter name="k"> or <k> children."""
    stripped = body.strip()
    if not stripped:
        return {}
    if stripped.startswith("{"):
        try:
            value = json5.loads(stripped)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None
    params = {k: _trim(v) for k, v in _PARAMETER.findall(stripped)}
    if params:
        return params
    children = {k: _trim(v) for k, v in _CHILD.findall(stripped)}
    if "arguments" in children and children["arguments"].strip().startswith("{"):
        return _body_arguments(children["arguments"])
    return children or None


def typed(arguments: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    """Text values made the type the schema gives them ("20" -> 20, "true" -> True, "[1]" -> [1])."""
    properties: Mapping[str, Any] = (schema or {}).get("properties", {})
    return {
        k: _typed(v, properties.get(k, {}).get("type", "")) if isinstance(v, str) else v for k, v in arguments.items()
    }


def _typed(value: str, kind: str) -> Any:
    text = value.strip()
    if kind == "integer" and re.fullmatch(r"-?\d+", text):
        return int(text)
    if kind == "number" and re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text):
        return float(text)
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind in ("array", "object") and text[:1] in "[{":
        try:
            return json.loads(text)
        except ValueError:
            try:
                return json5.loads(text)
            except (ValueError, RecursionError):
                return value
    return value


__all__ = ["RESULT_NAMES", "RESULT_TAGS", "XmlCall", "typed", "xml_calls"]
