"""The memory over the Model Context Protocol: what ``memhost mcp`` serves.

Each MCP connection gets a :class:`~memhost.MemoryManager` of its own, driven from one thread
of its own, exactly as a host drives one: the connection's first request (``initialize``, or
the first request of a client on the per-request protocol) starts the session, every call goes
through the manager (budgets, scanning, approval, mirroring, redaction, the outbox), and the end
of the connection ends the session and shuts the manager down, with the report logged.

Served: the ``memory`` tool and the active provider's tools with the manager's schemas and JSON
answers; a ``recall`` tool (the provider's prefetch, fenced); the frozen snapshot as the
resource :data:`SNAPSHOT_URI` and the prompt :data:`SNAPSHOT_PROMPT`, and in the server's
instructions. Over stdio the process is the connection; over HTTP each MCP session is one, and
requests without a session (the stateless protocol) share one memory session for the server's
life. This module imports the ``mcp`` SDK, so ``import memhost`` never imports it.

The server's parts: :mod:`memhost.mcp.catalog` (instructions, the recall tool, the snapshot's
names), :mod:`memhost.mcp.session` (one connection's manager on its thread) and
:mod:`memhost.mcp.serving` (stdio and HTTP); their public names stay importable from here.
"""

from __future__ import annotations

import io
import json
import logging
import signal
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import mcp.types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memhost import __version__
from memhost.manager import MemoryManager
from memhost.mcp.catalog import (INSTRUCTIONS, RECALL_SCHEMA, RECALL_TOOL, SNAPSHOT_PROMPT,
                                 SNAPSHOT_URI, mcp_tool, recall)
from memhost.mcp.serving import (HTTP_HOST, HTTP_PATH, TOKEN_ENV, http_token, serve_http,
                                 serve_stdio)
from memhost.mcp.session import MemorySession
from memhost.mcp.stdio import WireLines

log = logging.getLogger("memhost.mcp")

_STATE_KEY = "memhost.session"


class MemoryMcpServer:
    """The MCP server: the SDK's low-level ``Server`` with memhost's handlers.

    ``per_connection`` (HTTP) gives each MCP session its own :class:`MemorySession`; without
    it (stdio, where the process is the connection) every request uses one.
    """

    def __init__(self, home: Path, *, per_connection: bool, user_id: str = "") -> None:
        self.home = home
        self.user_id = user_id  # memhost --user: that user's memory under <home>/users/
        self.per_connection = per_connection
        self._sessions: set[MemorySession] = set()  # open (or closing) sessions
        self._shared: MemorySession | None = None
        self.server: Server[Any] = Server(
            "memhost", version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources, on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        self.server.middleware.append(self._lifecycle)

    def _new_session(self, label: str) -> MemorySession:
        def factory() -> MemoryManager:
            from memhost.config import load_config

            # `recall` is this server's own tool: a provider tool of that name is refused like
            # any provider tool that takes a core tool's name.
            reserved = [*load_config(self.home).memory.reserved_tools, RECALL_TOOL]
            return MemoryManager.from_home(self.home, user_id=self.user_id,
                                           reserved_tools=reserved)

        session = MemorySession(factory, label)
        self._sessions.add(session)
        return session

    def _end(self, session: MemorySession) -> None:
        session.close().add_done_callback(lambda _: self._sessions.discard(session))

    def shared_session(self) -> MemorySession:
        if self._shared is None:
            label = "stdio" if not self.per_connection else "HTTP requests without a session"
            self._shared = self._new_session(label)
        return self._shared

    def session_for(self, ctx: ServerRequestContext[Any, Any]) -> MemorySession:
        if not self.per_connection:
            return self.shared_session()
        connection = _connection_of(ctx)
        if connection is None or connection.session_id is None:
            return self.shared_session()
        session = connection.state.get(_STATE_KEY)
        if session is None:
            session = self._new_session(f"HTTP session {connection.session_id[:8]}")
            connection.state[_STATE_KEY] = session
            # Runs when the MCP session ends: the client's DELETE, the idle timeout, or the
            # server stopping. Closing is queued on the session's thread, never awaited here.
            connection.exit_stack.callback(self._end, session)
        return session

    def close_all(self) -> None:
        """End every session still open and wait until each has shut down."""
        for session in list(self._sessions):
            try:
                session.close().result()
            except Exception:
                log.exception("closing memory session %s failed", session.session_id)

    # -- lifecycle -------------------------------------------------------------------------------

    async def _lifecycle(self, ctx: ServerRequestContext[Any, Any],
                         call_next: CallNext) -> HandlerResult:
        """Start the connection's session on its first request (``initialize`` for handshake
        clients), and put the session's memory into the instructions the client receives."""
        if ctx.request_id is None or ctx.method == "ping":
            return await call_next(ctx)
        session = self.session_for(ctx)
        await session.start(_client_name(ctx))
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            memory = await session.call(lambda m: m.system_prompt())
            result = {**result, "instructions": INSTRUCTIONS + ("\n\n" + memory if memory else "")}
        return result

    # -- tools -----------------------------------------------------------------------------------

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        schemas = await self.session_for(ctx).call(lambda m: m.tool_schemas())
        return types.ListToolsResult(tools=[mcp_tool(s) for s in [*schemas, RECALL_SCHEMA]])

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        session = self.session_for(ctx)
        arguments = params.arguments or {}
        if params.name == RECALL_TOOL:
            untrusted = arguments.get("untrusted") is True
            text, failed = await session.call(
                lambda m: recall(m, arguments.get("query"), untrusted=untrusted))
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)
        answer = await session.call(lambda m: m.call_tool(params.name, arguments))
        try:
            failed = json.loads(answer).get("success") is False
        except (ValueError, AttributeError):
            failed = False
        # The answer is the manager's JSON string as is: what a host hands its model.
        return types.CallToolResult(content=[types.TextContent(text=answer)], is_error=failed)

    # -- the snapshot ----------------------------------------------------------------------------

    async def _list_resources(self, ctx: ServerRequestContext[Any, Any],
                              params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(
            uri=SNAPSHOT_URI, name=SNAPSHOT_PROMPT, title="Memory snapshot",
            description="The memory as it was when this session started (MEMORY.md, USER.md and "
                        "the provider's part), with how to use it: text for a system prompt.",
            mime_type="text/plain")])

    async def _read_resource(self, ctx: ServerRequestContext[Any, Any],
                             params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != SNAPSHOT_URI:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown resource {params.uri!r}; "
                           f"memhost serves {SNAPSHOT_URI}")
        text = await self.session_for(ctx).call(lambda m: m.system_prompt())
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=SNAPSHOT_URI, mime_type="text/plain", text=text)])

    async def _list_prompts(self, ctx: ServerRequestContext[Any, Any],
                            params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=SNAPSHOT_PROMPT, title="Memory snapshot",
            description="The memory as it was when this session started, for the system prompt.")])

    async def _get_prompt(self, ctx: ServerRequestContext[Any, Any],
                          params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != SNAPSHOT_PROMPT:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}; "
                           f"memhost serves {SNAPSHOT_PROMPT!r}")
        text = await self.session_for(ctx).call(lambda m: m.system_prompt())
        return types.GetPromptResult(
            description="memhost memory snapshot: put it into the system prompt",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))])

    # -- transports ------------------------------------------------------------------------------

    async def run_stdio(self, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        """Serve one connection over the wire :func:`memhost.mcp.stdio.claim` took, until the
        client closes it or a signal comes."""
        wire = WireLines(wire_in)
        stdout = anyio.wrap_file(io.TextIOWrapper(wire_out, encoding="utf-8"))
        # stdio_server only iterates over stdin's lines (see WireLines and stdio.sound_line).
        async with stdio_server(wire.lines(), stdout) as (read_stream, write_stream):
            async with anyio.create_task_group() as tasks:
                serving = anyio.CancelScope()
                tasks.start_soon(_stop_on_signal, serving)
                with serving:
                    await self.server.run(read_stream, write_stream,
                                          self.server.create_initialization_options())
                wire.stop()  # after a signal the client may keep the wire open: read no more
                await anyio.to_thread.run_sync(self.close_all)
                tasks.cancel_scope.cancel()


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    info = (ctx.params or {}).get("clientInfo") if ctx.method == "initialize" else None
    if info is None and ctx.session.client_params is not None:
        info = ctx.session.client_params.client_info.model_dump()
    if not isinstance(info, dict):
        return ""
    return " ".join(str(info.get(k)) for k in ("name", "version") if info.get(k))[:80]


def _connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    # The low-level context exposes the connection only through its session; this is the one
    # place that reaches for it. On the handshake path it is one object per MCP session.
    return getattr(ctx.session, "_connection", None)


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            if scope.cancel_called:
                log.info("%s: already closing the memory session", signal.Signals(signum).name)
                continue
            log.info("%s: closing the memory session", signal.Signals(signum).name)
            scope.cancel()


__all__ = ["HTTP_HOST", "HTTP_PATH", "INSTRUCTIONS", "RECALL_SCHEMA", "RECALL_TOOL",
           "SNAPSHOT_PROMPT", "SNAPSHOT_URI", "TOKEN_ENV", "MemoryMcpServer", "MemorySession",
           "http_token", "recall", "serve_http", "serve_stdio"]
