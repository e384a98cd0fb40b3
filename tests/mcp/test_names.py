"""Exposed tool names: valid for every provider, unique, every change reported."""

from __future__ import annotations

import re

from workbench.mcp.names import MAX_NAME, exposed_name, exposed_names

VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_names_are_valid_for_every_provider() -> None:
    assert exposed_name("github", "create_issue") == "github__create_issue"
    for tool in ("files/read.v2", "émoji✓", "x" * 200, ""):
        assert VALID.fullmatch(exposed_name("srv", tool))
    long_a, long_b = exposed_name("srv", "a" * 100 + "1"), exposed_name("srv", "a" * 100 + "2")
    assert len(long_a) == MAX_NAME and long_a != long_b


def test_collisions_are_resolved_and_reported() -> None:
    names, notes = exposed_names("srv", ["read.file", "read_file", "ok"], set())
    assert len(set(names.values())) == 3 and names["ok"] == "srv__ok"
    assert all(VALID.fullmatch(n) for n in names.values())
    assert any("read_file" in n and "collided" in n for n in notes) and any("read.file" in n for n in notes)
    taken, notes = exposed_names("srv", ["ok"], {"srv__ok"})
    assert taken["ok"] != "srv__ok" and "collided" in notes[0]
