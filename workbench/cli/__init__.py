"""The command line: `workbench` (the TUI), `workbench run` (headless), sessions, export, config,
doctor; the console script's entry point.
"""
