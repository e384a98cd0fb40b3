"""Settings: each declared once (type, default, doc, environment variable, project rule), read from
the layers (defaults, user config, a project config that only tightens, environment, flags),
reported by `workbench config`, and the secrets that must never leave the process.
"""
