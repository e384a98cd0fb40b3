"""The agent's tools: the registry (the `tool` decorator, schemas from signatures, invoke), the
seams tools reach the engine through, the file tools (files/), the web tools (web/), bash and
tmux, skills and the subagent tool.
"""
