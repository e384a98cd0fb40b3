"""The engine's fork server leaves nothing for a session process to import or build on its
first turn (issue 32's warm start): litellm's first call's pydantic models built, the
checkpointer (pygit2) and the built-in tools imported. Each was ~0.1-0.25 s of every hosted
session's start to its first model request before."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # imports litellm

CHECK = """
import importlib, sys
import workbench.service.warm as warm
from workbench.tools.registry import BUILTIN_MODULES
cold = [n for n in warm.FIRST_CALL_MODELS
        if not getattr(importlib.import_module(n.split(':')[0]), n.split(':')[1]).__pydantic_complete__]
cold += [m for m in ('pygit2', 'workbench.checkpoints.checkpointer',
                     *(f'workbench.tools.{b}' for b in BUILTIN_MODULES)) if m not in sys.modules]
print(cold)
"""


def test_the_fork_servers_preload_leaves_the_first_turn_nothing_to_import_or_build() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
