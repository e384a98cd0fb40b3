"""`data`: a test's own data folder, so an engine of its own, stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_modes import stop_engine


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    yield folder
    stop_engine(folder)
