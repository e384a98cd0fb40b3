"""Workbench on Harbor: the installed agent (agent.Workbench) and a local folder environment for machines
without Docker (local_env.LocalFolderEnvironment, the tests' stand-in). Imports Harbor; nothing in
`workbench/` imports this package."""
