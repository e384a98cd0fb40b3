"""A tool's JSON schema, read from its signature and docstring: each argument's type hint gives
its JSON type (Literal an enum, `X | None` optional, a default shown), the `Args:` section of the
docstring each argument's description. The `tool` decorator of `tools/registry.py` uses it.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, Literal, get_args, get_origin


def _json_type(hint: Any) -> dict[str, Any]:
    origin = get_origin(hint)
    if origin is Literal:
        values = list(get_args(hint))
        return {"type": "string" if all(isinstance(v, str) for v in values) else "integer", "enum": values}
    if origin in (list, tuple, Iterable) or hint is list:
        (item,) = get_args(hint) or (str,)
        return {"type": "array", "items": _json_type(item)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if hint in simple:
        return {"type": simple[hint]}
    raise TypeError(f"unsupported tool argument type {hint!r}")


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    if get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return hint, False


def _docs(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(fn) or ""
    head, _, args_block = doc.partition("\nArgs:\n")
    params: dict[str, str] = {}
    current = ""
    for line in args_block.splitlines():
        m = re.match(r"\s{0,8}(\w+)\s*(?:\([^)]*\))?:\s*(.*)", line)
        if m and not line.startswith(" " * 9):
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
    return head.strip(), params


def schema_of(fn: Callable[..., Any], names: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A tool function's description (its docstring's head) and the JSON schema of its arguments
    (`ctx` left out); `names`: what its annotations name besides builtins (ToolContext)."""
    hints = typing.get_type_hints(fn, localns=names)
    description, param_docs = _docs(fn)
    properties: dict[str, Any] = {}
    required = []
    for pname, param in inspect.signature(fn).parameters.items():
        if pname == "ctx":
            continue
        hint, optional = _strip_optional(hints[pname])
        prop = _json_type(hint)
        if pname in param_docs:
            prop["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty and not optional:
            required.append(pname)
        elif param.default not in (inspect.Parameter.empty, None):
            prop["default"] = param.default
        properties[pname] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    schema["additionalProperties"] = False
    return description, schema
