"""SessionEnd marks (`<data_dir>/pending/<id>.json`) are consumed by ingest: forced, then deleted."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.ingest.pending import BadMark, live_session, read_marks, write_mark

from .conftest import CORPUS, link_corpus

ENTIRE = CORPUS / "entire" / "projects"


def hook_json(session_id: str, transcript: Path | None = None) -> dict:
    """The hook's JSON; a mark names the transcript that existed when the session ended, or none at all."""
    named = {"transcript_path": str(transcript)} if transcript is not None else {}
    return {"session_id": session_id, **named, "cwd": "/home/me/cli", "hook_event_name": "SessionEnd",
            "reason": "exit"}


def test_a_marked_session_is_reextracted_and_its_mark_deleted(env: dict[str, Path]) -> None:
    sources = link_corpus(env["projects"], 3)
    eywa = Eywa(load_settings())
    eywa.ingest()
    marked = sources[1].stem
    mark = write_mark(env["data"] / "pending", hook_json(marked))
    assert json.loads(mark.read_text())["session_id"] == marked
    report = eywa.ingest()
    assert report.updated == [marked]  # unchanged on disk, so only the mark made it run
    assert not mark.exists()
    assert eywa.ingest().updated == []


def test_a_mark_of_a_session_not_found_is_kept_until_it_is_too_old_or_its_transcript_is_gone(
        env: dict[str, Path], tmp_path: Path) -> None:
    link_corpus(env["projects"], 1)
    pending = env["data"] / "pending"
    young = write_mark(pending, hook_json("not-here-yet"))
    old = write_mark(pending, hook_json("gone-for-good"))
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    elsewhere = tmp_path / "elsewhere" / "pushed-later.jsonl"  # not under any source yet, but it exists
    elsewhere.parent.mkdir()
    elsewhere.write_text("{}\n")
    waiting = write_mark(pending, hook_json("pushed-later", elsewhere))
    deleted = tmp_path / "deleted.jsonl"
    deleted.write_text("{}\n")
    stale = write_mark(pending, hook_json("deleted-since", deleted))
    deleted.unlink()  # the transcript the mark names is gone: nothing will ever ingest it
    Eywa(load_settings()).ingest()
    assert young.exists() and waiting.exists() and not old.exists() and not stale.exists()
    assert set(read_marks(pending)) == {"not-here-yet", "pushed-later"}


def test_a_mark_outside_an_only_run_waits_for_the_next_ingest(env: dict[str, Path]) -> None:
    sources = link_corpus(env["projects"], 2)
    eywa = Eywa(load_settings())
    eywa.ingest()
    mark = write_mark(env["data"] / "pending", hook_json(sources[0].stem))
    eywa.extract(sources[1].stem)
    assert mark.exists()
    assert eywa.ingest().updated == [sources[0].stem] and not mark.exists()


@pytest.mark.parametrize("bad", ["../../etc/passwd", "", None, 42, "a/b", "-leading-dash"])
def test_a_mark_needs_a_plain_session_id(tmp_path: Path, bad: object) -> None:
    with pytest.raises(BadMark):
        write_mark(tmp_path / "pending", {"session_id": bad})
    assert not any(tmp_path.rglob("*.json"))


def test_unfinished_temp_files_are_not_marks(tmp_path: Path) -> None:
    pending = tmp_path / "pending"
    write_mark(pending, hook_json("abc-123"))
    (pending / ".def-456.999.tmp").write_text("{")
    (pending / "notes.txt").write_text("x")
    assert set(read_marks(pending)) == {"abc-123"}


def test_a_live_note_names_the_session_of_the_process_that_wrote_it_since_it_started(tmp_path: Path) -> None:
    live = tmp_path / "live"
    pid = os.getpid()
    note = write_mark(live, {"session_id": "after-clear-2"}, name=str(pid))
    assert live_session(live, pid) == "after-clear-2"
    os.utime(note, (1_000_000, 1_000_000))  # written before this process started: an earlier process of that pid
    assert live_session(live, pid) is None
    assert live_session(live, pid + 1) is None
