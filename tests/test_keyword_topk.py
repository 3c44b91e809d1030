"""The top k of the `keywords` formula, read from weekly blocks of postings, is exactly what scoring every
posting returns; the blocks follow every change to the inverted indexes."""

from __future__ import annotations

import datetime as dt
import math
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from eywa.core.handoffs.model import Handoff
from eywa.core.index.store import SCHEMA_VERSION, Store
from eywa.core.index.term_blocks import IndexBounds, fill_blocks
from eywa.core.retrieval import keyword_topk, scorer
from eywa.core.retrieval.keyword_topk import Multipliers, Term

NOW = dt.date(2025, 6, 15)
VOCABULARY = [f"kw{i:02d}" for i in range(40)]  # query tokens under 3 characters are dropped
PROJECTS = ["alpha", "beta", "alphabet", "gamma"]


def _zipf(rng: random.Random, items: list[str]) -> str:
    return items[min(len(items) - 1, int(math.exp(rng.random() * math.log(len(items)))) - 1)]


def _fill(store: Store, rng: random.Random, count: int) -> None:
    """Handoffs with Zipf-common keywords, dates over a year (some ahead of now), substance 0 to 2."""
    with store.transaction():
        for i in range(count):
            uid = f"{i:04d}-{rng.randrange(10**6):06d}"
            handoff = Handoff(
                short_id=uid[:8], session_id=uid, date=NOW - dt.timedelta(days=rng.randint(-3, 365)),
                duration=f"{rng.choice([0, 1, 5, 30, 240])}m", headline=f"h {uid}",
                projects=sorted({_zipf(rng, PROJECTS) for _ in range(rng.randint(0, 2))}),
                keywords=sorted({_zipf(rng, VOCABULARY) for _ in range(rng.randint(1, 6))}),
                substance=rng.choice([0, 1, 2, 2]), what_happened=["x"],
            )
            store.put_handoff(handoff, path=f"{uid}.md")


def _brute_force(conn: sqlite3.Connection, terms: list[Term], m: Multipliers, k: int, project: str | None,
                 window: tuple[str, str] | None = None, prefer: tuple[str, str] | None = None,
                 ) -> list[tuple[str, float]]:
    """Every posting scored, the formula written out (docs/architecture.md, "The keywords formula"); only the days of
    `window` (ISO, both included), those of `prefer` times 1 + scorer.PREFERRED_BOOST."""
    raw: dict[str, float] = {}
    for term in terms:
        column = "project" if term.table == "project_index" else "keyword"
        for (uid,) in conn.execute(f"SELECT session_uuid FROM {term.table} WHERE {column} = ?", (term.term,)):
            raw[uid] = raw.get(uid, 0.0) + term.weight
    rows = []
    for uid, value in raw.items():
        date, minutes, substance = conn.execute(
            "SELECT date, duration_min, substance FROM handoffs WHERE session_uuid = ?", (uid,)).fetchone()
        names = [name for (name,) in conn.execute("SELECT project FROM project_index WHERE session_uuid = ?", (uid,))]
        if substance <= 0 or (project is not None and not any(project in name for name in names)):
            continue
        if window is not None and not window[0] <= date <= window[1]:
            continue
        age = max(1.0, float((m.now - dt.date.fromisoformat(date)).days + 1))
        inside = m.days_back is None or age <= m.days_back  # no window: the bounded boost alone
        recency = 1 + m.boost / math.sqrt(age) if inside else 0.5 ** ((age - m.days_back) / 7)
        preferred = 1 + scorer.PREFERRED_BOOST if prefer is not None and prefer[0] <= date <= prefer[1] else 1
        rows.append((uid, value * recency * preferred * (1 + m.duration_boost * math.log(minutes + 1)), date))
    rows.sort(key=lambda row: (-row[1], _desc(row[2]), row[0]))
    return [(uid, score) for uid, score, _ in rows[:k]]


def _desc(date: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in date)


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "i.db")
    _fill(store, random.Random(5), 300)
    yield store
    store.close()


def _project_rows(conn: sqlite3.Connection, project: str | None) -> list[int] | None:
    if project is None:
        return None
    return [rowid for (rowid,) in conn.execute(
        "SELECT h.rowid FROM handoffs AS h WHERE EXISTS (SELECT 1 FROM project_index AS p"
        " WHERE p.session_uuid = h.session_uuid AND instr(p.project, ?) > 0)", (project,))]


def _random_terms(conn: sqlite3.Connection, rng: random.Random) -> list[Term]:
    df = dict(conn.execute("SELECT keyword, COUNT(*) FROM keyword_index GROUP BY keyword"))
    pdf = dict(conn.execute("SELECT project, COUNT(*) FROM project_index GROUP BY project"))
    terms = [Term("keyword_index", kw, rng.uniform(0.5, 8.0), df[kw])
             for kw in rng.sample(sorted(df), rng.randint(1, 12))]
    return terms + [Term("project_index", p, rng.uniform(0.5, 8.0), pdf[p])
                    for p in rng.sample(sorted(pdf), rng.randint(0, 2))]


@pytest.mark.parametrize("read_postings", [keyword_topk.READ_POSTINGS, 0, 40])
@pytest.mark.parametrize("seed", range(16))
def test_top_equals_scoring_every_posting(filled: Store, seed: int, read_postings: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Also with the common terms left to the handoffs' own lists (`read_postings` 0: all but the heaviest)."""
    monkeypatch.setattr(keyword_topk, "READ_POSTINGS", read_postings)
    rng = random.Random(seed)
    conn = filled.conn
    terms = _random_terms(conn, rng)
    m = Multipliers(NOW, rng.choice([1, 7, 14, 60, 400, None]), rng.choice([0.0, 0.05, 1.0]), rng.choice([0.0, 0.1]))
    k, offset = rng.choice([1, 3, 5, 20]), rng.choice([0, 0, 2])
    project = rng.choice([None, None, "alpha", "gam"])
    found = keyword_topk.top(conn, terms, m, IndexBounds.read(conn), limit=k, offset=offset,
                             only=_project_rows(conn, project))
    expected = _brute_force(conn, terms, m, k + offset, project)[offset:]
    assert [hit.session_id for hit in found] == [uid for uid, _ in expected]
    assert [hit.score for hit in found] == pytest.approx([score for _, score in expected], rel=1e-12)


def test_top_reads_only_the_recent_weeks_that_can_reach_the_top(filled: Store,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    conn = filled.conn
    weeks = conn.execute("SELECT COUNT(DISTINCT week) FROM term_blocks").fetchone()[0]
    windows: list[tuple[int, int | None]] = []
    score_weeks = keyword_topk._score_weeks

    def counted(conn: sqlite3.Connection, names: dict[str, str], weights: dict[tuple[str, str], float],
                first: int, newer: int | None, *rest: object) -> object:
        windows.append((first, newer))
        return score_weeks(conn, names, weights, first, newer, *rest)

    monkeypatch.setattr(keyword_topk, "_score_weeks", counted)
    common = conn.execute("SELECT keyword FROM keyword_index GROUP BY keyword ORDER BY COUNT(*) DESC").fetchone()[0]
    terms = [Term("keyword_index", common, 2.0, 0)]
    m = Multipliers(NOW, 14, 1.0, 0.1)
    found = keyword_topk.top(conn, terms, m, IndexBounds.read(conn), limit=3)
    assert [h.session_id for h in found] == [uid for uid, _ in _brute_force(conn, terms, m, 3, None)]
    read = sum((newer if newer is not None else windows[0][0] + 3) - first for first, newer in windows)
    assert read < weeks / 4  # a year of weeks; a term in every other handoff is settled within weeks


@pytest.mark.parametrize("read_postings", [keyword_topk.READ_POSTINGS, 0])
@pytest.mark.parametrize("query", ["kw01", "kw00 kw03", "kw01 kw02 kw17", "alpha kw05", "kw0", "kw03 gamma"])
def test_rank_keywords_equals_scoring_every_posting(filled: Store, query: str, read_postings: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Through `rank`: the query's terms and their idf weights, paging and the project filter."""
    monkeypatch.setattr(keyword_topk, "READ_POSTINGS", read_postings)
    conn = filled.conn
    month_ago, weeks_ago = NOW - dt.timedelta(days=30), NOW - dt.timedelta(days=130)
    for kwargs in ({}, {"days_back": 60}, {"offset": 2}, {"project": "alpha"},
                   {"since": weeks_ago, "until": month_ago}, {"prefer": (weeks_ago, month_ago)},
                   {"prefer": (weeks_ago, month_ago), "offset": 3, "project": "alpha"}):
        found = scorer.rank(conn, query, mode="keywords", now=NOW, max_results=5, **kwargs)
        p = scorer._Params(conn, scorer.tokenize_query(query), [], NOW, int(kwargs.get("days_back", 14)),
                           scorer.readonly.Filters(), 0.0, 0)
        weights, df = scorer._term_weights(p)
        terms = [Term(table, term, w, df[(table, term)]) for (table, term), w in weights.items()]
        m = Multipliers(NOW, p.days_back, scorer.KEYWORDS_RECENCY_BOOST, scorer.KEYWORDS_DURATION_BOOST)
        offset = int(kwargs.get("offset", 0))
        window = (weeks_ago.isoformat(), month_ago.isoformat())
        expected = _brute_force(conn, terms, m, 5 + offset, kwargs.get("project"),  # type: ignore[arg-type]
                                window=window if "since" in kwargs else None,
                                prefer=window if "prefer" in kwargs else None)[offset:]
        assert expected
        assert [h.session_id for h in found] == [uid for uid, _ in expected]
        assert [h.score for h in found] == pytest.approx([score for _, score in expected], rel=1e-12)


@pytest.mark.parametrize(("k", "days_back"), [(1, 14), (2, 14), (2, 60)])
def test_a_common_term_is_not_read_when_the_handoffs_found_settle_the_top(filled: Store, k: int, days_back: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A light term of many postings beside a heavy rare one: only the rare one's blocks are read, the handoffs
    found are completed from their own lists, and the top is what scoring every posting gives."""
    conn = filled.conn
    df = dict(conn.execute("SELECT keyword, COUNT(*) FROM keyword_index GROUP BY keyword"))
    common = max(df, key=df.__getitem__)
    recent = [kw for (kw,) in conn.execute(
        "SELECT k.keyword FROM keyword_index AS k JOIN handoffs AS h ON h.session_uuid = k.session_uuid"
        " WHERE h.substance > 0 AND h.date BETWEEN ? AND ?", ((NOW - dt.timedelta(days=10)).isoformat(), str(NOW)))]
    rare = sorted(recent, key=df.__getitem__)[:2]  # in recent handoffs: they win the top
    terms = [Term("keyword_index", common, 0.2, df[common]),
             *(Term("keyword_index", word, 9.0, df[word]) for word in rare)]
    monkeypatch.setattr(keyword_topk, "READ_POSTINGS", sum(df[word] for word in rare))
    read: list[str] = []
    score_weeks = keyword_topk._score_weeks

    def counted(conn: sqlite3.Connection, names: dict[str, str], *rest: object) -> object:
        read.append(names["k"])
        return score_weeks(conn, names, *rest)

    monkeypatch.setattr(keyword_topk, "_score_weeks", counted)
    m = Multipliers(NOW, days_back, 1.0, 0.1)
    found = keyword_topk.top(conn, terms, m, IndexBounds.read(conn), limit=k)
    expected = _brute_force(conn, terms, m, k, None)
    assert [h.session_id for h in found] == [uid for uid, _ in expected]
    assert [h.score for h in found] == pytest.approx([score for _, score in expected], rel=1e-12)
    assert read and all(common not in names for names in read)


@pytest.mark.parametrize("seed", range(8))
def test_reading_every_posting_after_the_first_pass_reads_no_block_twice(filled: Store, seed: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """When the handoffs found cannot settle the top (`_completed` gives up), every term is read: the blocks the
    first pass read are kept, not read again, and the top is still what scoring every posting gives."""
    monkeypatch.setattr(keyword_topk, "READ_POSTINGS", 0)
    monkeypatch.setattr(keyword_topk, "_completed", lambda *args: None)
    read: list[tuple[str, str, int]] = []
    blocks = keyword_topk.blocks

    def counted(*args: object) -> Iterator[object]:
        for block in blocks(*args):  # type: ignore[arg-type]
            read.append((str(args[1]), block.term, block.week))
            yield block

    monkeypatch.setattr(keyword_topk, "blocks", counted)
    rng = random.Random(seed)
    conn = filled.conn
    terms = _random_terms(conn, rng)
    m = Multipliers(NOW, rng.choice([1, 14, 60, None]), rng.choice([0.0, 1.0]), rng.choice([0.0, 0.1]))
    project = rng.choice([None, "alpha"])
    found = keyword_topk.top(conn, terms, m, IndexBounds.read(conn), limit=3, only=_project_rows(conn, project))
    expected = _brute_force(conn, terms, m, 3, project)
    assert [hit.session_id for hit in found] == [uid for uid, _ in expected]
    assert [hit.score for hit in found] == pytest.approx([score for _, score in expected], rel=1e-12)
    assert read and len(read) == len(set(read))


def test_the_handoffs_found_for_completing_are_only_those_the_filters_keep(filled: Store,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_topk, "READ_POSTINGS", 0)
    completing: list[set[int]] = []
    completed = keyword_topk._completed

    def seen(conn: sqlite3.Connection, parts: dict[int, object], *rest: object) -> object:
        completing.append(set(parts))
        return completed(conn, parts, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(keyword_topk, "_completed", seen)
    conn = filled.conn
    allowed = _project_rows(conn, "alpha")
    assert allowed is not None
    for seed in range(8):
        terms = _random_terms(conn, random.Random(seed))
        keyword_topk.top(conn, terms, Multipliers(NOW, 14, 1.0, 0.1), IndexBounds.read(conn), limit=3, only=allowed)
    assert completing and any(completing) and all(found <= set(allowed) for found in completing)


def _blocks(conn: sqlite3.Connection) -> dict[tuple[str, str, int], list[str]]:
    """Every block's records, in no particular order."""
    return {(kind, term, week): sorted(docs.split(" ")[1:])
            for kind, term, week, docs in conn.execute("SELECT kind, term, week, docs FROM term_blocks")}


def test_blocks_follow_every_replace_and_delete(filled: Store) -> None:
    conn = filled.conn
    rng = random.Random(9)
    uids = [uid for (uid,) in conn.execute("SELECT session_uuid FROM handoffs ORDER BY session_uuid")]
    with filled.transaction():
        for uid in rng.sample(uids, 40):
            filled.delete_handoff(uid)
    _fill(filled, random.Random(5), 120)  # the same ids as the first 120: each replaced, some with new terms
    kept = _blocks(conn)
    assert kept and all(kept.values())  # no empty block left behind
    with filled.transaction():
        fill_blocks(conn)  # written afresh from the inverted indexes
    assert _blocks(conn) == kept
    with filled.transaction():
        filled.clear_index()
    assert conn.execute("SELECT COUNT(*) FROM term_blocks").fetchone()[0] == 0


def _downgrade_to_schema_2(path: Path) -> None:
    """The index as an eywa of schema 2 left it: inverted indexes without date, duration and substance."""
    conn = sqlite3.connect(path)
    for table in ("project_index", "keyword_index"):
        conn.execute(f"DROP TRIGGER {table}_blocks_insert")
        conn.execute(f"DROP TRIGGER {table}_blocks_delete")
    conn.execute("DROP TABLE term_blocks")
    for table in ("project_index", "keyword_index"):
        for dropped in ("date", "duration_min", "substance"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN {dropped}")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.execute("DROP TABLE migrations")  # as releases before migrations left it
    conn.commit()
    conn.close()


def test_schema_2_index_gains_posting_dates(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    store = Store(path)
    _fill(store, random.Random(1), 20)
    blocks = _blocks(store.conn)
    store.close()
    _downgrade_to_schema_2(path)
    store = Store(path)
    assert store.get_meta("schema_version") == SCHEMA_VERSION
    assert _blocks(store.conn) == blocks  # and the weekly blocks of schema 5
    mismatched = store.conn.execute(
        "SELECT COUNT(*) FROM keyword_index AS k JOIN handoffs AS h USING(session_uuid)"
        " WHERE (k.date, k.duration_min, k.substance) IS NOT (h.date, h.duration_min, h.substance)").fetchone()[0]
    assert mismatched == 0
    assert store.conn.execute("SELECT COUNT(*) FROM keyword_index").fetchone()[0] > 20
    assert IndexBounds.read(store.conn) == IndexBounds.scan(store.conn)
    store.close()


def test_index_bounds_kept_cover_every_handoff(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.db")
    _fill(store, random.Random(2), 60)
    assert IndexBounds.read(store.conn) == IndexBounds.scan(store.conn)
    with store.transaction():
        for (uid,) in store.conn.execute("SELECT session_uuid FROM handoffs").fetchall()[:30]:
            store.delete_handoff(uid)
    kept, actual = IndexBounds.read(store.conn), IndexBounds.scan(store.conn)
    assert kept.max_duration >= actual.max_duration
    assert kept.max_keywords >= actual.max_keywords
    assert kept.max_projects >= actual.max_projects
    store.close()


def test_eywa_get_migrates_an_index_an_older_eywa_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from eywa.cli.main import main

    data = tmp_path / "data"
    store = Store(data / "index.sqlite3")
    _fill(store, random.Random(1), 20)
    store.close()
    _downgrade_to_schema_2(data / "index.sqlite3")
    for name, value in (("EYWA_DATA_DIR", data), ("EYWA_PROJECTS_DIR", tmp_path), ("HOME", tmp_path),
                        ("EYWA_NOW", NOW.isoformat())):
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("EYWA_CONFIG", raising=False)
    for mode in ("keywords", "bm25", "hybrid"):
        assert main(["get", "--mode", mode, "--days-back", "400", "--json", "kw01"]) == 0, capsys.readouterr().err
        assert '"session_id"' in capsys.readouterr().out
    conn = sqlite3.connect(data / "index.sqlite3")
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)
    conn.close()


def test_a_connections_keyword_lookups_stay_bounded_and_rank_alike(filled: Store,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot and the MCP server query one connection for days: the query words' keywords and their counts it
    keeps are bounded (the least recently used word dropped, the counts begun again), and rank as fresh ones do."""
    conn = filled.conn
    queries = ["kw01", "kw00 kw03", "kw1", "alpha kw05", "kw0", "kw03 gamma", "kw2 kw3", "kw01"]
    fresh = []
    for query in queries:
        scorer._CACHE.clear()
        fresh.append(scorer.rank(conn, query, mode="keywords", now=NOW, max_results=5))
    monkeypatch.setattr(scorer, "FOUND_KEPT", 2)
    monkeypatch.setattr(scorer, "COUNTS_KEPT", 5)
    scorer._CACHE.clear()
    for query, expected in zip(queries * 2, fresh * 2, strict=True):
        assert scorer.rank(conn, query, mode="keywords", now=NOW, max_results=5) == expected
        keywords = scorer._state(conn).keywords
        assert len(keywords._found) <= 2 and len(keywords._df) <= 5 + 40  # one lookup's counts past the bound
