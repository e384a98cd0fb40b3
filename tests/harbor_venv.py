"""Harbor's own Python (Harbor needs 3.12 or newer; Workbench's venv may be 3.11): `.venv-harbor` at the
repository root, made by .ci/run (`tools/harbor_venv.sh`), or the one WORKBENCH_HARBOR_PYTHON names.
Without it a test skips saying how to make it, except in CI, where it fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def harbor_python() -> Path:
    named = os.environ.get("WORKBENCH_HARBOR_PYTHON")
    path = Path(named) if named else ROOT / ".venv-harbor" / "bin" / "python"
    if path.exists():
        return path
    why = f"Harbor's venv is missing ({path}): make it with `bash tools/harbor_venv.sh`"
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)
