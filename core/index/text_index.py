"""The full-text search index: BM25 over each session's text, kept by tantivy in a folder beside the
SQLite index and derived from its `fulltext` table.

BM25 over the whole text plus the user's own words, with neighbouring query words scored again where
they occur close together; tantivy rather than SQLite's FTS5, faster and better ranked (bench/RESULTS.md).

SQLite stays the source of truth: triggers queue every changed `fulltext` row in `text_index_queue`
inside the writer's own transaction, and a `Writer` applies the queue to tantivy, then clears it. A
crash between the two leaves the rows queued, applied again by the next writer (a delete and an add are
idempotent); a missing, damaged or older index folder is rebuilt from the table (`ensure`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

import tantivy

from eywa.core.errors import StoreError
from eywa.core.handoffs.fixed_words import SECTION_TITLES, session_words
from eywa.core.retrieval.query_tokens import content_words

if TYPE_CHECKING:
    from eywa.core.index.page_out import Pager

FOLDER_SUFFIX = ".text_index"  # index.sqlite3 -> index.text_index: one folder per SQLite index file
# Fields, tokenizer or what a document holds: a folder written under another version is rebuilt.
# 6: a handoff line another of its lines nearly says counts once (`_handoff_once`); 5: a line said again in one column
# counts once (`_once`); 4: proximity within one message or part (`_APART`); 3: the handoff without the fixed words
VERSION = "6"
# The folder's VERSION and the key of the SQLite index it derives from (kept in its meta table): a
# folder beside a new or replaced index file (`eywa reindex` after deleting it) is rebuilt, never read.
_VERSION_FILE = "eywa-version"

# Ranking, read at call time so a benchmark can set them; quality is flat around these (bench/RESULTS.md).
PROMPTS_WEIGHT = 0.3  # BM25 of what the user wrote, added to that of the whole text
PROXIMITY_SLOP = 10  # neighbouring query words this many words apart or closer score again (0: off)
PROXIMITY_WEIGHT = 1.0
# Proximity adds at most this many times a session's word score: each pair scores both its words' idf again, so one
# line of a short session that holds most of a long query's words could otherwise outweigh the words themselves.
PROXIMITY_CAP = 1.3
# Proximity rescores the best this many sessions of the word scores only: a phrase query over all is slow.
PROXIMITY_POOL = 100
# A word in more than this share of the sessions weighs almost nothing in BM25 but costs a visit of nearly
# each: left out of the word scores when the query has a rarer word (still counted in proximity).
COMMON_SHARE = 0.9
# Proximity counts query words of one text: the handoff, one prompt, one reply, the actions, the context. Between them
# the body holds more than PROXIMITY_SLOP words the tokenizer drops (over 40 bytes): they keep their positions, so no
# phrase spans two texts, yet are no term and count in no field's length (BM25 unchanged).
_APART = "\n" + " ".join(["x" * 41] * (PROXIMITY_SLOP + 1)) + "\n"
# A handoff line whose content words an earlier line of it already says this closely (F1) is indexed once.
SAID_AGAIN_F1 = 0.8
_KEY_FILES = f"## {SECTION_TITLES['key_files']}"
_EVENTS = "\n\n\n"  # a column's events: core/archive/renderer.py puts a blank line before and after each heading

TERM_FIELDS = ("projects", "keywords")
STAGE_SECONDS = 30.0  # a writer staging longer commits what it has
_WRITER_HEAP = 16_000_000  # what tantivy buffers before it writes a segment, near its least: bounds ingest and reindex
_CHUNK = 500  # rows read from SQLite at a time while staging
# A rebuild commits tantivy's writer once it has handed it this many documents or characters of text since the
# last commit: tantivy queues up to 10,000 documents for its one indexing thread, held in this process's heap, and
# only a commit waits for that queue to drain.
_QUEUE_DOCUMENTS = 2000
_QUEUE_CHARS = 2_000_000
# Up to this many rows one term query each is cheaper than a term set, which reads the whole field.
_FEW_ROWS = 1000


def index_terms(values: list[str]) -> list[str]:
    """A handoff's projects or keywords as the inverted indexes and TERM_FIELDS hold them: lowercased,
    each once, in first-seen order."""
    return list(dict.fromkeys(value.lower() for value in values))


def folder_of(db_path: Path) -> Path:
    return db_path.parent / (db_path.stem + FOLDER_SUFFIX)


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("rid", indexed=True, fast=True)  # the `fulltext` (and handoffs) rowid
    # en_stem: words split on anything not a letter or digit, lowercased, over 40 bytes dropped, stemmed.
    builder.add_text_field("prompts", tokenizer_name="en_stem", index_option="position")
    builder.add_text_field("body", tokenizer_name="en_stem", index_option="position")
    # The handoff's projects and keywords, lowercased, one term each: the `keywords` formula's postings,
    # whose raw sums `term_top` ranks without reading every posting of a common term in SQL.
    for field in TERM_FIELDS:
        builder.add_text_field(field, tokenizer_name="raw", index_option="basic")
    return builder.build()


_ANALYZER: tantivy.TextAnalyzer | None = None


def analyze(text: str) -> list[str]:
    """`text` as the index's en_stem tokenizer splits it: the terms a query must look up."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
                     .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())
    return _ANALYZER.analyze(text)


# -- writing ---------------------------------------------------------------------------------------

def key_of(conn: sqlite3.Connection) -> str:
    """The key that ties a folder to this SQLite index ('' before `ensure` gave it one)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'text_index_key'").fetchone()
    return row[0] if row else ""


def ensure(conn: sqlite3.Connection, folder: Path) -> None:
    """Rebuild the index from the `fulltext` table when its folder is missing, unreadable, of another
    VERSION or of another SQLite index (a new data directory, an upgrade, a user who deleted either);
    then apply what is queued."""
    rebuilt = False
    if not is_current(conn, folder):
        import shutil  # here, not at the top: `eywa get` imports this module and never rebuilds (nor does uuid's
        import uuid  # import of platform belong on its path)

        conn.execute("BEGIN IMMEDIATE")
        try:
            key = key_of(conn)
            if not _current(folder, key):  # another process may have rebuilt it while this one waited
                if not key:
                    key = uuid.uuid4().hex
                    conn.execute("INSERT INTO meta(key, value) VALUES('text_index_key', ?)", (key,))
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                tantivy.Index(_schema(), path=str(folder), reuse=False)
                conn.execute("DELETE FROM text_index_queue")
                conn.execute("INSERT INTO text_index_queue(id) SELECT id FROM fulltext")
                (folder / _VERSION_FILE).write_text(f"{VERSION} {key}", encoding="utf-8")
                rebuilt = True
                conn.execute("PRAGMA shrink_memory")  # a reindex's page caches, not read while tantivy builds
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    writer = Writer(folder, paging_out=rebuilt, bounded_queue=rebuilt)  # a rebuild: large segments, every row
    try:
        writer.stage(conn)
    finally:
        writer.commit(conn)  # what was staged was committed to SQLite, so it may be committed whatever failed after


def ensure_at(db_path: Path) -> None:
    """`ensure` for the SQLite index at `db_path` on a connection of its own: the last step of `eywa reindex`, run
    by a process that imports little else (cli/reindex_build.py). What SQLite or tantivy raise is a StoreError,
    as through the store."""
    from eywa.core.index.connection import open_writer  # here: `eywa get` never writes
    from eywa.core.index.storage_faults import storage_faults

    folder = folder_of(db_path)
    with storage_faults(db_path.parent):
        conn = open_writer(db_path)
        try:
            with faults(folder):
                ensure(conn, folder)
        finally:
            conn.close()


@contextlib.contextmanager
def faults(folder: Path) -> Iterator[None]:
    """What tantivy raises reading or writing `folder` (ValueError, OSError) as a StoreError that says what to do."""
    try:
        yield
    except (ValueError, OSError) as exc:
        raise StoreError(
            f"cannot update the full-text index in {folder} ({exc}); what was stored is kept"
            f" and reaches it on the next run, or delete that folder to have it rebuilt"
        ) from exc


def reset(conn: sqlite3.Connection) -> None:
    """Have the folder rebuilt from the table by the next `ensure` (a new key): what it held is gone from its
    files, deleted documents included, which tantivy keeps in its segments until it merges them."""
    conn.execute("DELETE FROM meta WHERE key = 'text_index_key'")


def is_current(conn: sqlite3.Connection, folder: Path) -> bool:
    """The folder holds the index of this SQLite index, of this VERSION (what is queued aside)."""
    return _current(folder, key_of(conn))


def _current(folder: Path, key: str) -> bool:
    try:
        return (bool(key) and (folder / _VERSION_FILE).read_text(encoding="utf-8") == f"{VERSION} {key}"
                and tantivy.Index.exists(str(folder)))
    except (OSError, ValueError):
        return False


class Writer:
    """Applies the queue to the index: `stage` hands the changed rows to tantivy, which indexes them on
    its own thread while the caller goes on; `commit` makes them visible and takes them off the queue.

    Only committed SQLite rows are staged (callers stage after their COMMIT), and the queue keeps them
    until tantivy has committed them, so a crash anywhere loses nothing. While a writer holds tantivy's
    lock, another process's writer stages nothing: what it queued is staged by the holder's next `stage`
    (queue entries only grow in `seq`) or by the next store opened after.
    """

    def __init__(self, folder: Path, *, paging_out: bool = False, bounded_queue: bool = False) -> None:
        """`paging_out`: while tantivy's writer is open, the pages of the index's files that this process maps
        are handed back (core/index/page_out.py): for a large build, whose merges read large segments.
        `bounded_queue`: tantivy commits every _QUEUE_DOCUMENTS or _QUEUE_CHARS staged, so what waits for its
        indexing thread stays below that (a rebuild stages rows faster than one thread indexes them)."""
        self.folder = folder
        self._bounded_queue = bounded_queue
        self._unindexed = (0, 0)  # documents and characters of text handed to tantivy since its last commit
        self._pager: Pager | None = None
        if paging_out:
            from eywa.core.index import page_out  # here: it imports ctypes, which `eywa get` never needs

            self._pager = page_out.Pager(folder)
        self._writer: tantivy.IndexWriter | None = None
        self._schema: tantivy.Schema | None = None
        self._staged = 0  # the last queue seq staged
        self._opened = 0.0

    def stage(self, conn: sqlite3.Connection) -> int:
        """Hand the changes queued since the last stage to tantivy, a chunk of the queue at a time (a rebuild
        queues every row); how many rows."""
        staged = 0
        while True:
            queued = conn.execute("SELECT seq, id FROM text_index_queue WHERE seq > ? ORDER BY seq LIMIT ?",
                                  (self._staged, _CHUNK)).fetchall()
            if not queued or not self._open():
                return staged
            assert self._writer is not None and self._schema is not None
            ids = sorted({rid for _, rid in queued})
            # Not delete_documents_by_term: it makes a signed term of a Python int, matching no u64 rid.
            self._writer.delete_documents_by_query(tantivy.Query.term_set_query(self._schema, "rid", ids))
            marks = ",".join("?" * len(ids))
            for row in conn.execute(
                    "SELECT f.id, f.handoff, f.prompts, f.replies, f.actions, f.context, h.projects, h.keywords"
                    f" FROM fulltext AS f LEFT JOIN handoffs AS h ON h.rowid = f.id WHERE f.id IN ({marks})", ids):
                self._writer.add_document(_document(*row))
                if self._bounded_queue:
                    self._bound_queue(sum(map(len, row[1:6])))
            self._staged = queued[-1][0]
            staged += len(ids)
            if time.monotonic() - self._opened > STAGE_SECONDS:
                self.commit(conn)  # bounds what a crash leaves to index again

    def _bound_queue(self, chars: int) -> None:
        """Count a document of `chars` handed to tantivy; commit once the bound is reached, which returns when
        tantivy's thread has indexed everything handed to it (not a merge: those go on)."""
        documents, queued = self._unindexed[0] + 1, self._unindexed[1] + chars
        if documents >= _QUEUE_DOCUMENTS or queued >= _QUEUE_CHARS:
            assert self._writer is not None
            self._writer.commit()
            documents = queued = 0
        self._unindexed = (documents, queued)

    def commit(self, conn: sqlite3.Connection) -> None:
        """Make what was staged searchable, take it off the queue, and release tantivy's lock."""
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        self._unindexed = (0, 0)
        try:
            writer.commit()
            writer.wait_merging_threads()  # also releases the lock
        finally:
            if self._pager is not None:
                self._pager.stop()
        conn.execute("DELETE FROM text_index_queue WHERE seq <= ?", (self._staged,))

    def _open(self) -> bool:
        if self._writer is None:
            index = tantivy.Index.open(str(self.folder))
            try:
                self._writer = index.writer(heap_size=_WRITER_HEAP, num_threads=1)
            except ValueError as exc:
                if "LockBusy" not in str(exc):
                    raise
                return False  # another process is writing the index: it stages this queue too
            self._schema = index.schema
            self._opened = time.monotonic()
            if self._pager is not None:
                self._pager.start()
        return True


def _document(rid: int, handoff: str, prompts: str, replies: str, actions: str, context: str,
              projects: str | None, keywords: str | None) -> tantivy.Document:
    document = tantivy.Document()
    document.add_unsigned("rid", rid)
    asked, said = _once(prompts.split(_EVENTS)), _once(replies.split(_EVENTS))
    document.add_text("prompts", _EVENTS.join(asked))
    # The handoff's own words: the labels and fixed phrases the extractor writes in nearly every handoff say nothing
    # of this session and would weigh in every query holding one of their words.
    texts = (_handoff_once(session_words(handoff)), *asked, *said, actions, context)
    document.add_text("body", _APART.join(texts))
    for field, terms in zip(TERM_FIELDS, (projects, keywords), strict=True):
        for term in index_terms(json.loads(terms or "[]")):
            document.add_text(field, term)
    return document


def _once(events: list[str]) -> list[str]:
    """`events` without the lines said verbatim earlier in them: an error the user pasted twice, a banner or summary
    line printed again, weighs as said once, not as a session about its words."""
    seen: set[str] = set()
    kept = []
    for event in events:
        lines = []
        for line in event.split("\n"):
            key = line.strip()
            if not key or key not in seen:
                seen.add(key)
                lines.append(line)
        kept.append("\n".join(lines))
    return kept


def _handoff_once(handoff: str) -> str:
    """`handoff` without the lines an earlier line of it says nearly word for word (a report's change line an Insight
    repeats): the session weighs as having said them once. Key Files lines are kept: paths share most of their words."""
    said: list[set[str]] = []
    kept = []
    files = False
    for line in handoff.split("\n"):
        if line.startswith("## "):
            files = line.rstrip() == _KEY_FILES
        if files:
            kept.append(line)
            continue
        words = content_words(line)
        if len(words) < 2 or all(_f1(words, earlier) < SAID_AGAIN_F1 for earlier in said):
            kept.append(line)
        if len(words) >= 2:  # a one-word line reaches F1 2/3 at most against a longer one: never says one again
            said.append(words)
    return "\n".join(kept)


def _f1(a: set[str], b: set[str]) -> float:
    """The harmonic mean of the shares of `a` in `b` and of `b` in `a`."""
    return 2 * len(a & b) / (len(a) + len(b))


# -- searching -------------------------------------------------------------------------------------

# Open indexes by (folder, key), least recently used first: a process reads one data directory, a test
# run hundreds, each open index holding its files' maps.
_OPEN: OrderedDict[tuple[Path, str], tantivy.Index] = OrderedDict()
_OPEN_SIZE = 4
_OPEN_LOCK = threading.Lock()


def search(folder: Path, key: str, phrases: list[str], limit: int, *, only: Collection[int] | None = None
           ) -> list[tuple[int, float]]:
    """The best `limit` rows for the query `phrases` (words, or several words to be found in sequence),
    as (rowid, score), best first; within `only` if given. Nothing when the folder is not the current
    index of the SQLite index of `key` (`key_of`): not built yet, or being rebuilt."""
    units = [terms for terms in map(analyze, phrases) if terms]
    index = _index(folder, key)
    if not units or index is None or limit <= 0 or (only is not None and not only):
        return []
    Q, must = tantivy.Query, tantivy.Occur.Must
    schema = index.schema
    searcher = index.searcher()
    common = searcher.num_docs * COMMON_SHARE
    rarer = [terms for terms in units if len(terms) > 1 or searcher.doc_freq("body", terms[0]) <= common]
    depth = max(limit, PROXIMITY_POOL if PROXIMITY_SLOP else 0)
    hits = searcher.search(_words_query(schema, rarer or units, rarer, only), depth, count=False).hits
    scores: dict[int, float] = dict(zip(_rowids(searcher, hits), (score for score, _ in hits), strict=True))
    if PROXIMITY_SLOP and PROXIMITY_WEIGHT and scores:
        pool = _within(schema, scores)
        near_by: dict[int, float] = dict.fromkeys(scores, 0.0)
        for a, b in itertools.pairwise(units):
            if len(a) == 1 and len(b) == 1:
                near = Q.boost_query(Q.phrase_query(schema, "body", [a[0], b[0]], slop=PROXIMITY_SLOP),
                                     PROXIMITY_WEIGHT)
                # One search a pair: under one Should, tantivy would walk both phrases' matches in full.
                found = searcher.search(Q.boolean_query([(must, near), (must, pool)]), len(scores), count=False).hits
                for rid, (score, _) in zip(_rowids(searcher, found), found, strict=True):
                    near_by[rid] += score
        for rid, near_score in near_by.items():
            scores[rid] += min(near_score, PROXIMITY_CAP * scores[rid])
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


def _words_query(schema: tantivy.Schema, units: list[list[str]], rarer: list[list[str]],
                 only: Collection[int] | None) -> tantivy.Query:
    """BM25 of `units` over the whole text, plus PROMPTS_WEIGHT times over the user's words."""
    Q, should = tantivy.Query, tantivy.Occur.Should
    # A query of common words only scores them over the whole text alone: their weight in the user's
    # words would be a share of almost nothing, at the price of another pass over nearly every session.
    fields = (("body", 1.0), ("prompts", PROMPTS_WEIGHT)) if rarer else (("body", 1.0),)
    clauses = []
    for terms in units:
        for field, weight in fields:
            if weight > 0:
                query = (Q.term_query(schema, field, terms[0]) if len(terms) == 1
                         else Q.phrase_query(schema, field, cast("list[str | tuple[int, str]]", terms)))
                clauses.append((should, Q.boost_query(query, weight)))
    return _restricted(schema, Q.boolean_query(clauses), only)


def _rowids(searcher: tantivy.Searcher, hits: list[tuple[float, tantivy.DocAddress]]) -> list[int]:
    """The handoff rowids of `hits`, read from the fast field `rid`."""
    return cast(list[int], searcher.fast_field_values("rid", [address for _, address in hits]))


def term_top(folder: Path, key: str, weights: dict[tuple[str, str], float], limit: int, *,
             only: Collection[int] | None = None) -> list[tuple[int, float]]:
    """The best `limit` rows by the sum of `weights` ((field of TERM_FIELDS, term) -> weight) of the terms
    each lists, as (rowid, sum), best first; within `only` if given. Sums are tantivy's float32."""
    index = _index(folder, key)
    if not weights or index is None or limit <= 0 or (only is not None and not only):
        return []
    Q = tantivy.Query
    schema = index.schema
    query = _restricted(schema, Q.boolean_query([
        (tantivy.Occur.Should, Q.const_score_query(Q.term_query(schema, field, term), weight))
        for (field, term), weight in weights.items()]), only)
    searcher = index.searcher()
    hits = searcher.search(query, limit, count=False).hits
    return sorted(zip(_rowids(searcher, hits), (score for score, _ in hits), strict=True),
                  key=lambda item: (-item[1], item[0]))


def _restricted(schema: tantivy.Schema, query: tantivy.Query, only: Collection[int] | None) -> tantivy.Query:
    """`query` over the rows `only` (None: every row), scored as `query` alone."""
    if only is None:
        return query
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, _within(schema, only))])


def _within(schema: tantivy.Schema, rids: Collection[int]) -> tantivy.Query:
    """Matches the rows `rids`, adding nothing to a score."""
    Q = tantivy.Query
    if len(rids) > _FEW_ROWS:
        rows = Q.term_set_query(schema, "rid", list(rids))
    else:
        rows = Q.boolean_query([(tantivy.Occur.Should, Q.term_query(schema, "rid", rid)) for rid in rids])
    return Q.const_score_query(rows, 0.0)


def _readable(folder: Path) -> Path:
    """`folder`, or where it cannot be written (a read-only mount), a private stand-in of links to its files:
    opening an index takes tantivy's lock file beside them, which it must be able to create or write."""
    if os.access(folder, os.W_OK):
        return folder
    import atexit
    import shutil
    import tempfile

    stand_in = Path(tempfile.mkdtemp(prefix="eywa-text-index-"))
    atexit.register(shutil.rmtree, stand_in, True)
    for item in folder.iterdir():
        if not item.name.endswith(".lock"):
            (stand_in / item.name).symlink_to(item)
    return stand_in


def _index(folder: Path, key: str) -> tantivy.Index | None:
    """The open index of `folder`, reloaded to its last commit (cheap enough for every search)."""
    with _OPEN_LOCK:
        index = _OPEN.get((folder, key))
        if index is None:
            if not _current(folder, key):
                return None
            index = _OPEN[(folder, key)] = tantivy.Index.open(str(_readable(folder)))
            while len(_OPEN) > _OPEN_SIZE:
                _OPEN.popitem(last=False)
        _OPEN.move_to_end((folder, key))
    index.reload()
    return index
