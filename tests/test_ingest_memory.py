"""An ingest's memory does not grow with the number of files it finds: the scan, the grouping and the queue of
sessions to read live in a child process and a temporary file (core/ingest/apart.py, core/ingest/spool.py)."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
_PER_FILE_BOUND = 100  # bytes; the lists of files, states and sessions took about 1,100 a file in this process


def _queued_peak(tmp: Path, files: int) -> int:
    """The most memory Python held during a first ingest of `files` empty transcripts, up to the moment it starts
    reading the sessions queued (the reading holds one batch of sessions at a time)."""
    import eywa.core.ingest.run as run
    from eywa.core.index.store import Store
    from eywa.core.redaction.scrubber import default_redactor
    from eywa.core.sources import CLAUDE_CODE, Source

    projects = tmp / f"projects-{files}" / "-home-u-p"
    projects.mkdir(parents=True)
    for number in range(files):
        (projects / f"00000000-0000-4000-8000-{number:012d}.jsonl").touch()
    data = tmp / f"data-{files}"
    store = Store(data / "index.sqlite3")
    paths = run.IngestPaths((Source(CLAUDE_CODE, projects.parent),), data / "handoffs", data / "archive")
    peaks: list[int] = []
    reading = run.prepared_in_order

    def measured(*args: object) -> object:
        peaks.append(tracemalloc.get_traced_memory()[1])
        return reading(*args)

    run.prepared_in_order = measured  # type: ignore[assignment]
    tracemalloc.start()
    try:
        report = run.ingest(store, paths, redactor=default_redactor(), zone=ZoneInfo("Europe/Berlin"), workers=0)
    finally:
        tracemalloc.stop()
        store.close()
        run.prepared_in_order = reading
    assert report.files_seen == report.sessions_skipped == files
    return peaks[0]


def per_file_here(tmp: str, in_process: bool) -> float:
    """Bytes held per file found, 200 files against 2,000; `in_process`: the planning step not forked apart."""
    import eywa.core.ingest.run as run

    if in_process:
        run.apart = lambda step, *args: step(*args)  # type: ignore[assignment]
    return (_queued_peak(Path(tmp), 2_000) - _queued_peak(Path(tmp), 200)) / 1_800


def _per_file(tmp_path: Path, in_process: bool = False) -> float:
    # A fresh interpreter: a thread another test left running would rightly keep the ingest from forking.
    code = f"from tests.test_ingest_memory import per_file_here; print(per_file_here({str(tmp_path)!r}, {in_process}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


def test_ingest_memory_does_not_grow_with_the_files_found(tmp_path: Path) -> None:
    assert _per_file(tmp_path) < _PER_FILE_BOUND


def test_the_same_measure_sees_the_lists_made_in_this_process(tmp_path: Path) -> None:
    assert _per_file(tmp_path, in_process=True) > 5 * _PER_FILE_BOUND


def test_the_planning_child_leaves_what_it_inherits_to_the_parents_pages() -> None:
    # Unfrozen, the child's collector visits every inherited object and copies the pages that hold them.
    code = ("import gc; from eywa.core.ingest.apart import apart, can_fork; "
            "print(can_fork(), apart(gc.get_freeze_count) > 0, gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "0"]  # frozen in the child only


def test_the_report_holds_the_updated_sessions_ids_in_less_than_a_list_of_them() -> None:
    import uuid

    from eywa.core.ingest.run import IngestReport

    report = IngestReport()
    tracemalloc.start()
    try:
        for number in range(10_000):
            report.add_updated(str(uuid.UUID(int=number)))  # a new string each, as each session stored gives
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert report.updated == [str(uuid.UUID(int=number)) for number in range(10_000)]
    assert held < 50 * 10_000  # a list kept each string: 93 bytes a session


def test_the_reports_ids_are_decoded_once_and_those_added_after_a_read_are_seen() -> None:
    from eywa.core.ingest.run import IngestReport

    report = IngestReport()
    report.add_updated("first")
    read = report.updated
    assert read == ["first"] and report.updated is read and not report._updated  # kept decoded, not decoded again
    report.add_updated("second")
    assert report.updated == ["first", "second"] and "first" not in report.to_json()
