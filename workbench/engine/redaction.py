"""Secrets kept out of the event log: every string field of an event, nested ones too, has each
secret replaced by "[redacted]" before the store writes it (`Store.secrets`)."""

from __future__ import annotations

from google.protobuf.message import Message


def redact(message: Message, secrets: list[bytes]) -> None:
    """Replace every secret in the string fields of `message`, recursively."""
    words = [s.decode("utf-8", "replace") for s in secrets]
    for field, value in message.ListFields():
        if field.type == field.TYPE_STRING:
            if field.is_repeated:
                values = list(value)
                del value[:]
                value.extend(_redacted(v, words) for v in values)
            else:
                setattr(message, field.name, _redacted(value, words))
        elif field.type == field.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry:
                continue
            items = value if field.is_repeated else [value]
            for item in items:
                if isinstance(item, Message):
                    redact(item, secrets)


def _redacted(text: str, words: list[str]) -> str:
    for word in words:
        if word:
            text = text.replace(word, "[redacted]")
    return text
