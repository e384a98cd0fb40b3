"""Command not found (exit 127): which executables on PATH the model may have meant."""

from __future__ import annotations

import difflib
import os
import re
from functools import lru_cache

NOT_FOUND = re.compile(r"^(?:\S*bash: )?(?:line \d+: )?([^\s:/]+): command not found\s*$", re.MULTILINE)


def missing_command(output: str) -> str:
    """The name bash could not find, from its message in the output ("" when none)."""
    found = NOT_FOUND.findall(output)
    return found[-1] if found else ""


@lru_cache(maxsize=8)
def _executables(path: str, stamps: tuple[float, ...]) -> frozenset[str]:
    names = set()
    for folder in path.split(os.pathsep):
        try:
            entries = list(os.scandir(folder or "."))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_file() and os.access(entry.path, os.X_OK):
                    names.add(entry.name)
            except OSError:
                continue
    return frozenset(names)


def executables(path: str) -> frozenset[str]:
    """The names of the executables on `path` (cached until a folder on it changes)."""
    stamps = []
    for folder in path.split(os.pathsep):
        try:
            stamps.append(os.stat(folder or ".").st_mtime)
        except OSError:
            stamps.append(0.0)
    return _executables(path, tuple(stamps))


def close_commands(name: str, path: str | None = None) -> list[str]:
    """Executables on PATH whose names are close to `name`, closest first (at most 3)."""
    if not name:
        return []
    names = executables(os.environ.get("PATH", os.defpath) if path is None else path)
    others = names - {name}
    swapped = sorted(n for n in others if sorted(n) == sorted(name))  # letters in another order: "gti"
    cutoff = 0.6 if len(name) <= 4 else 0.75  # one swap in a short name scores 0.67
    close = difflib.get_close_matches(name, others, n=3, cutoff=cutoff)
    return [*swapped, *(n for n in close if n not in swapped)][:3]
