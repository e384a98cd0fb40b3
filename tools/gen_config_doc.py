#!/usr/bin/env python3
"""Regenerate docs/CONFIG.md from the settings' declarations (workbench/config/settings.py) and the CLI's flags.

`--check` fails when the committed file differs from what would be generated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.main import parsers
from workbench.config.load import FIELDS
from workbench.config.report import reference_markdown

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "CONFIG.md"


def setting_flags() -> dict[str, str]:
    """Setting name -> the flag that sets it: every CLI option whose dest is a setting's name."""
    flags: dict[str, str] = {}
    pending = parsers()
    while pending:
        current = pending.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
            elif action.dest in FIELDS and action.option_strings:
                flags.setdefault(action.dest, max(action.option_strings, key=len))
    return flags


def generate() -> str:
    return reference_markdown(setting_flags())


def main() -> int:
    text = generate()
    if "--check" in sys.argv[1:]:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.relative_to(ROOT)} is stale; run tools/gen_config_doc.py", file=sys.stderr)
            return 1
        print("docs/CONFIG.md is fresh")
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
