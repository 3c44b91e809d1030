"""`eywa mcp --transport http`: the MCP tools (claude_code/mcp_server.py) over the SDK's streamable HTTP
transport, for Claude Code on other machines, behind a bearer token.

Every HTTP request must carry `Authorization: Bearer <mcp.token>` (compared in constant time); any other
gets 401 before the MCP app sees it. The server binds 127.0.0.1 unless `mcp.host` names another address,
and one that is not loopback is refused unless `mcp.allow_remote` is true (put TLS or an SSH tunnel in
front of it: the token travels in the clear otherwise). Stateless and JSON answers: each request stands
alone, so a hook can ask with one POST (claude_code/hub_client.py).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any

from eywa.core.config.settings import Settings
from eywa.core.errors import EywaError

MCP_PATH = "/mcp"
_UNAUTHORIZED = json.dumps({"error": "unauthorized: send Authorization: Bearer <mcp.token>"}).encode()

Scope = dict[str, Any]


class BindRefused(EywaError, RuntimeError):
    """The HTTP server must not start with these settings; the message says what to change."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_settings(settings: Settings) -> None:
    if not settings.mcp.token.get_secret_value().strip():
        raise BindRefused("the HTTP MCP server needs a token: set mcp.token in the config file (or "
                          "EYWA_MCP__TOKEN), e.g. to the output of `python3 -c 'import secrets; "
                          "print(secrets.token_urlsafe(32))'`")
    host = settings.mcp.host
    if not is_loopback(host) and not settings.mcp.allow_remote:
        raise BindRefused(f"mcp.host {host!r} is reachable from other machines: set mcp.allow_remote: true to "
                          f"serve there (behind TLS or an SSH tunnel), or keep 127.0.0.1")


class BearerGate:
    """ASGI middleware: HTTP requests without the token get 401 and never reach the app."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="eywa"'),
                (b"content-length", str(len(_UNAUTHORIZED)).encode())]})
            await send({"type": "http.response.body", "body": _UNAUTHORIZED})
            return
        await self.app(scope, receive, send)  # lifespan (the SDK's session manager) and authorized requests

    def _authorized(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                given = value
        scheme, _, token = given.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self._token)


def http_app(settings: Settings) -> BearerGate:
    """The SDK's streamable HTTP app of the MCP server, behind the token."""
    from eywa.claude_code.mcp_server import build_server

    check_settings(settings)
    server = build_server(settings)
    # host: on loopback the SDK also refuses requests whose Host header is not loopback (DNS rebinding).
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
                                     host=settings.mcp.host)
    return BearerGate(app, settings.mcp.token.get_secret_value().strip())


def serve_http(settings: Settings, port: int | None = None) -> None:
    """Serve until interrupted."""
    import uvicorn

    app = http_app(settings)
    uvicorn.run(app, host=settings.mcp.host, port=port or settings.mcp.port, log_level="warning")
