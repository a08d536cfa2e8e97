"""lookout's MCP shim: a stdio MCP server whose every tool is one call to lookout's REST API.

It keeps no state and makes no decisions the daemon should make: each tool turns its arguments into one
HTTP request (`lookout.clients.mcp.daemon.call`) and hands the daemon's answer, or its error message, back to the
model. `lookout-mcp` (`lookout.clients.mcp.server:main`) runs it.
"""
