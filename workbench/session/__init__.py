"""The Session: the one door into the engine for the CLI and the TUI (open, send, cancel,
subscribe, decide, close), its rebuild from the event log, its lock, and the stored sessions'
catalog and doctor checks.
"""
