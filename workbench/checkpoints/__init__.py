"""Checkpoints of the workspace: the tree before each tool call that can change it, kept in a
repository of Workbench's own in the data folder (never the user's .git), and the restores
that undo and rewind make from them."""
