"""The suite itself stays on the machine: only 127.0.0.1 can be reached (tests/conftest.py)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.tools import encoded_cwd, map_paths, stand_in


def test_a_test_cannot_connect_beyond_loopback() -> None:
    with pytest.raises(ConnectionRefusedError, match="127.0.0.1 only"):
        socket.create_connection(("192.0.2.1", 443), timeout=1)  # TEST-NET-1: never routed


def test_loopback_stays_reachable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=1):
            pass


def test_regenerations_run_in_folders_of_their_own_and_write_the_committed_paths(tmp_path: Path) -> None:
    """Two suites at once never share a folder: the real CLIs run in a fresh stand-in for the fixed folder
    the committed transcripts name, whose path is then mapped back to it (tests/tools.py)."""
    committed = Path("/tmp/eywa-harness")
    with stand_in(committed) as first, stand_in(committed) as second:
        assert first != second and len(str(first)) == len(str(second)) == len(str(committed))
        assert first.parent == second.parent == committed.parent
        written = tmp_path / "written" / encoded_cwd(first / "project")
        written.mkdir(parents=True)
        (written / "s.jsonl").write_text(json.dumps({"cwd": str(first / "project")}) + "\n")
        map_paths(tmp_path / "written", first, committed)
    assert not first.exists() and not second.exists()
    mapped = tmp_path / "written" / "-tmp-eywa-harness-project" / "s.jsonl"
    assert json.loads(mapped.read_text()) == {"cwd": "/tmp/eywa-harness/project"}
