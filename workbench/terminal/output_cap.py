"""A tool's output within bounds, however much there is: `CappedOutput`.

Text goes in as it comes (`add`); memory stays about the model's view (`limit` characters)
whatever the total. What comes out:
- the model's view: the whole text when it fits `limit`, else its head and tail with a note;
- output events (`publish`) up to `event_cap` bytes per call, then one note, and at the end a
  summary of what was not streamed;
- a saved copy of the whole output when it is cut for the model, up to `saved_cap` bytes,
  with a note at its end when the copy stops short.
A limit of 0 means no limit. The registry's `limit_output` and the bash tool both use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from workbench.terminal.sandbox import open_untrusted

_LIBC = ctypes.CDLL(None, use_errno=True)
_PUNCH_HOLE = 0x01 | 0x02  # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE
_BLOCK = 1 << 16


def release_head(fd: int, upto: int, start: int = 0) -> int:
    """Give the file's bytes from `start` to `upto` back to the filesystem (a hole: offsets and
    size stay, those bytes read as zeros). Returns where the released part now ends (`start`
    where holes are not supported)."""
    upto -= upto % _BLOCK
    if upto <= start:
        return start
    if _LIBC.fallocate(fd, _PUNCH_HOLE, ctypes.c_int64(start), ctypes.c_int64(upto - start)) != 0:
        return start
    return upto


def release_all_but_tail(path: os.PathLike[str] | str, keep: int) -> None:
    """Release all but the last `keep` bytes of a file another process may still be writing."""
    try:
        fd = open_untrusted(path, os.O_RDWR)  # never through a link a command put there
    except OSError:
        return
    try:
        release_head(fd, os.fstat(fd).st_size - keep)
    finally:
        os.close(fd)


async def keep_tails(files: Callable[[], list[Path]], keep: int, every: float) -> None:
    """Every `every` seconds, release all but the last `keep` bytes of each file `files()` names
    that holds more than twice that on disk; end when it names none."""
    while paths := files():
        for path in paths:
            with contextlib.suppress(OSError):
                if path.stat().st_blocks * 512 > 2 * keep:
                    await asyncio.to_thread(release_all_but_tail, path, keep)
        await asyncio.sleep(every)


def saved_output_path(folder: Path, call_id: str) -> Path:
    """Where a call's full output is saved (one file per call id)."""
    return folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', call_id) or 'output'}.txt"


class CappedOutput:
    """One call's output: bounded memory, capped events, capped saved copy (see the module)."""

    def __init__(
        self,
        limit: int,
        saved: Path,
        saved_cap: int = 0,
        *,
        publish: Callable[[str], None] | None = None,
        event_cap: int = 0,
    ):
        self.limit, self.saved, self.saved_cap = limit, saved, saved_cap
        self.publish, self.event_cap = publish, event_cap
        self.half = limit // 2
        self.chars = 0  # everything added
        self.newlines = 0
        self.held: list[str] = []  # all text while it fits the limit; then the head
        self.head = ""
        self.tail: list[str] = []
        self.tail_chars = 0
        self.cut = False
        self.event_bytes = 0
        self.events_stopped = False
        self.unstreamed = 0  # bytes past the event cap
        self.file: TextIO | None = None
        self.saved_bytes = 0
        self.unsaved = 0  # characters past the saved copy's cap

    def add(self, text: str) -> None:
        if not text:
            return
        self._stream(text)
        self.chars += len(text)
        self.newlines += text.count("\n")
        if not self.cut:
            self.held.append(text)
            if not self.limit or self.chars <= self.limit:
                return
            whole = "".join(self.held)
            self.held, self.cut = [], True
            self.head = whole[: self.half]
            self.tail, self.tail_chars = [whole[-self.half :] if self.half else ""], min(self.half, len(whole))
            self._save(whole)
            return
        self._save(text)
        self.tail.append(text)
        self.tail_chars += len(text)
        if self.tail_chars > 2 * self.half + 65536:
            kept = "".join(self.tail)[-self.half :] if self.half else ""
            self.tail, self.tail_chars = [kept], len(kept)

    def _stream(self, text: str) -> None:
        if self.publish is None:
            return
        size = len(text.encode(errors="replace"))
        if self.events_stopped:
            self.unstreamed += size
            return
        if not self.event_cap or self.event_bytes + size <= self.event_cap:
            self.event_bytes += size
            self.publish(text)
            return
        room = self.event_cap - self.event_bytes
        part = text.encode(errors="replace")[:room].decode(errors="ignore")
        if part:
            self.publish(part)
        self.unstreamed += size - len(part.encode(errors="replace"))
        self.events_stopped = True
        self.publish(
            f"\n[... output events stop here, at {self.event_cap:,} bytes; the command's output goes on, "
            "and the result keeps its head and tail ...]\n"
        )

    def _save(self, text: str) -> None:
        if self.unsaved:
            self.unsaved += len(text)
            return
        if self.file is None:
            self.saved.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.saved, "w", encoding="utf-8", errors="replace")
        data = text
        if self.saved_cap:
            encoded = text.encode(errors="replace")
            room = self.saved_cap - self.saved_bytes
            if len(encoded) > room:
                data = encoded[:room].decode(errors="ignore")
                self.unsaved = len(text) - len(data) or 1
                encoded = data.encode(errors="replace")
            self.saved_bytes += len(encoded)
        self.file.write(data)

    def finish(self) -> tuple[str, dict[str, object]]:
        """The model's view and the metadata that says what was cut and saved; ends the copy."""
        if self.publish is not None and self.unstreamed:
            self.publish(f"[... {self.unstreamed:,} more bytes of output were not streamed ...]\n")
            self.unstreamed = 0
        if not self.cut:
            return "".join(self.held), {}
        if self.file is not None:
            if self.unsaved:
                self.file.write(
                    f"\n[... the saved output stops here, at {self.saved_cap:,} bytes (saved_output_cap); "
                    f"{self.unsaved:,} more characters were not saved ...]\n"
                )
            self.file.close()
            self.file = None
        tail = "".join(self.tail)[-self.half :] if self.half else ""
        cut_chars = self.chars - len(self.head) - len(tail)
        cut_lines = self.newlines - self.head.count("\n") - tail.count("\n")
        if self.unsaved:
            where = (
                f"its first {self.saved_bytes:,} bytes are saved at {self.saved} (the rest was not kept: "
                "the saved copy has a size cap)"
            )
        else:
            where = f"the whole output ({self.chars:,} characters) is saved at {self.saved}"
        note = (
            f"\n[... {cut_chars:,} characters ({cut_lines:,} lines) cut from the middle; {where}; "
            f"open it with read_file(path={str(self.saved)!r}, offset=N, limit=M) ...]\n"
        )
        meta: dict[str, object] = {"saved_output": str(self.saved), "original_chars": self.chars}
        if self.unsaved:
            meta["saved_output_cut"] = True
        return self.head + note + tail, meta

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
