"""Workbench as an ACP agent (Agent Client Protocol, JSON-RPC over stdio): `workbench acp`.

A client of the Session, beside the CLI and the TUI. Imports nothing at package import.
"""
