"""Runs every benchmark and writes bench/RESULTS.md (the figures docs/reliability.md's summary quotes).

Usage: python bench/run.py            # the whole set (about 10 minutes on 2 cores)
       python bench/run.py --quick    # a smoke test of the harness: small sizes, a few queries
       python bench/run.py --out PATH # write the results elsewhere
       python bench/run.py --only year --only retrieval  # some sections only (names: SECTIONS below)
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import bot_latency  # noqa: E402
import fts5_reference  # noqa: E402
import handoff_quality  # noqa: E402
import latency  # noqa: E402
import locomo  # noqa: E402
import push  # noqa: E402
import recall  # noqa: E402
import reredaction  # noqa: E402
import scale  # noqa: E402
import year  # noqa: E402
from results_md import merged, table  # noqa: E402

QUALITY_MODES = ["keywords", "bm25", "hybrid", fts5_reference.NAME]


def quality(quick: bool) -> list[dict[str, object]]:
    import tempfile

    os.environ["EYWA_NOW"] = recall.NOW
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="eywa-bench-") as tmp:
        corpus = BENCH.parent.parent / "shared" / "corpus"
        recall.build_index(Path(tmp), corpus)
        for mode, m in recall.evaluate(Path(tmp), corpus, QUALITY_MODES).items():
            rows.append({"set": "commits.tsv (193)", "mode": mode, **_rounded(m)})
    sets = [("LoCoMo 0", [0])] if quick else [("LoCoMo 0-4 (tuning)", [0, 1, 2, 3, 4])]
    if not quick:
        sets.append(("LoCoMo 5-9 (held out)", [5, 6, 7, 8, 9]))
    for name, conversations in sets:
        for mode, m in locomo.run(conversations, QUALITY_MODES).items():
            rows.append({"set": f"{name} ({m.pop('queries')})", "mode": mode, **_rounded(m)})
    return rows


def quality_section(quick: bool) -> str:
    rows = quality(quick)
    return (
        "## Retrieval quality (session level)\n\nMethod: commits.tsv: both corpus trees ingested, now "
        "2026-02-17, days_back 400, each commit subject a query, its labelled sessions relevant. LoCoMo: each "
        "session one transcript, one index per conversation, now the day after its last session, days_back "
        "from its first day, category 5 left out, tuned on 0-4 only. "
        "recall@k = share of relevant sessions in the top k; hit@k = a relevant session in the top k (the "
        "measure of the issue's FTS5 reference points); MRR over the top 10; NDCG@5 binary. `fts5 reference`: "
        "the issue's reference method (bench/fts5_reference.py: SQLite FTS5 BM25, porter, an OR of the query's "
        "words, over what the user and Claude wrote).\n\n"
        + table(rows)
        + "\nWhere hybrid scores under the better of keywords and bm25 alone: "
        + ("; ".join(hybrid_shortfalls(rows)) or "nowhere") + ".\n"
    )


YEAR_SECTION = "## A year of memory"


def year_section(quick: bool) -> str:
    """bench/year.py's three tables: what a user gets with the defaults, at any age of the sessions."""
    tables = year.run(quick)
    return (
        f"{YEAR_SECTION} (retrieval with the defaults)\n\nMethod: bench/year.py. recall@1 / recall@5 with the "
        "default settings (`hybrid`, no days_back) against a window covering every session (`--days-back 400`; "
        "LoCoMo: a window from the conversation's first day). Today's corpus: commits.tsv and "
        "bench/phone_queries.tsv at the corpus' last day (2026-02-17) and ten months later (2026-12-02); LoCoMo "
        "at the day after each conversation's last session and 288 days after it.\n\n" + table(tables["today"])
        + "\nThe corpus spread over a year (each session moved by whole days so that the sessions, in order, fall "
        "evenly over the 365 days up to 2026-02-17; ids kept), with the defaults at its last day, three months "
        "and a year later; LoCoMo 0-4 as LoCoMo dates it, at the day after its last session and as long "
        "after. \"wide window today\": today's corpus with the wide window.\n\n" + table(tables["year"])
        + "\nbench/time_queries.tsv: questions that say when (\"yesterday\", \"last week\", \"in March\", \"two "
        "months ago\", \"7d\"), each written from one session of the year-spread corpus and asked, with the "
        "defaults, on its own day, over the sessions up to that day.\n\n" + table(tables["time"])
    )


def hybrid_shortfalls(rows: list[dict[str, object]]) -> list[str]:
    """Where `hybrid` scores under the better of `keywords` and `bm25` alone (the issue's quality target),
    one "set: measure hybrid < best (mode)" each."""
    found = []
    for name in dict.fromkeys(row["set"] for row in rows):
        scores: dict[object, dict[str, float]] = {
            row["mode"]: {k: v for k, v in row.items() if isinstance(v, float)} for row in rows if row["set"] == name}
        for measure, value in scores["hybrid"].items():
            best = max(("keywords", "bm25"), key=lambda mode: scores[mode][measure])
            if value < scores[best][measure]:
                found.append(f"{name}: {measure} {value} < {scores[best][measure]} ({best})")
    return found


def _rounded(metrics: dict[str, float]) -> dict[str, object]:
    return {k: round(v, 3) for k, v in metrics.items() if k != "ms_per_query"}


def strict_handoff_section(data_dir: Path) -> str:
    """bench/handoff_quality.py's strict matcher on the blind set (dev, held out) and the two older sets, on the index
    in `data_dir`."""
    sets = [(handoff_quality.BLIND, "dev"), (handoff_quality.BLIND, "heldout"), (handoff_quality.LABELS, None),
            (handoff_quality.HELDOUT, None)]
    rows = [{"labels": path.name + (f" ({which})" if which else ""), **{
        k: round(v, 3) if isinstance(v, float) else v
        for k, v in handoff_quality.run(data_dir, labels_path=path, strict=True, which=which).items()}}
        for path, which in sets]
    return (
        "Strict matcher (issue 25): a labelled thread (decision) is named when one extracted open thread (insight) "
        "has a content-word F1 >= 0.3 with the label's text (the older sets: its evidence), one to one; detection: "
        "F1 of \"Open Threads not None\" against \"labelled open\"; key files: a listed path ending with the "
        "labelled one. bench/handoff_labels_blind.yaml: sessions of both trees and the agent fixtures labelled by "
        "readers who never saw Eywa's output; `dev` read and tuned on, `heldout` only scored.\n\n" + table(rows))


def ingest_section(quick: bool) -> str:
    files, megabytes = (300, 30) if quick else (10_000, 1000)
    codex_megabytes = 8 if quick else 84
    return (
        "## Ingest\n\nMethod: `eywa ingest` in a child process on a cold data directory (deterministic "
        "extractor), then again with nothing changed; MB of JSONL read per second of ingest (the whole "
        "process adds interpreter start-up and imports); peak RSS of the child. The scaled corpus clones "
        f"real sessions (new ids, dates shifted, a few words changed) to {files} files / ~{megabytes} MB in "
        "a temporary folder. The Codex CLI rows read only a Codex folder: the rollouts the real Codex CLI "
        "0.171.0 wrote for the tests (tests/fixtures/agents), cloned with new ids and words to "
        f"~{codex_megabytes} MB.\n\n" + table(scale.run(files, megabytes, codex_megabytes=codex_megabytes))
    )


def push_section(quick: bool) -> str:
    spoke_files, spoke_mb = (50, 5) if quick else (1000, 100)
    return (
        "## Several machines: push and ingest\n\nMethod: bench/push.py: a spoke of "
        f"{spoke_files} cloned real transcripts (~{spoke_mb} MB) runs `eywa push` (its outbox of redacted copies "
        "brought up to date, then real rsync over a real sshd on 127.0.0.1), the hub runs `eywa ingest`, then "
        "the spoke pushes again with nothing new, then after appending one line to 10 files; each a whole child "
        "process (start-up included); KB sent is rsync's own count.\n\n" + table(push.run(spoke_files, spoke_mb))
    )


def reredaction_section(quick: bool) -> str:
    return (
        "## Re-redaction under new rules\n\nMethod: bench/reredaction.py: both corpus trees ingested, the index "
        "marked as written under the redaction rules before today's, then `eywa ingest` (a child process, timed "
        "whole) redacts every stored text again: with the transcripts kept (deterministic handoffs drafted again "
        "from them), then, marked again, with them gone (everything redacted where it lies).\n\n"
        + table(reredaction.run(("claude-code-log",) if quick else ("entire", "claude-code-log")))
    )


def latency_section(quick: bool) -> str:
    sizes = [1000, 3000] if quick else [1000, 10_000, 100_000]
    return (
        "## Query latency and index size\n\nMethod: synthetic handoffs (Zipf-distributed projects, keywords "
        "and ~300 words of text each), built, then written to disk (sync); `scorer.rank` "
        "(core/retrieval/scorer.py) in process, top 5, over "
        f"{20 if quick else 200} 2-3 word queries, each timed in {latency.ROUNDS} rounds; p50/p95 in ms over "
        "every timing; slope = log-log growth of p50 "
        "between the two largest sizes; index size = the SQLite files and the full-text index folder / thousands "
        "of handoffs.\n\n"
        + table(latency.run(sizes, 20 if quick else 200))
    )


def bot_section(quick: bool) -> str:
    return (
        "## Telegram bot latency\n\nMethod: the real Application against the fake Bot API of the tests (HTTP on "
        "127.0.0.1), corpus ingested; commit subjects sent as text, and a 5-second note of real speech through "
        "the real transcriber; from the update reaching the server to the reply reaching it.\n\n"
        + table(bot_latency.run(5 if quick else 50, voice_runs=1 if quick else 5))
    )


def handoff_section(quick: bool) -> str:
    with tempfile.TemporaryDirectory(prefix="eywa-handoffs-") as tmp:  # one index for every label set
        handoffs = Path(tmp)
        handoff_quality.build_index(handoffs)
        return (
            "## Handoff quality (deterministic extractor)\n\nMethod: bench/handoff_quality.py: both corpus trees "
            "ingested, each of the sessions of bench/handoff_labels.yaml (hand-checked: ideal headline, status, open "
            "threads, decisions, key files, each with the session's own words) compared with its handoff. Headline: "
            "F1 of content words; open-thread detection: Open Threads not \"None.\" against the label; threads, "
            "decisions found: labelled items matched by one extracted item holding half their match words. "
            "bench/handoff_labels_heldout.yaml: 25 more sessions, chosen and labelled without reading Eywa's "
            "handoffs, on which nothing was tuned.\n\n"
            + table([{"labels": path.name, **{k: round(v, 3) if isinstance(v, float) else v
                                              for k, v in handoff_quality.run(handoffs, labels_path=path).items()}}
                     for path in (handoff_quality.LABELS, handoff_quality.HELDOUT)])
            + "\n" + strict_handoff_section(handoffs)
        )


# Each section by the name `--only` takes, in the order RESULTS.md gives them.
SECTIONS = {"ingest": ingest_section, "push": push_section, "reredaction": reredaction_section,
            "latency": latency_section, "bot": bot_section, "retrieval": quality_section, "year": year_section,
            "handoffs": handoff_section}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=BENCH / "RESULTS.md")
    parser.add_argument("--only", action="append", choices=list(SECTIONS),
                        help="run only this section (repeatable); the file written holds only those")
    args = parser.parse_args()
    started = time.perf_counter()
    sections: list[str] = []
    for name, section in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", file=sys.stderr)
        sections.append(section(args.quick))

    header = (
        f"# Eywa benchmarks\n\nWritten by `python bench/run.py{' --quick' if args.quick else ''}` on "
        f"{dt.date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, in {time.perf_counter() - started:.0f} s.\n\n"
    )
    previous = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    args.out.write_text(merged(previous, sections, header), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
