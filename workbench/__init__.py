"""Workbench: a terminal UI agent workbench."""

__version__ = "0.1.0"
