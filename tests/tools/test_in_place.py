"""Which files a bash command line edits in place (workbench/tools/in_place.py): sed -i and perl -i
with their option forms, a `cd` before them, nothing outside the workspace, nothing built at run
time. The note on a real run is pinned in test_words_shell.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.tools.in_place import digests, edits, only_edits, unchanged


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("sed -i 's/timeout = 120/timeout = 30/' net.toml", ["net.toml"]),
        ("sed -E -i.bak -e 's/a/b/' net.toml b.txt", ["net.toml", "b.txt"]),
        ("sed --in-place=.bak --expression=s/a/b/ net.toml", ["net.toml"]),
        ("sed -ie 's/a/b/' net.toml", ["net.toml"]),  # -i with the backup suffix "e": the script is an operand
        ("sed -i -f fix.sed net.toml", ["net.toml"]),
        ("perl -pi -e 's/x/y/' net.toml", ["net.toml"]),
        ("perl -i.orig -pe 's/x/y/' net.toml", ["net.toml"]),
        ("cd sub && sed -i s/a/b/ ../net.toml", ["../net.toml"]),
        ("sudo sed -i s/a/b/ net.toml", []),  # under a wrapper: opaque, as the guard reads it
        ("sed 's/a/b/' net.toml > out.toml", []),  # not in place
        ("sed -i s/a/b/ /etc/hosts", []),  # outside the workspace
        ('sed -i "$(cat fix)" net.toml', []),  # words made at run time
        ("grep -i timeout net.toml", []),
    ],
)
def test_the_files_edited_in_place(command: str, files: list[str], tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert [edit.shown for edit in edits(command, tmp_path, tmp_path)] == files


def test_unchanged_is_by_content(tmp_path: Path) -> None:
    target = tmp_path / "net.toml"
    target.write_text("timeout = 5\n")
    found = edits("sed -i s/x/y/ net.toml missing.toml", tmp_path, tmp_path)
    before = digests(found)
    target.write_text("timeout = 5\n")  # rewritten with the same text, as sed -i does
    assert [e.shown for e in unchanged(found, before)] == ["net.toml"]  # a missing file is never "unchanged"
    target.write_text("timeout = 30\n")
    assert unchanged(found, before) == []


def test_a_line_made_only_of_in_place_edits() -> None:
    assert only_edits("sed -i s/a/b/ net.toml")
    assert only_edits("cd conf && perl -pi -e 's/a/b/' net.toml")
    assert not only_edits("sed -i s/a/b/ net.toml && cat net.toml")  # more than edits: not judged
    assert not only_edits("sed s/a/b/ net.toml")
    assert not only_edits('sed -i "$(cat fix)" net.toml')
