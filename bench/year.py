"""A year of memory: retrieval with the defaults a user has, whatever the age of the sessions.

Every other retrieval benchmark passes a wide `days_back` and pins now to the corpus' last day; a user has
the defaults and today's date. This one measures what they get.

1. Today's corpus: ../shared/corpus as it is (sessions of June 2025 to April 2026, most in January and February
   2026). commits.tsv and bench/phone_queries.tsv with a wide window (days_back 400) at the corpus' last day,
   2026-02-17, then with the defaults (no days_back) at 2026-02-17 and at 2026-12-02 (today, ten months on).
   LoCoMo (bench/locomo.py: one index per conversation, its sessions dated as LoCoMo dates them) the same way:
   a window covering the conversation at the day after its last session, the defaults then and 288 days
   later (as far as 2026-02-17 is from 2026-12-02).
2. A year of sessions: the corpus copied with its timestamps rewritten so that the sessions fall across
   twelve months (`spread`: sessions in the order of their last timestamp, evenly spaced by whole days up to
   2026-02-17, each file moved by its session's shift; ids kept). commits.tsv and phone_queries.tsv with the
   defaults at 2026-02-17, three months later and a year later, against the wide window on today's corpus;
   LoCoMo 0-4 at the day after the last session, three months and a year later.
3. Time-worded queries (bench/time_queries.tsv, written from the sessions of the year-spread corpus: each a
   question as a person asks it on a given day, "what did I do yesterday ...", "in March", with the session
   it asks for): asked with the defaults at their own day.

recall@k = share of the relevant sessions in the top k (bench/recall.py), averaged over the queries.

Usage: python bench/year.py [--quick] [--no-locomo]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eywa.core.api import Eywa

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import locomo  # noqa: E402
import recall  # noqa: E402

CORPUS = BENCH.parent.parent / "shared" / "corpus"
PHONE = BENCH / "phone_queries.tsv"
TIME_QUERIES = BENCH / "time_queries.tsv"
LAST_DAY = dt.date(2026, 2, 17)  # the corpus' last day (the Entire CLI tree's)
TODAY = dt.date(2026, 12, 2)
WIDE_DAYS = 400
YEAR_DAYS = 365
LATER = {"last day": 0, "3 months later": 91, "a year later": 365}
_STAMP_RE = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"')

Ranker = Callable[[str], list[str]]  # a query -> session ids, best first
Query = tuple[str, set[str]]


def load_phone(path: Path = PHONE) -> list[Query]:
    """bench/phone_queries.tsv: query, short id of the session it was written from."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    return [(query, {short.strip()}) for query, short in rows]


def load_time_queries(path: Path = TIME_QUERIES) -> list[tuple[str, set[str], dt.date]]:
    """bench/time_queries.tsv: query, short id of the session it asks for, the day it is asked."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]
            if line.strip() and not line.startswith("#")]
    return [(query, {short.strip()}, dt.date.fromisoformat(day.strip())) for query, short, day in rows]


# -- the corpus spread over a year ------------------------------------------------------------------------
def _owner(path: Path) -> str:
    """The session a transcript file belongs to: a main file's own id, a subagent file's parent's."""
    if not path.name.startswith("agent-"):
        return path.stem
    if path.parent.name == "subagents":
        return path.parent.parent.name
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            found = re.search(r'"sessionId":"([^"]+)"', line)
            if found:
                return found.group(1)
    return path.stem


def _last_stamp(paths: list[Path]) -> dt.datetime | None:
    stamps = [_STAMP_RE.findall(path.read_text(encoding="utf-8", errors="replace")) for path in paths]
    found = [stamp for group in stamps for stamp in group]
    return max((dt.datetime.fromisoformat(s.replace("Z", "+00:00")) for s in found), default=None)


def spread(source: Path, target: Path, last_day: dt.date = LAST_DAY, days: int = YEAR_DAYS) -> dict[str, dt.date]:
    """Copy the transcripts under `source` to `target`, each session moved by whole days so that the sessions,
    in the order of their last timestamp, fall evenly over the `days` days up to `last_day`; returns each
    session's new day (of its last timestamp, UTC). Files without a timestamp are copied as they are."""
    files = [path for path in sorted(source.rglob("*")) if path.is_file()]
    groups: dict[str, list[Path]] = {}
    for path in files:
        if path.suffix == ".jsonl":
            groups.setdefault(_owner(path), []).append(path)
    mains = {owner: [p for p in paths if not p.name.startswith("agent-")] or paths for owner, paths in groups.items()}
    last = {owner: stamp for owner, paths in mains.items() if (stamp := _last_stamp(paths)) is not None}
    order = sorted(last, key=lambda owner: (last[owner], owner))
    shift: dict[str, int] = {}
    new_day: dict[str, dt.date] = {}
    for rank, owner in enumerate(order):
        day = last_day - dt.timedelta(days=round((len(order) - 1 - rank) * (days - 1) / max(1, len(order) - 1)))
        shift[owner] = (day - last[owner].date()).days
        new_day[owner] = day
    owner_of = {path: owner for owner, paths in groups.items() for path in paths}
    for path in files:
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        days_moved = shift.get(owner_of.get(path, ""), 0)
        if path.suffix != ".jsonl" or not days_moved:
            out.write_bytes(path.read_bytes())
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        out.write_text(_STAMP_RE.sub(_mover(days_moved), text), encoding="utf-8", errors="surrogateescape")
    return new_day


def _mover(days: int) -> Callable[[re.Match[str]], str]:
    """A `re.sub` replacement: the timestamp matched, `days` later, written as Claude Code writes it."""
    def moved(match: re.Match[str]) -> str:
        stamp = dt.datetime.fromisoformat(match.group(1).replace("Z", "+00:00")) + dt.timedelta(days=days)
        return '"' + stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z" + '"'
    return moved


# -- measuring --------------------------------------------------------------------------------------------
class Index:
    """An Eywa over one data directory, asked with now pinned to a given day."""

    def __init__(self, data_dir: Path, projects_dir: Path) -> None:
        self.data_dir, self.projects_dir = data_dir, projects_dir

    def build(self, now: dt.date = LAST_DAY) -> Index:
        with self.eywa(now) as eywa:
            eywa.ingest()
        return self

    @contextlib.contextmanager
    def eywa(self, now: dt.date) -> Iterator[Eywa]:
        from eywa.core.api import Eywa
        from eywa.core.config.settings import load_settings

        os.environ["EYWA_NOW"] = now.isoformat()
        eywa = Eywa(load_settings(data_dir=self.data_dir, projects_dir=self.projects_dir))
        try:
            yield eywa
        finally:
            eywa.close()

    def ranked(self, queries: list[Query], now: dt.date, days_back: int | None, *, short: bool = False,
               as_then: bool = False) -> list[list[str]]:
        """The top 10 of each query; `as_then`: of the sessions dated `now` or earlier, as the index held them
        that day (the year-spread corpus holds sessions after a time query's day)."""
        with self.eywa(now) as eywa:
            return [[r.short_id if short else r.session_id for r in eywa.recall(
                query, days_back=days_back, max_results=40 if as_then else 10) if not as_then or r.date <= now][:10]
                    for query, _ in queries]


def scores(ranked: list[list[str]], queries: list[Query]) -> tuple[float, float]:
    found = recall.metrics(ranked, [relevant for _, relevant in queries])
    return round(found["recall@1"], 3), round(found["recall@5"], 3)


def corpus_sets() -> dict[str, tuple[list[Query], bool]]:
    """name -> (queries, labelled by short id)."""
    return {"commits.tsv": (recall.load_queries(), False), "phone_queries.tsv": (load_phone(), True)}


def locomo_indexes(conversations: list[int], workdir: Path) -> Iterator[tuple[Index, list[Query], dt.date, int]]:
    """Per conversation: its index, its queries (as bench/locomo.py asks them), the day after its last
    session, and days_back wide enough to cover it."""
    data = json.loads(locomo.LOCOMO.read_text(encoding="utf-8"))
    for number in conversations:
        conversation = data[number]
        folder = workdir / f"locomo-{number}"
        ids = locomo.write_transcripts(conversation, folder / "projects")
        talk = conversation["conversation"]
        times = [locomo.session_time(talk[f"session_{n}_date_time"]) for n in ids]
        day_after = (max(times) + dt.timedelta(days=1)).date()
        queries = locomo.questions(conversation, ids)
        index = Index(folder / "data", folder / "projects").build(day_after)
        yield index, queries, day_after, locomo.covering(conversation, ids)


def _cell(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.3f} / {pair[1]:.3f}"


def _pooled(conversations: list[int], work: Path) -> dict[str, tuple[list[list[str]], list[Query]]]:
    """LoCoMo's conversations, their rankings pooled: "wide" (days_back covering each conversation, at the
    day after its last session), "today" (the defaults, as far after it as 2026-12-02 is after 2026-02-17),
    and the defaults at each of LATER's days after it."""
    pooled: dict[str, tuple[list[list[str]], list[Query]]] = {}
    for index, queries, day_after, covering in locomo_indexes(conversations, work):
        asked = {"wide": (day_after, covering), "today": (day_after + (TODAY - LAST_DAY), None)}
        asked |= {label: (day_after + dt.timedelta(days=later), None) for label, later in LATER.items()}
        for key, (now, days_back) in asked.items():
            ranked, kept = pooled.setdefault(key, ([], []))
            ranked.extend(index.ranked(queries, now, days_back))
            kept.extend(queries)
    return pooled


def run(quick: bool = False, with_locomo: bool = True) -> dict[str, list[dict[str, object]]]:
    """The three tables' rows: "today" (today's corpus), "year" (the year-spread corpus), "time" (time words)."""
    today_rows: list[dict[str, object]] = []
    year_rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="eywa-year-") as tmp:
        work = Path(tmp)
        today = Index(work / "today", CORPUS).build()
        spread(CORPUS, work / "spread-projects")
        year = Index(work / "year", work / "spread-projects").build()
        for name, (queries, short) in corpus_sets().items():
            wide = _cell(scores(today.ranked(queries, LAST_DAY, WIDE_DAYS, short=short), queries))
            today_rows.append({"set": f"{name} ({len(queries)})", "wide window, now 2026-02-17": wide,
                               **{f"defaults, now {now}": _cell(scores(today.ranked(queries, now, None, short=short),
                                                                        queries)) for now in (LAST_DAY, TODAY)}})
            year_rows.append({"set": f"{name} ({len(queries)})", "wide window today": wide, **{
                f"defaults, {label}": _cell(scores(year.ranked(queries, LAST_DAY + dt.timedelta(days=later), None,
                                                               short=short), queries))
                for label, later in LATER.items()}})
        questions = load_time_queries()
        ranked = [year.ranked([(query, relevant)], day, None, short=True, as_then=True)[0]
                  for query, relevant, day in questions]
        time_rows = [{"set": f"time_queries.tsv ({len(questions)})", "defaults, at each query's day":
                      _cell(scores(ranked, [(query, relevant) for query, relevant, _ in questions]))}]
        if with_locomo:
            for name, conversations in ([("LoCoMo 0", [0])] if quick else
                                        [("LoCoMo 0-4", [0, 1, 2, 3, 4]), ("LoCoMo 5-9 (held out)", [5, 6, 7, 8, 9])]):
                pooled = _pooled(conversations, work)
                label = f"{name} ({len(pooled['wide'][1])})"
                wide = _cell(scores(*pooled["wide"]))
                today_rows.append({"set": label, "wide window, now 2026-02-17": wide,
                                   f"defaults, now {LAST_DAY}": _cell(scores(*pooled["last day"])),
                                   f"defaults, now {TODAY}": _cell(scores(*pooled["today"]))})
                if "held out" not in name:
                    year_rows.append({"set": label, "wide window today": wide,
                                      **{f"defaults, {later}": _cell(scores(*pooled[later])) for later in LATER}})
    return {"today": today_rows, "year": year_rows, "time": time_rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="LoCoMo conversation 0 only")
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args()
    from results_md import table

    for name, rows in run(args.quick, not args.no_locomo).items():
        print(f"\n{name} (recall@1 / recall@5)\n" + table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
