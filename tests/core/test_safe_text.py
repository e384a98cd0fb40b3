"""printable: no control or text-reordering character reaches a person's terminal."""

from __future__ import annotations

import os
import unicodedata

import pytest

from workbench.core.safe_text import path_text, printable


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("read\u202efile", "read\\u202efile"),  # right-to-left override
        ("x\u2066y\u2069", "x\\u2066y\\u2069"),  # an isolate
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
        ("tag\U000e0041", "tag\\U000e0041"),
    ],
)
def test_controls_and_format_characters_are_escaped(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_text_people_write_is_kept() -> None:
    kept = "line\n\ttab é ü 日本 עברית \U0001f468\u200d\U0001f469\u200d\U0001f467 می\u200cخواهم"
    assert printable(kept) == kept


def test_no_format_character_but_the_joiners_gets_through() -> None:
    through = [c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Cf" and printable(c) == c]
    assert through == ["\u200c", "\u200d"]


def test_a_file_names_bytes_that_are_not_utf8_are_shown_as_those_bytes():
    name = os.fsdecode(b"caf\xe9/\xff.txt")  # what os.listdir gives for a Latin-1 name
    assert printable(name) == "caf\\xe9/\\xff.txt" and path_text(name) == "caf\\xe9/\\xff.txt"
    assert path_text("café.txt") == "café.txt" and printable("x\ud800") == "x\\ud800"
    path_text(name).encode()  # valid UTF-8: the event log can hold it
