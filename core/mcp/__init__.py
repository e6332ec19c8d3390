"""MCP: the memory served over the Model Context Protocol (``memhost mcp``).

:mod:`~memhost.mcp.server` gives each MCP connection a memory manager of its own, over stdio or
HTTP. It needs the MCP SDK (the ``mcp`` extra, the top-level package ``mcp``, which absolute
imports inside this package still reach); this package's ``__init__`` imports nothing, so
``import memhost`` never loads the SDK.
"""
