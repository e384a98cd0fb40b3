"""The event log's SQLite file: its schema, the forward migrations, and the checks made as it
opens (a damaged file or one written by a newer Workbench is refused in one line, never
overwritten). `engine/store.py` reads and writes it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


class StoreError(Exception):
    """The database cannot be used (damaged, or written by a newer Workbench): one line to act on."""


SCHEMA_VERSION = 2
# Forward migrations: MIGRATIONS[v] takes a database at version v to v + 1. Version 0 is a new
# file or one written before versions were kept (the tables below, created if missing).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0),
    workspace TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    status INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS agents (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    info BLOB NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""
MIGRATIONS: dict[int, str] = {
    0: _SCHEMA,
    1: """
ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN updated REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage BLOB NOT NULL DEFAULT x'';
UPDATE sessions SET updated = created,
    title = substr(substr(prompt, 1, instr(prompt || char(10), char(10)) - 1), 1, 60);
""",
}


def prepare(db: sqlite3.Connection, path: Path) -> None:
    """WAL, then the schema brought forward to SCHEMA_VERSION; a damaged or newer file is refused."""
    try:
        db.execute("PRAGMA busy_timeout=5000")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the database {path} was written by a newer Workbench (schema {version}, this one "
                f"knows {SCHEMA_VERSION}); upgrade Workbench, or choose another --data-dir. It was not changed."
            )
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if version < SCHEMA_VERSION:
            db.execute("BEGIN IMMEDIATE")
            try:
                # re-read inside the write lock: another process may have migrated it meanwhile
                version = db.execute("PRAGMA user_version").fetchone()[0]
                for step in range(version, SCHEMA_VERSION):
                    for statement in MIGRATIONS[step].split(";"):
                        if statement.strip():
                            db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
    except sqlite3.DatabaseError as err:
        if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
            raise
        raise StoreError(
            f"the database {path} is damaged ({err}); move it aside and Workbench starts a new one "
            "(it is never overwritten), or choose another --data-dir"
        ) from err
