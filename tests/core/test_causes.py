"""The advice after a failed write names the real cause: "Free some space" only for a full disk."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pygit2

from workbench.core.causes import advice
from workbench.session.errors import event_log_failure


def test_free_some_space_only_for_a_full_disk():
    full = [OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), sqlite3.OperationalError("database or disk is full")]
    for err in full:
        assert event_log_failure(Path("/d"), err).endswith("Free some space or choose another --data-dir")
    others = [
        OSError(errno.EMFILE, os.strerror(errno.EMFILE)),
        OSError(errno.EACCES, os.strerror(errno.EACCES)),
        UnicodeEncodeError("utf-8", "caf\udce9", 3, 4, "surrogates not allowed"),
    ]
    for err in others:
        assert "Free some space" not in event_log_failure(Path("/d"), err), err


def test_the_open_file_limit_is_named_with_its_value():
    for err in (OSError(errno.EMFILE, os.strerror(errno.EMFILE)), pygit2.GitError("x: Too many open files")):
        assert "the open-file limit of this process is" in advice(err, "") and "ulimit -n" in advice(err, "")
    assert advice(OSError(errno.ENOENT, "gone"), "free") == ""
