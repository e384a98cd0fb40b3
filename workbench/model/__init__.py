"""The model gateway: litellm calls, streaming assembled into one Message, retry by error
semantics, the wire format (the one place OpenAI-style dicts are built and parsed), tool calls
written as text, and the offline demo model.
"""
