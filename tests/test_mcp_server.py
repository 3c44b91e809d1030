"""`eywa mcp` as Claude Code runs it: a subprocess spoken to over stdio by the `mcp` SDK's own client."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from eywa.claude_code.mcp_server import _first_prompt, encode_cwd
from eywa.core.redaction.scrubber import default_redactor

from .conftest import CORPUS, ROOT, write_jsonl

NOW = "2026-02-17"
PINNED = dt.datetime.fromisoformat(NOW).replace(tzinfo=dt.UTC).timestamp()  # the servers' EYWA_NOW


@dataclass
class Server:
    """A running `eywa mcp` and a connected client, driven from sync tests through a blocking portal."""

    portal: BlockingPortal
    client: Client
    env: dict[str, str]

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> tuple[bool, str]:
        result = self.portal.call(self.client.call_tool, tool, arguments or {})
        return bool(result.is_error), "".join(c.text for c in result.content if hasattr(c, "text"))


def eywa_env(home: Path, data: Path, projects: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    env.update(HOME=str(home), EYWA_DATA_DIR=str(data), EYWA_PROJECTS_DIR=str(projects), EYWA_NOW=NOW)
    return env


def cli(env: dict[str, str], *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=env, text=True,
                            capture_output=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout


def start_server(env: dict[str, str], cwd: Path) -> Iterator[Server]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "eywa.cli.main", "mcp"], env=env, cwd=str(cwd))
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal())
        client = stack.enter_context(portal.wrap_async_context_manager(Client(params, read_timeout_seconds=120)))
        yield Server(portal, client, env)


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("home")
    env = eywa_env(home, home / "data", CORPUS)
    cli(env, "ingest")
    # Started in the project folder, where no Claude Code session ever ran.
    yield from start_server(env, ROOT)


def test_lists_both_tools_with_when_to_call_them_and_their_bounds(corpus_server: Server) -> None:
    tools = {t.name: t for t in corpus_server.portal.call(corpus_server.client.list_tools).tools}
    assert set(tools) == {"eywa_get", "eywa_extract"}
    assert "Call it when" in tools["eywa_get"].description and "Call it when" in tools["eywa_extract"].description
    props = tools["eywa_get"].input_schema["properties"]
    days_back = next(kind for kind in props["days_back"]["anyOf"] if kind["type"] == "integer")  # or null: any age
    bounds = (props["max_handoffs"]["minimum"], props["max_handoffs"]["maximum"], days_back["minimum"])
    assert bounds == (1, 5, 1)
    assert "any age" in tools["eywa_get"].description and "last week" in tools["eywa_get"].description
    assert tools["eywa_get"].input_schema.get("required", []) == []
    assert tools["eywa_extract"].input_schema.get("required", []) == []


def test_eywa_get_with_a_query_returns_what_eywa_get_prints(corpus_server: Server) -> None:
    error, text = corpus_server.call("eywa_get", {"query": "rewind gemini", "days_back": 60})
    assert not error
    assert text == cli(corpus_server.env, "get", "rewind gemini", "--days-back", "60")
    assert text.startswith("## Eywa: 3 past sessions since Sat 20 Dec 2025\n\nsession ")
    error, text = corpus_server.call("eywa_get", {"query": "rewind gemini last week"})  # the defaults: any age
    assert not error and text == cli(corpus_server.env, "get", "rewind gemini last week")
    assert text.startswith("## Eywa: 3 past sessions, those since Mon 9 Feb first\n\nsession ")


def test_eywa_get_without_a_query_returns_the_recent_sessions(corpus_server: Server) -> None:
    error, text = corpus_server.call("eywa_get")
    assert not error
    assert text == cli(corpus_server.env, "get")
    assert text.count("\n\n---\n\n") == 2


def test_eywa_get_honours_max_handoffs_and_project(corpus_server: Server) -> None:
    error, text = corpus_server.call("eywa_get", {"query": "html css", "max_handoffs": 5, "days_back": 400,
                                                  "project": "claude-code-log"})
    assert not error
    assert text == cli(corpus_server.env, "get", "html css", "--max", "5", "--days-back", "400",
                       "--project", "claude-code-log")


def test_eywa_get_keeps_one_agents_sessions(corpus_server: Server) -> None:
    error, text = corpus_server.call("eywa_get", {"query": "rewind gemini", "days_back": 60, "agent": "claude-code"})
    assert not error and text == cli(corpus_server.env, "get", "rewind gemini", "--days-back", "60")
    error, text = corpus_server.call("eywa_get", {"query": "rewind gemini", "days_back": 60, "agent": "codex"})
    assert not error
    assert text == cli(corpus_server.env, "get", "rewind gemini", "--days-back", "60", "--agent", "codex")
    assert text.startswith("## Eywa: 0 past sessions")  # the corpus is Claude Code's alone


@pytest.mark.parametrize(("arguments", "field"), [
    ({"max_handoffs": 0}, "max_handoffs"),
    ({"max_handoffs": 6}, "max_handoffs"),
    ({"days_back": 0}, "days_back"),
    ({"days_back": "a week"}, "days_back"),
    ({"query": ["not", "text"]}, "query"),
    ({"agent": "cursor"}, "agent"),
])
def test_bad_arguments_are_refused_with_a_clear_error(corpus_server: Server, arguments: dict, field: str) -> None:
    error, text = corpus_server.call("eywa_get", arguments)
    assert error
    assert text.startswith(f"invalid arguments for eywa_get: {field} = ")
    assert "max_handoffs an integer 1-5" in text and "days_back an integer of at least 1" in text
    assert "pydantic.dev" not in text


def test_eywa_extract_reextracts_a_corpus_session_and_returns_its_handoff(corpus_server: Server) -> None:
    error, text = corpus_server.call("eywa_extract", {"session_id": "4f8c11"})
    assert not error
    assert text.startswith("## Eywa: handoff of session 4f8c1176-7025-4530-a860-c6fc4c63a150\n2026-02-12 · ")
    assert text.endswith(cli(corpus_server.env, "show", "4f8c11"))


@pytest.mark.parametrize(("session_id", "message"), [
    ("ffffffff-dead", "no transcript of session 'ffffffff-dead'"),
    ("../../etc/passwd", "is not a session id"),
    ("0", "give more characters"),
])
def test_eywa_extract_refuses_unknown_or_ambiguous_ids(corpus_server: Server, session_id: str, message: str) -> None:
    error, text = corpus_server.call("eywa_extract", {"session_id": session_id})
    assert error and message in text


def test_eywa_extract_without_id_never_guesses_outside_a_claude_code_directory(corpus_server: Server) -> None:
    error, text = corpus_server.call("eywa_extract")
    assert error
    assert f"no Claude Code transcript of {ROOT}" in text and "pass session_id" in text


# -- the calling session: a fresh projects folder with live transcripts ------------------------------------

def transcript(path: Path, session_id: str, cwd: Path, prompt: str, *, age_seconds: float = 0) -> Path:
    base = {"sessionId": session_id, "cwd": str(cwd), "version": "2.1.42", "gitBranch": "main"}
    write_jsonl(path, [
        {**base, "type": "user", "uuid": f"{session_id}-u", "parentUuid": None, "timestamp": "2026-02-16T10:00:00Z",
         "message": {"role": "user", "content": prompt}},
        {**base, "type": "assistant", "uuid": f"{session_id}-a", "parentUuid": f"{session_id}-u",
         "timestamp": "2026-02-16T10:04:00Z",
         "message": {"role": "assistant", "model": "claude-opus-4-6",
                     "content": [{"type": "text", "text": f"Done: {prompt.lower()} in zanzibar/core.py."}]}},
    ])
    stamp = PINNED - age_seconds  # "being written" is judged by the pinned clock
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Server, Path, Path]]:
    workdir = tmp_path / "work" / "zanzibar"
    workdir.mkdir(parents=True)
    projects = tmp_path / "projects"
    folder = projects / encode_cwd(str(workdir))
    transcript(folder / "11111111-aaaa-4aaa-8aaa-000000000001.jsonl", "11111111-aaaa-4aaa-8aaa-000000000001",
               workdir, "Plan the zanzibar migration", age_seconds=3 * 3600)
    for server in start_server(eywa_env(tmp_path, tmp_path / "data", projects), workdir):
        yield server, folder, workdir


def test_eywa_get_before_any_ingest_says_what_to_do(live: tuple[Server, Path, Path]) -> None:
    server, _, _ = live
    error, text = server.call("eywa_get", {"query": "zanzibar"})
    assert error and "run `eywa ingest` first" in text


def test_eywa_extract_without_id_finds_the_calling_session_and_refuses_to_guess(
        live: tuple[Server, Path, Path]) -> None:
    server, folder, workdir = live
    error, text = server.call("eywa_extract")
    assert error and "no session in" in text and "11111111-aaaa" in text  # only an old one: lists it, no guess

    calling = "22222222-bbbb-4bbb-8bbb-000000000002"
    transcript(folder / f"{calling}.jsonl", calling, workdir, "Rename the zanzibar module")
    error, text = server.call("eywa_extract")
    assert not error, text
    assert text.startswith(f"## Eywa: handoff of session {calling}\n")
    assert "zanzibar" in text.lower()

    other = "33333333-cccc-4ccc-8ccc-000000000003"
    transcript(folder / f"{other}.jsonl", other, workdir, "Write the zanzibar docs")
    error, text = server.call("eywa_extract")
    assert error and "2 sessions in" in text
    assert calling in text and other in text
    assert '"Rename the zanzibar module"' in text and '"Write the zanzibar docs"' in text
    error, text = server.call("eywa_extract", {"session_id": other[:8]})
    assert not error and text.startswith(f"## Eywa: handoff of session {other}\n")


def test_first_prompt_of_a_listed_session_survives_damaged_lines_and_is_redacted(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(
        b'{"type":"user","message":"a string, not an object"}\n'
        b'{"type":"user","message":{"content":[{"type":"text","text":5}]}}\n'
        b"[[[[ not json\n"
        b'{"type":"user","message":{"content":"deploy with ' + b"x" * 70 + b' sk-ant-api03-'
        + b"a" * 40 + b' please"}}\n'
    )
    prompt = _first_prompt(transcript, default_redactor().redact)
    # The key straddles the 100th character: redacted before the cut, not cut below recognition.
    assert prompt.startswith("deploy with x") and "[REDACTED" in prompt and len(prompt) == 100
    assert "aaaa" not in prompt
