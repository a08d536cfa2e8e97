"""Request models shared by the HTTP routes, the WebSocket handlers and the MCP shim (pydantic only)."""
