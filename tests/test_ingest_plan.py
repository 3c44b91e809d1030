"""The plan of an ingest (core/ingest/run.py's `_plan`): after a first ingest, only the sessions it may read are
grouped, so the planning child holds what changed rather than every session of the disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.ingest import run
from eywa.core.ingest.agent_runs import may_link
from eywa.core.sources import CLAUDE_CODE, CODEX
from eywa.core.sources.plugin import SourceFile

from .conftest import CORPUS, link_corpus

MINUTE = 60 * 10**9


def _grouped(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of files each ingest groups from now on (its plan run in this process, to be seen)."""
    counts: list[int] = []
    grouping = run.Groups

    def counted(files: list[SourceFile], sessions: list[str]) -> object:
        counts.append(len(files))
        return grouping(files, sessions)

    monkeypatch.setattr(run, "Groups", counted)
    monkeypatch.setattr(run, "apart", lambda step, *args: step(*args))
    return counts


def test_an_ingest_after_the_first_groups_only_the_sessions_it_reads(env: dict[str, Path],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    link_corpus(env["projects"], 12)
    source = sorted((CORPUS / "entire" / "projects").glob("*/*.jsonl"))[12]
    grown = env["projects"] / "-home-me-grow" / source.name
    grown.parent.mkdir()
    grown.write_bytes(source.read_bytes())
    grouped = _grouped(monkeypatch)
    eywa = Eywa(load_settings())
    assert eywa.ingest().sessions_updated == 13 and grouped == [13]  # a first ingest: every file
    with grown.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "uuid": "new-1", "sessionId": grown.stem,
                                 "timestamp": "2026-02-20T09:00:00Z", "cwd": "/home/me/grow",
                                 "message": {"role": "user", "content": "zanzibar migration follow-up"}}) + "\n")
    forced = sorted((env["data"] / "handoffs").rglob("*.md"))[0].stem
    report = eywa.ingest(force=frozenset({forced}))
    assert sorted(report.updated) == sorted({grown.stem, forced}) and grouped == [13, 2]  # the changed and the forced
    assert eywa.ingest().updated == [] and grouped == [13, 2, 0]


def _file(name: str, agent: str, mtime_ns: int) -> SourceFile:
    return SourceFile(f"/p/{name}.jsonl", 1, mtime_ns, "main", agent)


def test_a_run_of_another_agent_may_be_linked_when_it_or_a_later_claude_code_transcript_changed() -> None:
    claude, run_file = _file("claude", CLAUDE_CODE, 100 * MINUTE), _file("codex", CODEX, 95 * MINUTE)
    assert not may_link([claude, run_file], set())
    assert may_link([claude, run_file], {run_file.location})  # the run itself changed
    assert may_link([claude, run_file], {claude.location})  # its parent's tool_result may have landed since
    assert not may_link([claude, _file("codex", CODEX, 80 * MINUTE)], {claude.location})  # written too long before
    assert not may_link([claude, _file("codex", CODEX, 101 * MINUTE)], {claude.location})  # after: not started by it
    assert not may_link([claude, _file("other", CLAUDE_CODE, 95 * MINUTE)], {claude.location})  # no other agent's
