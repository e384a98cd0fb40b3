"""An MCP server's stderr: copied from a pipe into `stderr.log` in the session's folder, bounded.

A server may write to stderr without end (a crash loop, a debug flag): the log is kept under
LOG_CAP bytes by turning a full `stderr.log` into `stderr.log.1` (replacing the older one), so
one server holds at most twice LOG_CAP on the data disk. The last TAIL_BYTES are also kept in
memory, so the line that says why a server exited is found without reading the log.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from pathlib import Path
from typing import TextIO

LOG_CAP = 1 << 20  # bytes of one log file; the previous one is kept as stderr.log.1
TAIL_BYTES = 8192  # of the server's stderr kept in memory for its last line
CHUNK = 65536


class StderrLog:
    """The write end of a pipe for the server's stderr (`writer`), and a thread that copies what
    arrives into the log, bounded. Close the writer once the server is spawned (`spawned`), so the
    copy ends when the server's last process does."""

    def __init__(self, path: Path, cap: int = LOG_CAP):
        self.path, self.cap = path, cap
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._tail = b""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), name=f"mcp stderr {path}", daemon=True)
        self._thread.start()

    def spawned(self) -> None:
        """The server holds its own copy of the write end: ours is closed."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def last_line(self, wait: float = 0.0) -> str:
        """The last non-empty line the server wrote, after waiting up to `wait` seconds for the
        server's stderr to close (so a server that just exited has had its last words copied)."""
        if wait:
            self._thread.join(wait)
        with self._lock:
            tail = self._tail
        lines = (line.strip() for line in reversed(tail.decode("utf-8", errors="replace").splitlines()))
        return next((line for line in lines if line), "")

    def _copy(self, read_fd: int) -> None:
        out = self._open("ab")  # appended to across restarts
        size = out.tell() if out is not None else 0
        try:
            while chunk := os.read(read_fd, CHUNK):
                with self._lock:
                    self._tail = (self._tail + chunk)[-TAIL_BYTES:]
                if out is not None and size + len(chunk) > self.cap:
                    out.close()
                    with contextlib.suppress(OSError):
                        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                    out, size = self._open("wb"), 0
                if out is None:
                    continue  # the log cannot be written: the pipe is still drained, the tail kept
                try:
                    out.write(chunk)
                    size += len(chunk)
                except OSError:  # the data disk is full: stop writing
                    out.close()
                    out = None
        except OSError:
            pass
        finally:
            os.close(read_fd)
            if out is not None:
                out.close()

    def _open(self, mode: str) -> io.FileIO | None:
        try:
            return io.FileIO(self.path, mode)
        except OSError:
            return None
