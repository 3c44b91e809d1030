"""An ingest's memory does not grow with the number of files it finds: the scan, the grouping and the queue of
sessions to read live in a child process and a temporary file (core/ingest/apart.py, core/ingest/spool.py)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import eywa.core.ingest.run
from eywa.core.index.store import Store
from eywa.core.ingest.run import IngestPaths, ingest
from eywa.core.redaction.scrubber import default_redactor
from eywa.core.sources import CLAUDE_CODE, Source

from .test_ingest_parallel import ZONE

_PER_FILE_BOUND = 100  # bytes; the lists of files, states and sessions took about 1,100 a file in this process


def _queued_peak(tmp_path: Path, files: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """The most memory Python held in this process during a first ingest of `files` empty transcripts, up to the
    moment it starts reading the sessions queued (the reading holds one batch of sessions at a time)."""
    projects = tmp_path / f"projects-{files}" / "-home-u-p"
    projects.mkdir(parents=True)
    for number in range(files):
        (projects / f"00000000-0000-4000-8000-{number:012d}.jsonl").touch()
    data = tmp_path / f"data-{files}"
    store = Store(data / "index.sqlite3")
    paths = IngestPaths((Source(CLAUDE_CODE, projects.parent),), data / "handoffs", data / "archive")
    peaks: list[int] = []
    reading = eywa.core.ingest.run.prepared_in_order

    def measured(*args: object) -> object:
        peaks.append(tracemalloc.get_traced_memory()[1])
        return reading(*args)

    monkeypatch.setattr(eywa.core.ingest.run, "prepared_in_order", measured)
    tracemalloc.start()
    try:
        report = ingest(store, paths, redactor=default_redactor(), zone=ZONE, workers=0)
    finally:
        tracemalloc.stop()
        store.close()
    assert report.files_seen == report.sessions_skipped == files
    return peaks[0]


def _per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> float:
    return (_queued_peak(tmp_path, 2_000, monkeypatch) - _queued_peak(tmp_path, 200, monkeypatch)) / 1_800


def test_ingest_memory_does_not_grow_with_the_files_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _per_file(tmp_path, monkeypatch) < _PER_FILE_BOUND


def test_the_same_measure_sees_the_lists_made_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               ) -> None:
    monkeypatch.setattr(eywa.core.ingest.run, "apart", lambda step, *args: step(*args))
    assert _per_file(tmp_path, monkeypatch) > 5 * _PER_FILE_BOUND
