"""`eywa reindex` builds the full-text index last in a lean program that replaces its process (cli/reindex_build.py):
the same index, report and exit code as a build in process, and a build that fails or is killed leaves the store
as a crash does, which the next store opened completes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eywa.cli import reindex_build
from eywa.cli.main import main
from eywa.core.index import readonly, text_index
from eywa.core.index.store import Store
from eywa.core.ingest.reindex import reindex

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import scale_data

pytestmark = pytest.mark.slow  # starts the real program, several times

REPORT = "{} handoffs indexed; 0 files skipped\n"
QUERIES = [["headline"], ["did"], [scale_data.word(3)], [scale_data.word(1), scale_data.word(2)], ["headline 3"]]
# Modules of the whole command line that the build does not need: the lean program must not import them.
HEAVY = ("pydantic", "orjson", "eywa.core.api", "eywa.core.index.store", "eywa.core.config.settings")


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "PYTHONPROFILEIMPORTTIME"))}
    env.update(HOME=str(data.parent / "home"), EYWA_DATA_DIR=str(data), EYWA_PROJECTS_DIR=str(data.parent / "none"),
               EYWA_NOW="2026-12-02")
    return env


def _data(tmp_path: Path, name: str, count: int) -> Path:
    data = tmp_path / name
    scale_data.write_handoffs(data / "handoffs", 0, count)
    data.chmod(0o700)  # else each run warns that others can read it
    return data


def _reindex(data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eywa.cli.main", "reindex"], cwd=ROOT, env=_env(data) | env,
                          text=True, capture_output=True, timeout=300)


def _found(data: Path) -> dict[str, list[tuple[str, float]]]:
    """What the full-text index finds for the queries, by session, and how many documents it holds."""
    conn = readonly.open_index(data / "index.sqlite3")
    assert conn is not None
    try:
        names = dict(conn.execute("SELECT rowid, session_uuid FROM handoffs"))
        folder, key = text_index.folder_of(data / "index.sqlite3"), text_index.key_of(conn)
        found = {" ".join(query): sorted((names[rid], round(score, 5)) for rid, score in
                                         text_index.search(folder, key, query, 1000)) for query in QUERIES}
        found["kw"] = sorted((names[rid], score) for rid, score in text_index.term_top(
            folder, key, {("keywords", scale_data.keyword(0)): 1.0, ("projects", scale_data.project(1)): 0.5}, 1000))
    finally:
        conn.close()
    assert any(found.values())
    return found


def _imports(log: str) -> list[set[str]]:
    """The modules each interpreter of the process imported, from `-X importtime`'s log, in order."""
    interpreters: list[set[str]] = []
    for line in log.splitlines():
        if line.startswith("import time: self [us]"):  # the header each interpreter starts with
            interpreters.append(set())
        elif line.startswith("import time:"):
            interpreters[-1].add(line.rsplit("|", 1)[1].strip())
    return interpreters


def test_the_program_builds_the_full_text_index_in_a_lean_program_that_replaces_it(tmp_path: Path) -> None:
    data = _data(tmp_path, "data", 300)
    done = _reindex(data, PYTHONPROFILEIMPORTTIME="1")
    assert done.returncode == 0 and done.stdout == REPORT.format(300), done.stderr[-2000:]
    whole, lean = _imports(done.stderr)  # two interpreters one after the other: the command line, then the build
    assert {"eywa.core.api", "eywa.core.index.store"} <= whole
    assert {"tantivy", "sqlite3", "eywa.core.index.text_index"} <= lean and not lean & set(HEAVY)


def test_the_lean_build_makes_the_index_report_and_exit_code_of_a_build_in_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lean, in_process = _data(tmp_path, "lean", 400), _data(tmp_path, "in-process", 400)
    done = _reindex(lean)
    for name, value in _env(in_process).items():
        monkeypatch.setenv(name, value)
    code = main(["reindex"])  # a call with arguments: this process is not replaced, the build runs in it
    assert (done.returncode, done.stdout, done.stderr) == (code, *capsys.readouterr())
    assert done.stdout == REPORT.format(400)
    assert _found(lean) == _found(in_process)


def test_a_lean_build_that_fails_says_so_once_and_the_next_store_completes_the_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference, data = _data(tmp_path, "reference", 200), _data(tmp_path, "data", 200)
    assert _reindex(reference).returncode == 0
    store = Store(data / "index.sqlite3")
    assert reindex(store, data / "handoffs", data / "archive", build_text_index=False)[0] == 200
    store.close()
    folder = text_index.folder_of(data / "index.sqlite3")
    shutil.rmtree(folder)
    folder.write_text("in the way")  # the build cannot make its folder
    assert reindex_build.main([str(data / "index.sqlite3"), "never printed"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"eywa: cannot update the full-text index in {folder}")
    folder.unlink()
    Store(data / "index.sqlite3").close()  # what any next command does first
    assert _found(data) == _found(reference)


def test_a_lean_build_killed_midway_leaves_what_the_next_store_completes(tmp_path: Path) -> None:
    reference, data = _data(tmp_path, "reference", 3000), _data(tmp_path, "data", 3000)
    assert _reindex(reference).returncode == 0
    program = subprocess.Popen([sys.executable, "-m", "eywa.cli.main", "reindex"], cwd=ROOT, env=_env(data),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    version = text_index.folder_of(data / "index.sqlite3") / "eywa-version"
    first = None
    while program.poll() is None:  # killed once the lean program has started its build (a new key)
        try:
            current = version.read_text(encoding="utf-8")
        except OSError:
            current = None
        first = first or current
        if current != first and b"reindex_build" in Path(f"/proc/{program.pid}/cmdline").read_bytes():
            os.kill(program.pid, signal.SIGKILL)
            break
        time.sleep(0.002)
    out, _ = program.communicate()
    assert program.returncode == -signal.SIGKILL and out == ""
    conn = readonly.open_index(data / "index.sqlite3")
    assert conn is not None
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok" and readonly.handoff_count(conn) == 3000
    conn.close()
    Store(data / "index.sqlite3").close()
    assert _found(data) == _found(reference)
