"""Why a search found nothing: where the workspace's files of the kind it looked for are.

A grep whose `glob` or `path` matched no file, a glob that matched nothing, an ls of an empty
folder: each is an error result that names what matched nothing, how many files of that kind
the workspace has and where, and the call that finds them (told only "no matches", a model
answers that nothing is there: docs/DECISIONS.md). The results are also marked `empty`, so
the closing line after them says the search found nothing and why (text_calls).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.arguments import shorten
from workbench.tools.files.paths import NO_SIMILAR, allowed, missing_message, workspace_root
from workbench.tools.files.walk import WalkStats, glob_regex, ignore_for, walk
from workbench.tools.registry import ToolContext

SCAN = 50_000  # files walked to say where the files of a kind are
SHOWN = 8  # paths named; the rest are counted
KINDS_SHOWN = 5  # file kinds named when the workspace has none of the one looked for


def count_of(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def place(where: str) -> str:
    return "the workspace" if where == "." else where


@dataclass(frozen=True)
class Kind:
    """What files a glob looks for: its last part as a name glob ('*.py'), said in words."""

    pattern: str
    many: str  # ".py files"
    one: str  # ".py file"


ANY_FILE = Kind("*", "files", "file")


def kind_of(glob: str) -> Kind:
    """'src/**/*.py' -> .py files; 'test_*' -> files named 'test_*'; '' or '**' -> files."""
    last = glob.strip().rstrip("/").rsplit("/", 1)[-1]
    if last in ("", "*", "**"):
        return ANY_FILE
    ext = re.fullmatch(r"\*(\.[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*)", last)
    if ext:
        return Kind(last, f"{ext.group(1)} files", f"{ext.group(1)} file")
    return Kind(last, f"files named {shorten(last)}", f"file named {shorten(last)}")


def workspace_files(ctx: ToolContext, base: Path) -> list[str]:
    """The files below `base` a search sees (.git, ignored ones and symlinks leading outside
    left out), sorted; at most SCAN."""
    found = []
    for rel, _ in walk(base, "", ignore_for(base, ""), WalkStats(), allowed=allowed(ctx)):
        found.append(rel)
        if len(found) >= SCAN:
            break
    return sorted(found)


def of_kind(files: list[str], kind: Kind) -> list[str]:
    try:
        matcher = glob_regex(kind.pattern)
    except re.error:
        return []
    return [f for f in files if matcher.match(f.rsplit("/", 1)[-1])]


def where(paths: list[str]) -> str:
    """'at the top level: app.py, main.py', 'in config/: a.toml', 'at the top level and in 2 folders: ...'."""
    folders = {p.rsplit("/", 1)[0] if "/" in p else "" for p in paths}
    named = ", ".join(paths[:SHOWN]) + (f" and {len(paths) - SHOWN:,} more" if len(paths) > SHOWN else "")
    below = sorted(folders - {""})
    inside = f"{below[0]}/" if len(below) == 1 else f"{len(below)} folders"
    if not below:
        return f"at the top level: {named}"
    return f"{'at the top level and ' if '' in folders else ''}in {inside}: {named}"


def kinds(files: list[str]) -> str:
    """'3 .go files, 1 .md file, 1 file without an extension': what the workspace holds."""
    counts = Counter(
        ("." + name.rsplit(".", 1)[1]) if "." in name.lstrip(".") else ""
        for name in (f.rsplit("/", 1)[-1] for f in files)
    )
    parts = [
        count_of(n, f"{ext} file") if ext else count_of(n, "file without an extension", "files without an extension")
        for ext, n in counts.most_common(KINDS_SHOWN)
    ]
    more = len(counts) - KINDS_SHOWN
    return ", ".join(parts) + (f" and {more} other kinds" if more > 0 else "")


def whereabouts(files: list[str], kind: Kind, prefix: str = "", *, named: bool = True) -> tuple[str, list[str]]:
    """What the workspace holds of `kind`: ("the workspace's 2 .py files are at the top level:
    app.py, main.py", those files), or ("the workspace has no .py file ...; it holds ...", []).
    Without `named` (the caller said the kind already) the second is only what it holds."""
    matching = [prefix + f for f in of_kind(files, kind)]
    if matching:
        return f"the workspace's {count_of(len(matching), kind.one, kind.many)} {_are(matching)} {where(matching)}", (
            matching
        )
    if not files:
        return "the workspace holds no file at all", []
    if not named:
        return f"the workspace holds {kinds(files)}", []
    return f"the workspace has no {kind.one} (ignored ones left out); it holds {kinds(files)}", []


def _are(paths: list[str]) -> str:
    return "is" if len(paths) == 1 else "are"


def retry_hint(ctx: ToolContext, **changed: str) -> str:
    """'; to search them, send grep(pattern="x", glob="*.py")': the call with `changed`, when the
    call is known and the change is one (nothing when it would send the same call again)."""
    if not ctx.call_name or all(ctx.call_args.get(k, v if k != "path" else ".") == v for k, v in changed.items()):
        return ""
    return f"; to find them, send {ctx.call_with(**changed)}"


def nothing_found(message: str, why: str) -> Feedback:
    """The error of a search that found nothing for a cause: marked `empty`, `why_empty` the cause
    in a clause (the closing line after it says it: text_calls.closing_line)."""
    return Feedback(message, metadata={"empty": True, "why_empty": why})


def paths_found(text: str) -> pb.ToolResult:
    """A result that lists paths (ls, glob): marked `discovery`, so the closing line after it says
    to read a file before answering about what it holds (text_calls.closing_line)."""
    result = pb.ToolResult(output=text)
    result.metadata["discovery"] = True
    return result


def filter_missed(ctx: ToolContext, base: Path, prefix: str, lead: str, glob: str, *, everywhere: bool) -> str:
    """The error of a search whose filter matched no file: `lead` says which ("the glob
    'src/*.py' matched no file in the workspace"), then where the files of its kind are and the
    call that finds them. `everywhere`: the search covered the whole workspace."""
    kind = kind_of(glob)
    said = everywhere and kind.pattern == glob.strip()  # "the glob '*.rs' matched no file in the workspace"
    about, matching = whereabouts(workspace_files(ctx, base), kind, prefix, named=not said)
    message = f"{lead}; {about}"
    if matching:
        changed = {"path": "."} if ctx.call_args.get("path", ".") not in (".", "") else {}
        if glob:
            changed["pattern" if ctx.call_name == "glob" else "glob"] = kind.pattern
        message += retry_hint(ctx, **changed)
    return message


def missing_place(ctx: ToolContext, target: Path, given: str, looked_for: str = "") -> Feedback:
    """A path to search or list (grep's, glob's, ls's) that does not exist and resembles nothing:
    where the workspace's files of the kind looked for (`looked_for`, a glob) are, and the call on
    the whole workspace (told "use glob or ls", a model listed the missing folder again until the
    loop stop: docs/DECISIONS.md). With a similar name, the did-you-mean as for any missing path."""
    message = missing_message(ctx, target, given)
    if not message.endswith(NO_SIMILAR):
        return Feedback(message)
    about, matching = whereabouts(workspace_files(ctx, workspace_root(ctx)), kind_of(looked_for))
    message = message.removesuffix(NO_SIMILAR) + f"; nothing with a similar name exists; {about}"
    if matching and ctx.call_name in ("grep", "glob"):
        message += retry_hint(ctx, path=".")
    elif matching and ctx.call_name == "ls":
        message += retry_hint(ctx, path=".").replace("to find them", "to list the top level")
    return Feedback(message)


__all__ = [
    "ANY_FILE",
    "Kind",
    "count_of",
    "filter_missed",
    "kind_of",
    "kinds",
    "missing_place",
    "nothing_found",
    "paths_found",
    "place",
    "where",
    "whereabouts",
    "workspace_files",
]
