"""The request contracts of each domain, in pydantic only: imported by the routes, WebSocket handlers and MCP tools."""
