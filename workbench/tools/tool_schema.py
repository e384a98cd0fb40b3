"""A tool's one declaration, its signature and docstring, made into a pydantic model of its
arguments (`declare`): the type hints give the types (Literal an enum, `X | None` optional), the
defaults the defaults, the docstring's `Args:` section each argument's description. Pydantic
derives from that model both the JSON schema the model is shown (`Declared.schema`) and the check
of a call's arguments (`tools/arguments.validate`). The `tool` decorator of `tools/registry.py`
uses it.

The schema is written in the house style the models have always been shown: no titles, an
optional argument as its type alone (no `anyOf` with null, no null default), keys in the order
type, enum/items, description, default, and `required` even when empty. The check is strict but
for what models send loosely: a whole float for an integer (2.0), null for an optional argument.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WrapValidator, create_model
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


def _whole_float_to_int(value: Any) -> Any:
    """2.0 -> 2 for an integer argument (models write numbers as floats); 2.5 stays, and fails."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _int_stays_int(value: Any, handler: core_schema.ValidatorFunctionWrapHandler) -> Any:
    """A number argument given an int keeps it (pydantic would make 3 into 3.0)."""
    return value if type(value) is int else handler(value)


def _lenient(hint: Any) -> Any:
    """`hint` with the loose readings above: int takes a whole float, float keeps an int."""
    if hint is int:
        return Annotated[int, BeforeValidator(_whole_float_to_int)]
    if hint is float:
        return Annotated[float, WrapValidator(_int_stays_int)]
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_lenient(a) for a in args)]  # noqa: UP007 (built from a tuple)
    if origin is list and args:
        return list[_lenient(args[0])]  # type: ignore[misc]
    return hint


def _optional(hint: Any) -> bool:
    return get_origin(hint) in (typing.Union, types.UnionType) and type(None) in get_args(hint)


def _docs(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """A docstring's head, and its `Args:` section as {argument: description} (continued lines joined)."""
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


# the order of a schema's keys: the object's type, properties, required, additionalProperties;
# an argument's type, enum or items, description, default
_KEY_ORDER = {"type": 0, "properties": 1, "enum": 1, "items": 1, "required": 2, "description": 3, "default": 4}


class _HouseStyle(GenerateJsonSchema):
    """Pydantic's JSON schema in the style the models are shown (see the module's docstring)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        json_schema.pop("title", None)
        json_schema.setdefault("required", [])
        return json_schema

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        json_schema = super().literal_schema(schema)
        if "const" in json_schema:  # one value: an enum of one, as for more
            json_schema["enum"] = [json_schema.pop("const")]
        return json_schema

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if schema.get("default") is None:
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return _ordered(value)


def _ordered(value: Any, by_name: bool = False) -> Any:
    """A schema's keys in `_KEY_ORDER` (unknown keys last), the arguments in declaration order."""
    if not isinstance(value, dict):
        return value
    keys = list(value) if by_name else sorted(value, key=lambda k: _KEY_ORDER.get(k, 9))
    return {k: _ordered(value[k], by_name=k == "properties" and not by_name) for k in keys}


@dataclass(frozen=True)
class Declared:
    """What a tool's declaration gives: its description, the model of its arguments, its JSON schema."""

    description: str
    arguments: type[BaseModel]
    schema: dict[str, Any]


def declare(fn: Callable[..., Any], names: dict[str, Any], hints: dict[str, Any] | None = None) -> Declared:
    """A tool function's description (its docstring's head), the pydantic model of its arguments
    (`ctx` left out) and their JSON schema. `names`: what its annotations name besides builtins
    (ToolContext); `hints`: types that replace the annotations' (an enum known only at run time)."""
    annotations = {**typing.get_type_hints(fn, localns=names), **(hints or {})}
    description, param_docs = _docs(fn)
    fields: dict[str, Any] = {}
    for pname, param in inspect.signature(fn).parameters.items():
        if pname == "ctx":
            continue
        hint = annotations[pname]
        default = param.default
        if default is inspect.Parameter.empty:
            default = None if _optional(hint) else ...
        fields[pname] = (_lenient(hint), Field(default, description=param_docs.get(pname)))
    config = ConfigDict(extra="forbid", strict=True)
    arguments = create_model(f"{fn.__name__}_arguments", __config__=config, **fields)
    return Declared(description, arguments, arguments.model_json_schema(schema_generator=_HouseStyle))
