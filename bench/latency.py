"""Query latency and index size on synthetic handoffs at several scales.

Synthetic handoffs draw projects (200) and keywords (30,000 lowercase-hyphenated terms) from Zipf-like
distributions, as real use does (a few projects and terms dominate), with ~300 words of text per
session. Queries are 2-3 words drawn the same way. Latency is `eywa.core.retrieval.scorer.rank` in process (median
and p95 over 3 rounds of the queries, after one warm-up query); the slope is log-log between the two
largest scales.

Usage: python bench/latency.py [--sizes 1000,10000,100000] [--queries 200] [--keep DIR]

--keep DIR reuses DIR/<size>.sqlite3 when it exists and leaves the ones it builds there (building
100k handoffs takes minutes); "build s" is then 0 for a reused database.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NOW = dt.date(2026, 2, 17)
_SYLLABLES = ["ka", "ro", "mi", "tel", "gra", "dex", "vo", "lin", "sur", "pa", "qui", "zen", "bo", "fe", "nu"]


def _vocabulary(rng: random.Random, size: int, parts: int = 3) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, parts + 1))))
    return sorted(words)


def _zipf(rng: random.Random, items: list[str], k: int) -> list[str]:
    # Rank r drawn with weight 1/r: a Zipf law with exponent 1.
    n = len(items)
    return [items[min(n - 1, int(math.exp(rng.random() * math.log(n))) - 1)] for _ in range(k)]


def build(db: Path, count: int, seed: int = 7) -> None:
    from eywa.core.handoffs.model import Handoff
    from eywa.core.index.store import Store

    rng = random.Random(seed)
    words = _vocabulary(rng, 20_000)
    keywords = [f"{a}-{b}" for a, b in zip(words[::2], words[1::2], strict=False)][:10_000] + words[:20_000]
    projects = _vocabulary(random.Random(seed + 1), 200, parts=2)
    store = Store(db)
    batch = 2000
    for start in range(0, count, batch):
        with store.transaction():
            for i in range(start, min(count, start + batch)):
                text = " ".join(_zipf(rng, words, 300))
                handoff = Handoff(
                    short_id=f"{i:08x}", session_id=f"{i:08x}-0000-4000-8000-000000000000",
                    date=NOW - dt.timedelta(days=rng.randint(0, 365)), duration=f"{rng.randint(1, 240)}m",
                    headline=" ".join(_zipf(rng, words, 6)), projects=_zipf(rng, projects, 1),
                    keywords=sorted(set(_zipf(rng, keywords, 6))), substance=2,
                    what_happened=[" ".join(_zipf(rng, words, 12)) for _ in range(3)],
                )
                transcript = (f"# Session x\n\n## 2026-01-01\n\n### 10:00 User\n\n{text[:600]}\n\n"
                              f"### 10:01 Claude\n\n{text}")
                store.put_handoff(handoff, path=f"x/{i}.md", transcript=transcript)
    store.close()


# Each query is timed this many times, in rounds over the whole set, and p50 / p95 are taken over every
# timing: this machine's speed drifts by a third from minute to minute, and a p95 of one round is set by
# whichever minute its 10 slowest queries fell in.
ROUNDS = 3


def measure(db: Path, queries: list[str], mode: str) -> tuple[float, float]:
    import sqlite3

    from eywa.core.retrieval.scorer import rank

    conn = sqlite3.connect(db)
    rank(conn, queries[0], mode=mode, now=NOW)  # warm-up: vocabulary cache, page cache
    times = []
    for _ in range(ROUNDS):
        for query in queries:
            started = time.perf_counter()
            rank(conn, query, mode=mode, now=NOW, max_results=5)
            times.append((time.perf_counter() - started) * 1000)
    conn.close()
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def run(sizes: list[int], n_queries: int, keep: Path | None = None) -> list[dict[str, object]]:
    from eywa.core.index import text_index

    rng = random.Random(11)
    words = _vocabulary(random.Random(7), 20_000)
    queries = [" ".join(_zipf(rng, words, rng.randint(2, 3))) for _ in range(n_queries)]
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="eywa-latency-") as tmp:
        for size in sizes:
            db = (keep or Path(tmp)) / f"{size}.sqlite3"
            started = time.perf_counter()
            if not db.exists():
                build(db, size)
            built = time.perf_counter() - started
            # The build leaves hundreds of MB for the kernel to write back: done before timing queries,
            # which would otherwise share the machine with that writeback.
            os.sync()
            on_disk = sum(p.stat().st_size for p in [*db.parent.glob(f"{size}.sqlite3*"),
                                                     *text_index.folder_of(db).glob("*")])
            row: dict[str, object] = {"handoffs": size, "build s": round(built, 1),
                                      "index MB per 1000": round(on_disk / 1e6 / (size / 1000), 2)}
            for mode in ("keywords", "hybrid"):
                p50, p95 = measure(db, queries, mode)
                row[f"{mode} p50 ms"] = round(p50, 2)
                row[f"{mode} p95 ms"] = round(p95, 2)
            rows.append(row)
            if keep is None:
                db.unlink()
                shutil.rmtree(text_index.folder_of(db))
    if len(rows) >= 2:
        small, large = rows[-2], rows[-1]
        for mode in ("keywords", "hybrid"):
            ratio = float(large[f"{mode} p50 ms"]) / max(float(small[f"{mode} p50 ms"]), 1e-6)
            large[f"{mode} slope"] = round(math.log(ratio) / math.log(large["handoffs"] / small["handoffs"]), 2)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="directory of databases to reuse and keep")
    args = parser.parse_args()
    for row in run([int(s) for s in args.sizes.split(",")], args.queries, args.keep):
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
