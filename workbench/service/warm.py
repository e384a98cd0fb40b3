"""What the engine's fork server does once, so that every session process starts warm:
litellm with its first call's lazy imports (`model.gateway.import_and_warm`) and the pydantic
models its first call builds on first use, the session stack the session process runs
(`worker.py`), and what a session's open and first turn import lazily (the checkpointer and
pygit2, the built-in tools). Profiled in a session process with a warm engine, these were
~0.55 s of its start to the first model request (docs/DECISIONS.md)."""

import gc
import importlib
import logging

from workbench.model.gateway import import_and_warm

log = logging.getLogger("workbench")

# litellm's (and openai's) pydantic models whose schema is deferred to first use, which the
# first streamed call builds (found by diffing the complete models of a session process after
# its first call with the fork server's): ~0.2 s in each session process otherwise
FIRST_CALL_MODELS = (
    "litellm.types.router:GenericLiteLLMParams",
    "litellm.types.router:LiteLLM_Params",
    "litellm.types.services:ServiceLoggerPayload",
    "litellm.types.utils:Choices",
    "litellm.types.utils:Message",
    "litellm.types.utils:ModelResponse",
    "litellm.types.utils:PromptTokensDetailsWrapper",
    "litellm.types.utils:Usage",
    "openai.types.chat.chat_completion_chunk:ChatCompletionChunk",
    "openai.types.chat.chat_completion_chunk:Choice",
    "openai.types.chat.chat_completion_chunk:ChoiceDelta",
)


def build_first_call_models() -> None:
    for name in FIRST_CALL_MODELS:
        module, _, qualname = name.partition(":")
        try:
            getattr(importlib.import_module(module), qualname).model_rebuild()
        except Exception as err:  # another release: its first call builds what it needs
            log.debug("cannot build %s ahead: %s", name, err)


import_and_warm()
build_first_call_models()

import workbench.checkpoints.checkpointer  # noqa: E402 - pygit2, imported by a session's open
import workbench.service.worker  # noqa: E402,F401 - imported once, shared by every fork
from workbench.tools.registry import builtin_tools  # noqa: E402

builtin_tools()  # the built-in tools' modules, imported by a session's first turn
gc.freeze()  # all of it lives as long as the fork server: out of every later collection
