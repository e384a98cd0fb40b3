"""The log file of a command that opens a session: in the data folder, secrets redacted."""

from __future__ import annotations

import logging

from workbench.config.secrets import secrets_of
from workbench.config.settings import ConfigError, Settings


class _Redact(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if any(s in text for s in self.secrets):
            for s in self.secrets:
                text = text.replace(s, "[redacted]")
            record.msg, record.args = text, None
        return True


def setup_logging(settings: Settings) -> None:
    """Log to the data folder's log file, secrets redacted; ConfigError when it cannot be written."""
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(settings.log_path, encoding="utf-8")
    except OSError as err:
        raise ConfigError(
            f"cannot use the data folder {settings.data_dir}: {err.strerror or err}; "
            "choose another with --data-dir or WORKBENCH_DATA_DIR"
        ) from err
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_Redact(secrets_of(settings)))
    logging.raiseExceptions = False  # a log file on a full disk must not print its own tracebacks
    # On the root logger: the libraries' warnings and tracebacks (the MCP SDK's, asyncio's "Unknown
    # child process") go to the file too. With no handler there, Python's last-resort handler
    # printed them on stderr, over `workbench run`'s output and the TUI.
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "workbench_log", False)]:
        root.removeHandler(old)  # a second session in this process: one file, one handler
        old.close()
    handler.workbench_log = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(min(root.level, logging.WARNING) if root.level else logging.WARNING)
    logging.getLogger("workbench").setLevel(logging.INFO)
