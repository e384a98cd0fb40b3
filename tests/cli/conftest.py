"""`mode`: a test of `workbench run` parametrized over in-process and engine-hosted runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_modes import MODES, stop_engine


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, ...]]:
    """The run's engine flags; an engine case stops the engine of every data folder under tmp_path."""
    yield request.param
    for log in tmp_path.glob("**/engine.log"):
        stop_engine(log.parent)
