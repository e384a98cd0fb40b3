"""MCP servers' tools in the loop: the session's servers (stdio in a sandbox, or Streamable HTTP),
their tools as registry tools, their results and failures through the one boundary."""
