"""Core: what every layer shares and that depends on nothing but the protocol: Feedback and the one
boundary from a tool outcome to a ToolResult, the words people read for the proto's enums, and
text made safe for a terminal.
"""
