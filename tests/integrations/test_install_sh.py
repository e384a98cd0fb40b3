"""The Harbor agent's install script in an environment that lacks what Workbench needs and has no
package manager to get it: a clear error and exit 2 (the trial then fails at setup with that text),
never a hang. A real bash with an empty PATH."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.harbor_venv import ROOT

INSTALL_SH = ROOT / "integrations" / "harbor" / "workbench_harbor" / "install.sh"


def test_no_python_no_tmux_and_no_package_manager_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = subprocess.run(
        ["/bin/bash", str(INSTALL_SH), str(tmp_path / "workbench.whl"), str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(empty)},
    )
    assert done.returncode == 2, done.stderr
    assert "tmux bubblewrap python3 python3-venv missing and no package manager" in done.stderr
    assert not (tmp_path / "venv").exists()
