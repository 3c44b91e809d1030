"""The data bench/scale.py measures on: cloned transcripts Eywa reads like the real ones, synthetic handoffs the
original's way that `eywa reindex` imports, and the process-tree measure it reports."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from eywa.core.handoffs.model import parse_handoff
from eywa.core.index.store import Store
from eywa.core.ingest.reindex import reindex

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import process_tree
import scale_data


def test_cloned_transcripts_get_new_ids_and_words_of_their_own_and_stay_valid_jsonl(tmp_path: Path) -> None:
    count, written = scale_data.make_scaled_corpus(tmp_path, 6, 3)
    files = sorted(tmp_path.rglob("*.jsonl"))
    assert count == len(files) == 6 and written == sum(f.stat().st_size for f in files)
    originals = {p.stem for p in scale_data.main_transcripts()}
    texts = []
    for path in files:
        data = path.read_bytes()
        records = [orjson.loads(line) for line in data.splitlines() if line.strip()]
        ids = {r.get("sessionId") for r in records if r.get("sessionId")}
        assert ids <= {path.stem} and path.stem not in originals
        assert not any(stem.encode() in data for stem in originals)  # every id rewritten, the session's first
        texts.append(data)
    # Two clones of one source differ in their words too, not only in their ids.
    again = scale_data.clone(scale_data.main_transcripts()[0], 1)[1]
    other = scale_data.clone(scale_data.main_transcripts()[0], 2)[1]
    assert set(scale_data._PROSE_WORD_RE.findall(again)) != set(scale_data._PROSE_WORD_RE.findall(other))


def test_synthetic_handoffs_are_the_originals_files_and_reindex_imports_them_all(tmp_path: Path) -> None:
    handoffs = tmp_path / "handoffs"
    scale_data.write_handoffs(handoffs, 0, 40)
    files = sorted(handoffs.rglob("*.md"))
    assert len(files) == 40 and all(len(p.stem) == 8 for p in files)  # the original's 8-character ids
    first = parse_handoff(files[0].read_text(encoding="utf-8"))
    assert first.session_id == first.session_id and 5 <= len(first.keywords) <= 7
    store = Store(tmp_path / "index.sqlite3")
    indexed, _, problems = reindex(store, handoffs, tmp_path / "archive")
    assert (indexed, problems) == (40, [])
    assert store.conn.execute("SELECT COUNT(*) FROM handoffs WHERE origin = 'imported'").fetchone()[0] == 40
    # The same index sizes make the same files: a larger size only adds files.
    assert scale_data.handoff_text(7) == scale_data.handoff_text(7)


def test_the_process_tree_measure_counts_a_forked_child_s_memory_once() -> None:
    code = "import os, time; x = bytearray(60_000_000); os.fork() or time.sleep(0.5); time.sleep(0.5)"
    done = process_tree.run([sys.executable, "-c", code])
    # Both processes map the same 60 MB, copy-on-write: PSS counts it once, each one's RSS whole.
    assert 55 < done.max_rss_mb and 55 < done.peak_mb < 110 and done.wall_s >= 0.5
