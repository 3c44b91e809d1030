"""Handoff quality of the deterministic extractor against hand-checked labels (bench/handoff_labels.yaml).

Method: ingest both corpus trees into a temporary data directory (deterministic extractor), read each
labelled session's handoff, and compare:
- headline: F1 of content words (lowercase letters and digits, stopwords left out) against the ideal;
- status: share of sessions whose `status` equals the label;
- open-thread detection: a handoff "says open" when its Open Threads is not "None."; precision and recall
  against the sessions labelled with open threads;
- threads / decisions found: share of labelled items matched by one extracted open thread / insight
  holding at least half of the item's `match` words;
- key files found: share of labelled key files listed in Key Files.

Usage: python bench/handoff_quality.py [--labels PATH] [--data-dir DIR] [--show]
(--labels bench/handoff_labels_heldout.yaml scores the held-out set, chosen and labelled without reading
Eywa's handoffs.)
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SHARED = ROOT.parent / "shared"
LABELS = BENCH / "handoff_labels.yaml"
_WORD_RE = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and the of to in on for with by from is are was be it its this that as at or into "
                  "after before when so".split())


def content_words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if w not in _STOP}


def headline_f1(found: str, ideal: str) -> float:
    got, want = content_words(found), content_words(ideal)
    common = len(got & want)
    if not common:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def matched(match: list[str], items: list[str]) -> bool:
    """One item holds at least half (rounded up) of the `match` words."""
    need = math.ceil(len(match) / 2)
    return any(sum(1 for word in match if str(word).lower() in item.lower()) >= need for item in items)


def score(labels: list[dict], handoffs: dict[str, dict]) -> dict[str, float]:
    """`handoffs`: session id -> {headline, status, open_threads, insights, key_files}."""
    n = len(labels)
    f1 = status = 0.0
    tp = fp = fn = 0
    threads = threads_found = decisions = decisions_found = files = files_found = 0
    for label in labels:
        got = handoffs.get(label["id"], {"headline": "", "status": None, "open_threads": [], "insights": [],
                                         "key_files": []})
        f1 += headline_f1(got["headline"], label["headline"])
        status += got["status"] == label["status"]
        said, truth = bool(got["open_threads"]), bool(label["open_threads"])
        tp += said and truth
        fp += said and not truth
        fn += truth and not said
        for item in label["open_threads"]:
            threads += 1
            threads_found += matched(item["match"], got["open_threads"])
        for item in label["decisions"]:
            decisions += 1
            decisions_found += matched(item["match"], got["insights"])
        for path in label["key_files"]:
            files += 1
            files_found += any(f"`{path}`" in line for line in got["key_files"])
    return {
        "sessions": n,
        "headline word F1": f1 / n,
        "status accuracy": status / n,
        "open-thread precision": tp / (tp + fp) if tp + fp else 0.0,
        "open-thread recall": tp / (tp + fn) if tp + fn else 0.0,
        "threads found": threads_found / threads if threads else 0.0,
        "decisions found": decisions_found / decisions if decisions else 0.0,
        "key files found": files_found / files if files else 0.0,
    }


def load_labels(path: Path = LABELS) -> list[dict]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["sessions"]


def extracted(data_dir: Path, ids: list[str]) -> dict[str, dict]:
    from eywa.core.handoffs.model import parse_handoff

    found: dict[str, dict] = {}
    for path in (data_dir / "handoffs").rglob("*.md"):
        if path.stem in ids:
            handoff = parse_handoff(path.read_text(encoding="utf-8"))
            found[path.stem] = {"headline": handoff.headline, "status": handoff.status,
                                "open_threads": handoff.open_threads, "insights": handoff.insights,
                                "key_files": handoff.key_files, "text": handoff.to_markdown()}
    return found


def run(data_dir: Path | None = None, show: bool = False, labels_path: Path = LABELS) -> dict[str, float]:
    """The scores against the labels at `labels_path`, on an index built here unless `data_dir` holds one."""
    sys.path.insert(0, str(ROOT))
    import recall

    labels = load_labels(labels_path)
    with tempfile.TemporaryDirectory(prefix="eywa-handoffs-") as tmp:
        folder = data_dir or Path(tmp)
        if not (folder / "index.sqlite3").exists():
            recall.build_index(folder, SHARED / "corpus")
        handoffs = extracted(folder, [label["id"] for label in labels])
    if show:
        for label in labels:
            print(handoffs.get(label["id"], {}).get("text", f"(no handoff for {label['id']})"))
    return score(labels, handoffs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS,
                        help=f"the labels to score against (default {LABELS.name})")
    parser.add_argument("--data-dir", type=Path, help="reuse an index here (built if missing)")
    parser.add_argument("--show", action="store_true", help="print each labelled session's handoff")
    args = parser.parse_args()
    results = run(args.data_dir, args.show, args.labels)
    print(f"{results['sessions']} labelled sessions ({args.labels.name})")
    for name, value in results.items():
        print(f"{name:24} {value:.3f}" if isinstance(value, float) else f"{name:24} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
