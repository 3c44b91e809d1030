"""One MCP tool call to the hub's streamable HTTP endpoint (claude_code/mcp_http.py), with the standard library
only: a spoke's SessionStart hook must answer in well under a second, and the `mcp` SDK's client alone
takes about two to import. The hub serves stateless JSON answers, so a call is one JSON-RPC POST.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from eywa.core.errors import EywaError

PROTOCOL_VERSION = "2025-06-18"


class HubError(EywaError):
    """The hub could not be asked, or it answered with an error."""


def call_tool(url: str, token: str, name: str, arguments: dict[str, object], *, timeout: float) -> str:
    """The text the tool returned."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL_VERSION})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.loads(response.read(4_000_000))
    except (urllib.error.URLError, OSError, ValueError) as exc:  # HTTPError (401...) is a URLError
        raise HubError(f"cannot ask the hub at {url}: {exc}") from None
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict) or result.get("isError"):
        raise HubError(f"the hub answered {name} with an error")
    texts = [part.get("text", "") for part in result.get("content", []) if isinstance(part, dict)
             and part.get("type") == "text"]
    return "".join(texts)
