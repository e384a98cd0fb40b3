"""The fast subset stays honest: in a run that leaves out `tmux` tests, a test that starts a tmux
server without the mark fails and names the mark (tests/conftest.py); the full run checks nothing."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

# The guard of tests/conftest.py, over a start_server that starts nothing (no tmux here, and this
# run's own guard is not reached). pytest sets up a conftest's autouse fixtures in name order:
# `_a_server_...` is in place before the guard wraps it.
INNER_CONFTEST = """
import pytest

import workbench.terminal.server_lifecycle as lifecycle
from tests.conftest import _unmarked_tmux_fails_the_fast_subset  # noqa: F401


@pytest.fixture(autouse=True)
def _a_server_that_starts_nothing(monkeypatch):
    async def start_server(*args, **kwargs):
        pass

    monkeypatch.setattr(lifecycle, "start_server", start_server)
"""

PROBE = """
import pytest

import workbench.terminal.server_lifecycle as lifecycle


async def test_unmarked_starts_a_server():
    await lifecycle.start_server(["tmux"], {})  # what TerminalHost.launch_server calls


@pytest.mark.tmux
async def test_marked_starts_a_server():
    await lifecycle.start_server(["tmux"], {})


async def test_starts_nothing():
    pass
"""


# an inner session shares this process: no cache, and no snapshot report (its plugin keeps one
# temporary folder for the whole process and removes it when a session ends)
QUIET = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot")


@pytest.fixture
def probe(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    tmux: x\n    sandbox: x\n"
    )
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(test_probe=PROBE)
    return pytester


def test_an_unmarked_test_that_starts_tmux_fails_the_fast_subset(probe: pytest.Pytester) -> None:
    result = probe.runpytest_inprocess("-m", "not tmux and not sandbox", *QUIET)
    result.assert_outcomes(passed=2, errors=1, deselected=1)
    result.stdout.fnmatch_lines(["*test_unmarked_starts_a_server starts a tmux server: mark it @pytest.mark.tmux*"])


def test_the_full_run_checks_nothing(probe: pytest.Pytester) -> None:
    probe.runpytest_inprocess(*QUIET).assert_outcomes(passed=3)
