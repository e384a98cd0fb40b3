"""The engine: one agent's loop, the agent tree with its Inbox, repeats, compaction, the system
prompt, and the SQLite event log whose events are published only after commit.
"""
