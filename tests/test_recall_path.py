"""The one query path every front end asks (`Eywa.recall`, core/retrieval/recall.py): time words, windows, the
day a query was asked, and what an old config's days_back does now."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import pytest

from eywa.core import api
from eywa.core.api import Eywa, format_handoffs
from eywa.core.config.settings import load_settings
from eywa.core.handoffs.model import Handoff
from eywa.core.index.store import Store
from eywa.core.retrieval.time_words import Window

TODAY = dt.date(2026, 12, 2)


def handoff(uid: str, day: dt.date, keywords: tuple[str, ...], text: str, machine: str = "laptop") -> Handoff:
    return Handoff(short_id=uid[:8], session_id=uid, date=day, duration="30m", headline=f"Headline {uid}",
                   projects=["eywa"], keywords=list(keywords), substance=2, what_happened=[text], machine=machine)


@pytest.fixture
def eywa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Eywa:
    monkeypatch.setenv("EYWA_NOW", TODAY.isoformat())
    store = Store(tmp_path / "index.sqlite3")
    with store.transaction():
        for uid, days_ago, keywords, text in (
            ("aaaa0001-rewind-march", 260, ("rewind",), "the rewind checkpoint restore"),
            ("aaaa0002-rewind-lastweek", 6, ("rewind",), "rewind again, the checkpoint"),
            ("aaaa0003-digest-yesterday", 1, ("digest",), "the morning digest"),
            ("aaaa0004-other", 40, ("other",), "something else entirely"),
        ):
            store.put_handoff(handoff(uid, TODAY - dt.timedelta(days=days_ago), keywords, text), path=f"{uid}.md")
    store.close()
    found = Eywa(load_settings(data_dir=tmp_path))
    yield found
    found.close()


def test_time_words_rank_their_days_first_and_say_which_days(eywa: Eywa) -> None:
    results = eywa.recall("the rewind work last week")
    assert [r.session_id for r in results][:2] == ["aaaa0002-rewind-lastweek", "aaaa0001-rewind-march"]
    assert results.first == Window(dt.date(2026, 11, 23), None) and results.within is None
    assert results.words == "the rewind work" and all(r.match for r in results[:2])
    in_march = eywa.recall("the rewind work in March")
    assert in_march[0].session_id == "aaaa0001-rewind-march"
    assert in_march.label(in_march.first) == "in March 2026"


def test_a_query_of_time_words_alone_lists_those_days(eywa: Eywa) -> None:
    results = eywa.recall("what did I do yesterday")
    assert [r.session_id for r in results] == ["aaaa0003-digest-yesterday"]
    assert results.within == Window(dt.date(2026, 12, 1), dt.date(2026, 12, 1)) and not results.words
    nothing = eywa.recall("what did I do on Sunday")  # 29 Nov: no session
    assert nothing.missed == Window(dt.date(2026, 11, 29), dt.date(2026, 11, 29))
    assert [r.session_id for r in nothing][0] == "aaaa0003-digest-yesterday"  # the latest instead


def test_a_leading_7d_and_days_back_keep_those_days_alone(eywa: Eywa) -> None:
    for results in (eywa.recall("7d rewind"), eywa.recall("rewind", days_back=7)):
        assert [r.session_id for r in results] == ["aaaa0002-rewind-lastweek"]
        assert results.within == Window(dt.date(2026, 11, 26), None)
    assert [r.session_id for r in eywa.recall("rewind", max_results=5)] == [
        "aaaa0002-rewind-lastweek", "aaaa0001-rewind-march"]  # the defaults: any age


def test_the_next_pages_count_time_words_from_the_day_first_asked(eywa: Eywa) -> None:
    asked = dt.date(2026, 12, 1)  # a page asked yesterday: "yesterday" was 30 Nov, no session
    assert eywa.recall("what did I do yesterday", asked_on=asked).missed == Window(dt.date(2026, 11, 30),
                                                                                    dt.date(2026, 11, 30))
    assert eywa.recall("7d rewind", asked_on=dt.date(2026, 12, 30)).records == []  # beyond those 7 days


def test_an_old_configs_days_back_is_a_filter_said_once_in_the_log(tmp_path: Path, eywa: Eywa,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    settings = load_settings(data_dir=eywa.settings.data_dir, retrieval={"days_back": 14})
    api._note_days_back.cache_clear()  # once a process: another test may have said it
    with caplog.at_level(logging.INFO, logger="eywa"):
        old = Eywa(settings)
        Eywa(settings).close()
    try:
        notes = [r.getMessage() for r in caplog.records if "retrieval.days_back" in r.getMessage()]
        assert len(notes) == 1 and "last 14 days" in notes[0] and "\n" not in notes[0]
        assert [r.session_id for r in old.recall("rewind")] == ["aaaa0002-rewind-lastweek"]
    finally:
        old.close()


def test_each_session_is_named_with_its_machine_once_the_index_holds_several(eywa: Eywa) -> None:
    one = format_handoffs(eywa.recall("the morning digest"))
    assert one.splitlines()[2] == "session aaaa0003 · 2026-12-01 · eywa · claude-code"
    store = Store(eywa.settings.db_path)
    with store.transaction():
        store.put_handoff(handoff("bbbb0001-desk", TODAY, ("digest",), "the evening digest", "desk"), path="b.md")
    store.close()
    several = format_handoffs(eywa.recall("the evening digest"))
    assert several.splitlines()[2] == "session bbbb0001 · 2026-12-02 · eywa · claude-code · desk"


@pytest.mark.parametrize("query", ["rewind", "rewind checkpoint", "the digest yesterday", "checkpoint last week",
                                   "in March rewind", "nothing-matches-this"])
def test_eywa_get_and_the_api_rank_a_query_alike(eywa: Eywa, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], query: str) -> None:
    """`eywa get` (the light path, no settings model) and `Eywa.recall` go through one reader
    (core/retrieval/recall.py:query_handoffs): the same query gives the same handoffs in the same order."""
    import json

    from eywa.cli.main import main

    through_api = [(r.session_id, round(r.score, 6), r.match) for r in eywa.recall(query, max_results=5)]
    monkeypatch.setenv("EYWA_DATA_DIR", str(tmp_path))
    capsys.readouterr()
    assert main(["get", "--json", "--max", "5", *query.split()]) == 0
    light = [(r["session_id"], r["score"], r["match"]) for r in json.loads(capsys.readouterr().out)]
    assert light == through_api and through_api
