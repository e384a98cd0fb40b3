"""What the engine's fork server imports once, so that every session process starts warm:
litellm with its first call's lazy imports (`model.gateway.import_and_warm`), and the session
stack the session process runs (`worker.py`)."""

from workbench.model.gateway import import_and_warm

import_and_warm()

import workbench.service.worker  # noqa: E402,F401 - imported once, shared by every fork
