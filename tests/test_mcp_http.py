"""`eywa mcp --transport http` run as a process, spoken to by the official MCP client over streamable HTTP;
and a spoke's SessionStart hook asking it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import ROOT
from .ssh_hub import free_port, wait_for_port
from .test_machines import git_repo, machine, transcript

TOKEN = "hub-token-7d1f0c2b9e"


@dataclass
class HttpHub:
    url: str
    env: dict[str, str]
    session: str  # a session of the hub's index
    repo: Path  # its repository, cloned on the spoke at the same remote


def serve(env: dict[str, str], port: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "eywa.cli.main", "mcp", "--transport", "http", "--port", str(port)],
                            cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def http_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpHub]:
    tmp = tmp_path_factory.mktemp("http")
    hub = machine(tmp, "mac", None, None)
    repo = git_repo(hub.home / "code" / "cli", "git@github.com:acme/cli.git")
    session = transcript(hub, repo, "zanzibar")
    hub.run("ingest")
    env = {**hub.env, "EYWA_MCP__TOKEN": TOKEN}
    port = free_port()
    process = serve(env, port)
    try:
        wait_for_port(port, process, "the HTTP MCP server")
        yield HttpHub(f"http://127.0.0.1:{port}/mcp", env, session.stem, repo)
    finally:
        process.terminate()
        process.wait(timeout=10)


def call(url: str, headers: dict[str, str], tool: str, arguments: dict, statuses: list[int] | None = None) -> str:
    """The tool's text through the official client; `statuses` collects every HTTP status it got."""
    async def record(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    async def run() -> str:
        async with httpx2.AsyncClient(headers=headers, timeout=30, event_hooks={"response": [record]}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error
            return "".join(c.text for c in result.content if hasattr(c, "text"))

    with start_blocking_portal() as portal:
        return portal.call(run)


def test_the_right_token_gets_the_tools_over_streamable_http(http_hub: HttpHub) -> None:
    text = call(http_hub.url, {"Authorization": f"Bearer {TOKEN}"}, "eywa_get",
                {"query": "zanzibar", "days_back": 60, "machine": "mac"})
    assert "zanzibar" in text and text.startswith("## Eywa: 1 past session")


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": TOKEN},
                                     {"Authorization": f"Basic {TOKEN}"}], ids=["none", "wrong", "no-scheme", "basic"])
def test_a_missing_or_wrong_token_gets_401_and_no_data(http_hub: HttpHub, headers: dict[str, str]) -> None:
    statuses: list[int] = []
    with pytest.raises(ExceptionGroup):  # the official client gives up at initialize
        call(http_hub.url, headers, "eywa_get", {"query": "zanzibar", "days_back": 60}, statuses)
    assert statuses and set(statuses) == {401}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "eywa_get", "arguments": {"query": "zanzibar", "days_back": 60}}}
    answer = httpx2.post(http_hub.url, json=body, headers={**headers, "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer")
    assert "zanzibar" not in answer.text and "jsonrpc" not in answer.text


def test_a_bind_beyond_loopback_or_without_a_token_is_refused_unless_configured(http_hub: HttpHub) -> None:
    for extra, needed in (({"EYWA_MCP__HOST": "0.0.0.0"}, "mcp.allow_remote"), ({"EYWA_MCP__TOKEN": ""}, "mcp.token")):
        done = subprocess.run([sys.executable, "-m", "eywa.cli.main", "mcp", "--transport", "http", "--port",
                               str(free_port())], cwd=ROOT, env={**http_hub.env, **extra}, text=True,
                              capture_output=True, timeout=60)
        assert done.returncode == 1 and needed in done.stderr
    port = free_port()
    allowed = serve({**http_hub.env, "EYWA_MCP__HOST": "0.0.0.0", "EYWA_MCP__ALLOW_REMOTE": "true"}, port)
    try:
        wait_for_port(port, allowed, "the HTTP MCP server")
        text = call(f"http://127.0.0.1:{port}/mcp", {"Authorization": f"Bearer {TOKEN}"}, "eywa_get",
                    {"query": "zanzibar", "days_back": 60})
        assert "zanzibar" in text
    finally:
        allowed.terminate()
        allowed.wait(timeout=10)


def hook(env: dict[str, str], cwd: Path) -> tuple[str, float]:
    payload = json.dumps({"session_id": "new", "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"})
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", "hook", "session-start"], cwd=ROOT, env=env,
                          input=payload, text=True, capture_output=True, timeout=30)
    assert done.returncode == 0 and done.stderr == ""
    return done.stdout, time.monotonic() - started


def test_a_spokes_session_start_asks_the_hub_and_fails_open(http_hub: HttpHub, tmp_path: Path) -> None:
    spoke = machine(tmp_path, "laptop", None, None)
    clone = git_repo(spoke.home / "src" / "cli-clone", "https://github.com/acme/cli.git")  # no index here
    asking = {**spoke.env, "EYWA_MCP__HUB_URL": http_hub.url, "EYWA_MCP__TOKEN": TOKEN}
    out, _ = hook(asking, clone)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "recent sessions in project cli" in context and "zanzibar" in context
    for broken in ({"EYWA_MCP__TOKEN": "wrong"}, {"EYWA_MCP__HUB_URL": f"http://127.0.0.1:{free_port()}/mcp"}):
        out, took = hook({**asking, **broken}, clone)
        assert out == "" and took < 5
    # A hub that accepts the connection and never answers: the hook gives up after mcp.hub_timeout_seconds.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        out, took = hook({**asking, "EYWA_MCP__HUB_URL": f"http://127.0.0.1:{port}/mcp",
                          "EYWA_MCP__HUB_TIMEOUT_SECONDS": "0.5"}, clone)
    assert out == "" and took < 0.5 + 2.0
    assert os.environ.get("EYWA_MCP__TOKEN") is None  # nothing leaked into this process
