"""Session-level retrieval quality on ../shared/corpus/queries/commits.tsv, for each scorer.

Method: ingest both corpus trees into a temporary data directory with the deterministic extractor,
pin now to 2026-02-17, and for each commit subject rank the handoffs with days_back 400 (wide enough
to cover the corpus). recall@k = share of the query's relevant sessions in the top k, averaged over
queries; MRR over the top 10; NDCG@5 with binary relevance.

Usage: python bench/recall.py [--data-dir DIR] [--modes keywords,bm25,hybrid,'fts5 reference']
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import fts5_reference

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
QUERIES = SHARED / "corpus" / "queries" / "commits.tsv"
NOW = "2026-02-17"
DAYS_BACK = 400
MODES = "keywords,bm25,hybrid," + fts5_reference.NAME


def load_queries(path: Path = QUERIES) -> list[tuple[str, set[str]]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if not line.strip():
            continue
        query, ids = line.split("\t")
        rows.append((query, {i.strip() for i in ids.split(",") if i.strip()}))
    return rows


def metrics(ranked: list[list[str]], relevant: list[set[str]]) -> dict[str, float]:
    """recall@k: share of the relevant sessions in the top k; hit@k: a relevant session in the top k (the
    measure of the issue's FTS5 reference points); MRR over the top 10; NDCG@5 with binary gains."""
    r1 = r5 = h1 = h5 = mrr = ndcg = 0.0
    for found, rel in zip(ranked, relevant, strict=True):
        r1 += len(rel & set(found[:1])) / len(rel)
        r5 += len(rel & set(found[:5])) / len(rel)
        h1 += bool(rel & set(found[:1]))
        h5 += bool(rel & set(found[:5]))
        rank = next((i for i, sid in enumerate(found[:10], start=1) if sid in rel), None)
        mrr += 1.0 / rank if rank else 0.0
        dcg = sum(1.0 / math.log2(i + 1) for i, sid in enumerate(found[:5], start=1) if sid in rel)
        ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(rel), 5) + 1))
        ndcg += dcg / ideal
    n = len(relevant)
    return {"recall@1": r1 / n, "recall@5": r5 / n, "hit@1": h1 / n, "hit@5": h5 / n, "mrr": mrr / n,
            "ndcg@5": ndcg / n}


def build_index(data_dir: Path, projects_dir: Path) -> None:
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings

    settings = load_settings(data_dir=data_dir, projects_dir=projects_dir)
    eywa = Eywa(settings)
    try:
        eywa.ingest()
    finally:
        eywa.close()


def evaluate(data_dir: Path, projects_dir: Path, modes: list[str]) -> dict[str, dict[str, float]]:
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings

    settings = load_settings(data_dir=data_dir, projects_dir=projects_dir)
    eywa = Eywa(settings)
    queries = load_queries()
    results: dict[str, dict[str, float]] = {}
    try:
        reference = fts5_reference.Reference.of_index(settings.db_path) if fts5_reference.NAME in modes else None
        for mode in modes:
            started = time.perf_counter()
            ranked = [reference.rank(query) if reference and mode == fts5_reference.NAME else [
                h.session_id for h in eywa.recall(query, days_back=DAYS_BACK, max_results=10, mode=mode)]
                for query, _ in queries]
            results[mode] = metrics(ranked, [rel for _, rel in queries])
            results[mode]["ms_per_query"] = (time.perf_counter() - started) * 1000 / len(queries)
    finally:
        eywa.close()
    return results


def table(results: dict[str, dict[str, float]]) -> str:
    lines = ["| mode | recall@1 | recall@5 | hit@1 | hit@5 | MRR | NDCG@5 |", "|---|---|---|---|---|---|---|"]
    for mode, m in results.items():
        lines.append(f"| {mode} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | {m['hit@1']:.3f} | {m['hit@5']:.3f} "
                     f"| {m['mrr']:.3f} | {m['ndcg@5']:.3f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="reuse an index here (built if missing)")
    parser.add_argument("--modes", default=MODES)
    args = parser.parse_args()
    os.environ["EYWA_NOW"] = NOW
    sys.path.insert(0, str(ROOT))
    projects_dir = SHARED / "corpus"
    with tempfile.TemporaryDirectory(prefix="eywa-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        if not (data_dir / "index.sqlite3").exists():
            build_index(data_dir, projects_dir)
        results = evaluate(data_dir, projects_dir, args.modes.split(","))
    print(f"commits.tsv: {len(load_queries())} queries, now={NOW}, days_back={DAYS_BACK}")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
