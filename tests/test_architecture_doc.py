"""docs/ARCHITECTURE.md stays true to the tree: every module listed, no module that is gone, every
enum member of the proto named (as tests/config/test_config.py keeps docs/CONFIG.md true); and
docs/DECISIONS.md stays a log of dated entries."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
DECISIONS = ROOT / "docs" / "DECISIONS.md"
PROTO = ROOT / "proto" / "workbench" / "v1" / "workbench.proto"
TREE_HEADING = "## The tree"
INDENT = 2  # spaces per level in the tree listing


def modules_on_disk() -> set[str]:
    """Every hand-written module and package folder under workbench/, as paths relative to the repo."""
    package = ROOT / "workbench"
    found: set[str] = set()
    for path in package.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[1] == "pb" or path.name == "__init__.py":
            continue
        found.add(relative.as_posix())
    for init in package.rglob("__init__.py"):
        found.add(init.parent.relative_to(ROOT).as_posix() + "/")
    return found


def tree_listing(doc: str) -> set[str]:
    """The paths the tree block of the doc names under `workbench/`, rebuilt from its indentation.

    A listing line is `<indent><name>  <what it does>`; a name ending in `/` opens a folder, one
    ending in `.py` is a module; deeper-indented lines that name neither continue a description.
    """
    section = doc.split(TREE_HEADING, 1)[1]
    block = section.split("```", 2)[1]
    listed: set[str] = set()
    folders: list[str] = []
    inside = False
    for line in block.splitlines():
        name = line.strip().split(" ", 1)[0] if line.strip() else ""
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            inside = name == "workbench/"
            folders = ["workbench"] if inside else []
            if inside:
                listed.add("workbench/")
            continue
        if not inside or not (name.endswith("/") or name.endswith(".py")):
            continue
        depth = indent // INDENT
        folders = folders[:depth]
        path = "/".join([*folders, name.rstrip("/")])
        if name.endswith("/"):
            listed.add(path + "/")
            folders.append(name.rstrip("/"))
        else:
            listed.add(path)
    return listed


def test_every_module_is_in_the_architecture_doc() -> None:
    listed = tree_listing(DOC.read_text(encoding="utf-8"))
    missing = sorted(modules_on_disk() - listed)
    assert not missing, f"docs/ARCHITECTURE.md's tree does not name: {missing}; add each with its job"


def test_the_architecture_doc_names_no_module_that_is_gone() -> None:
    listed = tree_listing(DOC.read_text(encoding="utf-8"))
    gone = sorted(path for path in listed - modules_on_disk() if path != "workbench/pb/")
    assert not gone, f"docs/ARCHITECTURE.md's tree names what is not in workbench/: {gone}"


def test_every_file_the_architecture_doc_names_exists() -> None:
    """A path in backquotes (`tests/engine/test_loop.py`, `tools/files/edit.py`) is a file of the repo
    or of workbench/: a moved or deleted file leaves no stale pointer behind."""
    named = set(re.findall(r"`(\w[\w./-]*/[\w.-]+\.(?:py|md|proto|tcss))", DOC.read_text(encoding="utf-8")))
    assert named, "no paths read from the doc"
    stale = sorted(p for p in named if not (ROOT / p).exists() and not (ROOT / "workbench" / p).exists())
    assert not stale, f"docs/ARCHITECTURE.md names files that do not exist: {stale}"


def test_every_proto_enum_member_is_in_the_architecture_doc() -> None:
    members = re.findall(r"^\s+([A-Z][A-Z0-9_]+)\s*=\s*\d+;", PROTO.read_text(encoding="utf-8"), re.M)
    named = [m for m in members if not m.endswith("_UNSPECIFIED")]
    assert named, "no enum members read from the proto"
    doc = DOC.read_text(encoding="utf-8")
    missing = [member for member in named if not re.search(rf"\b{member}\b", doc)]
    assert not missing, f"docs/ARCHITECTURE.md does not list these enum members of the proto: {missing}"


def test_the_tree_listing_reads_nested_folders() -> None:
    doc = (
        f"{TREE_HEADING}\n\n```\nREADME.md   x\nworkbench/\n  core/     c\n    words.py   w\n"
        "                continued text.py\n  tools/    t\n    files/   f\n      edit.py  e\n"
        "    shell.py  s\ntests/   t\n  x.py\n```\n"
    )
    assert tree_listing(doc) == {
        "workbench/",
        "workbench/core/",
        "workbench/core/words.py",
        "workbench/tools/",
        "workbench/tools/files/",
        "workbench/tools/files/edit.py",
        "workbench/tools/shell.py",
    }


def test_every_decision_is_a_dated_entry() -> None:
    """docs/DECISIONS.md is a log: each entry is `## YYYY-MM-DD — what was decided`."""
    headings = re.findall(r"^## .*$", DECISIONS.read_text(encoding="utf-8"), re.M)
    assert headings, "no entries read from docs/DECISIONS.md"
    undated = [h for h in headings if not re.match(r"## \d{4}-\d{2}-\d{2} — \S", h)]
    assert not undated, f"docs/DECISIONS.md entries without a date: {undated}"


def test_the_readmes_sandbox_promise_says_what_it_does_not_cover() -> None:
    """'Nothing the sandbox writes runs on your machine later' overstated it: the work tree is
    writable, and files in it that the person's own tools run (.envrc, editor tasks, pre-commit's
    config) are what the promise leaves out; the README names them where it makes the promise."""
    readme = (ROOT / "README.md").read_text()
    promise = next(p for p in readme.split("\n\n") if "runs on your machine later" in p)
    assert "outside the work tree" in promise.split("**")[1]
    for named in (".envrc", ".vscode/tasks.json", ".pre-commit-config.yaml"):
        assert named in promise, named
