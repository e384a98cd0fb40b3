"""printable: no control or text-reordering character reaches a person's terminal."""

from __future__ import annotations

import unicodedata

import pytest

from workbench.core.safe_text import printable


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
