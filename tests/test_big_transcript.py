"""A 200 MB transcript holding one 50 MB line is ingested in bounded memory, the rest of it intact."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from .conftest import CORPUS, ROOT

pytestmark = pytest.mark.slow  # a 200 MB transcript

FILLER = CORPUS / "entire" / "projects" / "-Users-gtrrz-victor-wks-cli" / "4f8c1176-7025-4530-a860-c6fc4c63a150.jsonl"
SESSION = "b16b16b1-0000-4000-8000-000000000000"
TOTAL_BYTES = 200 * 1024 * 1024
GIANT_BYTES = 50 * 1024 * 1024
PEAK_RSS_BOUND = 400 * 1024 * 1024  # issue 6's whole-ingest bound; the giant line alone must not add to it
AFTER = "after the giant line: wire the zanzibar exporter"


def _record(text: str, stamp: str) -> bytes:
    return orjson.dumps({"type": "user", "uuid": f"u-{stamp}", "sessionId": SESSION, "timestamp": stamp,
                         "cwd": "/home/me/big", "message": {"role": "user", "content": text}}) + b"\n"


def write_big_transcript(path: Path) -> None:
    """Real lines repeated to 200 MB, a 50 MB tool result in the middle, a prompt after it; written in
    1 MB pieces so the test itself stays small too."""
    filler = FILLER.read_bytes()
    giant_head = orjson.dumps({"type": "user", "uuid": "u-giant", "sessionId": SESSION,
                               "timestamp": "2026-02-10T12:00:00Z", "toolUseResult": {"stdout": "..."},
                               "message": {"role": "user", "content": [
                                   {"type": "tool_result", "tool_use_id": "toolu_giant", "content": "@"}]}})
    before, after = giant_head.split(b'"@"')
    piece = b"0123456789abcdef" * 65536
    with path.open("wb") as handle:
        handle.write(_record("start of the big session", "2026-02-10T11:00:00Z"))
        while handle.tell() < (TOTAL_BYTES - GIANT_BYTES) // 2:
            handle.write(filler)
        handle.write(before + b'"')
        for _ in range(GIANT_BYTES // len(piece)):
            handle.write(piece)
        handle.write(b'"' + after + b"\n")
        handle.write(_record(AFTER, "2026-02-10T13:00:00Z"))
        while handle.tell() < TOTAL_BYTES:
            handle.write(filler)


def test_a_200_mb_transcript_with_a_50_mb_line_is_ingested_in_bounded_memory(env: dict[str, Path]) -> None:
    path = env["projects"] / "-home-me-big" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    write_big_transcript(path)
    assert path.stat().st_size >= TOTAL_BYTES
    # Through a small probe process: a child started from this one starts with this process's peak RSS
    # (Linux keeps ru_maxrss across exec), and the test run's own grows with every test before.
    probe = ("import resource, subprocess, sys;"
             "r = subprocess.run([sys.executable, '-m', 'eywa.cli.main', 'ingest'], capture_output=True, text=True);"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode);"
             "print(r.stdout.strip()); print(r.stderr, file=sys.stderr)")
    child = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=os.environ.copy(), capture_output=True,
                           text=True)
    first, _, out = child.stdout.partition("\n")
    rss_kb, code = first.split()
    assert code == "0", child.stderr
    peak = int(rss_kb) * 1024  # kilobytes on Linux
    print(f"peak RSS {peak / 2**20:.0f} MB for {path.stat().st_size / 2**20:.0f} MB; {out.strip()}")
    assert peak < PEAK_RSS_BOUND
    conn = sqlite3.connect(env["data"] / "index.sqlite3")
    prompts = conn.execute("SELECT prompts FROM fulltext WHERE session_uuid = ?", (SESSION,)).fetchone()[0]
    assert "zanzibar exporter" in prompts and "start of the big session" in prompts
    assert conn.execute("SELECT bad_lines FROM sources").fetchall() == [(1,)]  # the giant line, counted
    conn.close()
