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

The strict matcher (`--strict`; always for bench/handoff_labels_blind.yaml, whose items are sentences in the
labeller's words, not match words): a labelled thread or decision is named when one extracted item, matched
one to one (each extracted item names at most one label), has a content-word F1 >= 0.3 with the label's
`text` (the old sets, which have none, use the session's own words of their `evidence`); open-work
detection is the F1 of "says open" against "labelled open"; a key file is found when a listed path ends
with the labelled one (or the reverse). The agent fixtures (tests/fixtures/agents: Claude Code, Codex CLI,
Gemini CLI) are ingested beside the corpus so that their labels are scored too.

Usage: python bench/handoff_quality.py [--labels PATH] [--strict] [--set dev|heldout|fresh|fresh2|agree|agree2|agree3]
       [--reader SET] [--without-kind KIND] [--data-dir DIR] [--show] [--by-kind] [--near] [--consensus SET]
(--labels bench/handoff_labels_heldout.yaml scores the old held-out set, chosen and labelled without reading
Eywa's handoffs; --labels bench/handoff_labels_blind.yaml the blind set, by `set`. `--reader agree` scores another
blind reader's labels of the same sessions in place of Eywa's handoffs: how far two readers agree; `--without-kind
repo-state` leaves that kind of open thread out of the labels and of a reader's items. `--by-kind`, `--near` and
`--consensus SET` print, in place of the scores, aggregates only (safe on a held-out set): threads named per kind;
each labelled item's best F1 against the items said, in tenths; the items a reader labelled that the reader of set
SET also named, and how many of those the handoff names, repository state aside for threads.)
"""

from __future__ import annotations

import argparse
import math
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from eywa.core.session import Session

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SHARED = ROOT.parent / "shared"
LABELS = BENCH / "handoff_labels.yaml"
BLIND = BENCH / "handoff_labels_blind.yaml"
HELDOUT = BENCH / "handoff_labels_heldout.yaml"  # the old held-out set: tunable now, unlike the blind heldout and fresh
OLD = (LABELS, HELDOUT)  # the two old label files, whose threads have no kind
AGENTS = ROOT / "tests" / "fixtures" / "agents"
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


STRICT_F1 = 0.3


def matched_one_to_one(wanted: list[str], items: list[str], threshold: float = STRICT_F1) -> int:
    """How many of `wanted` are named: pairs taken best F1 first, each label and each item used once."""
    pairs = sorted(((headline_f1(item, text), w, i) for w, text in enumerate(wanted) for i, item in enumerate(items)),
                   reverse=True)
    used_w: set[int] = set()
    used_i: set[int] = set()
    for f1, w, i in pairs:
        if f1 < threshold:
            break
        if w not in used_w and i not in used_i:
            used_w.add(w)
            used_i.add(i)
    return len(used_w)


def label_text(item: dict) -> str:
    return str(item.get("text") or item.get("evidence") or " ".join(map(str, item.get("match", []))))


def _file_found(path: str, listed: list[str]) -> bool:
    paths = [m.group(1) for line in listed if (m := re.search(r"`([^`]+)`", line))]
    path = path.strip("/")
    return any(p == path or p.endswith("/" + path) or path.endswith("/" + p) for p in paths)


EMPTY = {"headline": "", "status": None, "open_threads": [], "insights": [], "key_files": []}


SAID = {"open_threads": "open_threads", "decisions": "insights"}  # a label's field -> the handoff's field naming it


@dataclass
class Tally:
    named: int = 0
    of: int = 0

    def __str__(self) -> str:
        return f"{self.named}/{self.of}"


@dataclass(frozen=True)
class Detection:
    """Open-work detection's counts: said open and labelled open, said open but not labelled, labelled but not said."""
    both: int = 0
    said_only: int = 0
    labelled_only: int = 0

    @property
    def precision(self) -> float:
        return self.both / (self.both + self.said_only) if self.both + self.said_only else 0.0

    @property
    def recall(self) -> float:
        return self.both / (self.both + self.labelled_only) if self.both + self.labelled_only else 0.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0

    def __str__(self) -> str:
        # says whether detection misses by saying too much (said only) or too little (labelled only)
        return (f"{self.precision:.3f} / {self.recall:.3f} (said open and labelled {self.both}, said open not "
                f"labelled {self.said_only}, labelled not said {self.labelled_only})")


def by_kind(labels: list[dict], handoffs: dict[str, dict]) -> dict[str, tuple[Tally, Tally]]:
    """Per kind of labelled open thread: threads named (each label alone against the items said) of labelled, and
    sessions with a thread of that kind whose handoff says open of those sessions."""
    kinds: dict[str, tuple[Tally, Tally]] = {}
    for label in labels:
        said = handoffs.get(label["id"], EMPTY)["open_threads"]
        seen: set[str] = set()
        for item in label["open_threads"]:
            kind = item.get("kind", "?")
            threads, sessions = kinds.setdefault(kind, (Tally(), Tally()))
            threads.of += 1
            threads.named += matched_one_to_one([label_text(item)], said)
            if kind not in seen:
                seen.add(kind)
                sessions.of += 1
                sessions.named += bool(said)
    return kinds


def near_misses(labels: list[dict], handoffs: dict[str, dict]) -> dict[str, Counter[str]]:
    """Per field, the labelled items by the best content-word F1 an item said reaches, in tenths ("none said" when the
    handoff says nothing there)."""
    bins: dict[str, Counter[str]] = {field: Counter() for field in SAID}
    for label in labels:
        got = handoffs.get(label["id"], EMPTY)
        for field, key in SAID.items():
            for item in label[field]:
                best = max((headline_f1(said, label_text(item)) for said in got[key]), default=None)
                bins[field]["none said" if best is None else f"{min(int(best * 10), 9) / 10:.1f}"] += 1
    return bins


def consensus(labels: list[dict], others: list[dict], handoffs: dict[str, dict]) -> dict[str, dict[str, Tally]]:
    """Per field and kind, of the items in `labels` that the other reader of the same session (`others`) also named
    (F1 >= 0.3), how many the handoff names; labelled repository state is left out of the threads."""
    other = {label["id"]: label for label in others}
    found: dict[str, dict[str, Tally]] = {field: {} for field in SAID}
    for label in labels:
        if label["id"] not in other:
            continue
        got = handoffs.get(label["id"], EMPTY)
        for field, key in SAID.items():
            theirs = [label_text(item) for item in other[label["id"]][field]]
            for item in label[field]:
                if field == "open_threads" and item.get("kind") == "repo-state":
                    continue
                if matched_one_to_one([label_text(item)], theirs):
                    tally = found[field].setdefault(item.get("kind", ""), Tally())
                    tally.of += 1
                    tally.named += matched_one_to_one([label_text(item)], got[key])
    return found


def _session_level(labels: list[dict], handoffs: dict[str, dict]) -> tuple[float, int, Detection]:
    """Summed headline F1, statuses right, and open-work detection's counts."""
    f1, status, tp, fp, fn = 0.0, 0, 0, 0, 0
    for label in labels:
        got = handoffs.get(label["id"], EMPTY)
        f1 += headline_f1(got["headline"], label["headline"])
        status += got["status"] == label["status"]
        said, truth = bool(got["open_threads"]), bool(label["open_threads"])
        tp += said and truth
        fp += said and not truth
        fn += truth and not said
    return f1, status, Detection(tp, fp, fn)


def score(labels: list[dict], handoffs: dict[str, dict]) -> dict[str, float]:
    """`handoffs`: session id -> {headline, status, open_threads, insights, key_files}."""
    n = len(labels)
    f1, status, detection = _session_level(labels, handoffs)
    threads = threads_found = decisions = decisions_found = files = files_found = 0
    for label in labels:
        got = handoffs.get(label["id"], EMPTY)
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
        "open-thread precision": detection.precision,
        "open-thread recall": detection.recall,
        "threads found": threads_found / threads if threads else 0.0,
        "decisions found": decisions_found / decisions if decisions else 0.0,
        "key files found": files_found / files if files else 0.0,
    }


def score_strict(labels: list[dict], handoffs: dict[str, dict]) -> dict[str, float | Detection]:
    """The strict matcher (see the module's doc): per-item content-word F1 >= 0.3, one to one."""
    n = len(labels)
    f1, status, detection = _session_level(labels, handoffs)
    threads = threads_found = decisions = decisions_found = files = files_found = said_items = 0
    for label in labels:
        got = handoffs.get(label["id"], EMPTY)
        said_items += len(got["open_threads"])
        threads += len(label["open_threads"])
        threads_found += matched_one_to_one([label_text(i) for i in label["open_threads"]], got["open_threads"])
        decisions += len(label["decisions"])
        decisions_found += matched_one_to_one([label_text(i) for i in label["decisions"]], got["insights"])
        files += len(label["key_files"])
        files_found += sum(_file_found(str(path), got["key_files"]) for path in label["key_files"])
    return {
        "sessions": n,
        "open-work detection F1": detection.f1,
        "open-work detection precision / recall": detection,
        "threads named": threads_found / threads if threads else 0.0,
        "decisions named": decisions_found / decisions if decisions else 0.0,
        "headline word F1": f1 / n,
        "key files found": files_found / files if files else 0.0,
        "status accuracy": status / n,
        "labelled threads": threads,
        "threads said": said_items,
    }


SETS = ("dev", "heldout", "fresh", "fresh2", "agree", "agree2", "agree3")
TUNABLE = ("dev", "fresh2", "agree", "agree2", "agree3")  # the blind sets whose labels and handoffs may be read


def load_labels(path: Path = LABELS, which: str | None = None, without_kind: str | None = None) -> list[dict]:
    """The labelled sessions, only those of `set` `which` (one of `SETS`) when given, without the open threads of
    kind `without_kind`."""
    labels = yaml.safe_load(path.read_text(encoding="utf-8"))["sessions"]
    chosen = [label for label in labels if which is None or label.get("set") == which]
    if without_kind is None:
        return chosen
    return [{**label, "open_threads": [item for item in label["open_threads"] if item.get("kind") != without_kind]}
            for label in chosen]


def as_handoff(label: dict) -> dict:
    """A reader's labels in a handoff's place: its open threads, decisions and key files as the items said."""
    return {"headline": label["headline"], "status": label["status"],
            "open_threads": [label_text(item) for item in label["open_threads"]],
            "insights": [label_text(item) for item in label["decisions"]],
            "key_files": [f"`{path}`" for path in label["key_files"]]}


def extracted(data_dir: Path, ids: list[str]) -> dict[str, dict]:
    """Labelled id -> its handoff, named by its file's stem or its session's own id (a Codex or Gemini id)."""
    from eywa.core.handoffs.model import parse_handoff

    wanted = set(ids)
    found: dict[str, dict] = {}
    for path in (data_dir / "handoffs").rglob("*.md"):
        handoff = parse_handoff(path.read_text(encoding="utf-8"))
        key = path.stem if path.stem in wanted else handoff.session_id
        if key in wanted:
            found[key] = {"headline": handoff.headline, "status": handoff.status,
                          "open_threads": handoff.open_threads, "insights": handoff.insights,
                          "key_files": handoff.key_files, "text": handoff.to_markdown()}
    return found


def corpus_path(session_id: str) -> Path:
    """The corpus transcript file of `session_id`; KeyError when the corpus has none (an agent fixture's id)."""
    path = next((SHARED / "corpus").rglob(f"{session_id}.jsonl"), None)
    if path is None:
        raise KeyError(session_id)
    return path


def corpus_session(session_id: str) -> Session:
    """A session of the corpus, read in place as ingest reads it (unredacted); KeyError when the corpus has none."""
    from eywa.core.sources.claude import subagent_parent
    from eywa.core.sources.discovery import group_sessions, scan_files
    from eywa.core.sources.sessions import read_session

    path = corpus_path(session_id)
    return read_session(group_sessions(scan_files(path.parent), subagent_parent)[session_id], lambda text: text)[0]


def corpus_sessions() -> list[tuple[Path, Session]]:
    """Every session of both corpus trees with its folder, read in place as ingest reads it (unredacted, a sidechain
    folded into its parent); none of sidechains whose parent's transcript the corpus lacks."""
    from eywa.core.sources.claude import subagent_parent
    from eywa.core.sources.discovery import group_sessions, scan_files
    from eywa.core.sources.sessions import read_session

    found: list[tuple[Path, Session]] = []
    for folder in sorted({path.parent for path in (SHARED / "corpus").glob("*/projects/*/*.jsonl")}):
        found += [(folder, read_session(group, lambda text: text)[0])
                  for group in group_sessions(scan_files(folder), subagent_parent).values() if group.main]
    return found


def build_index(data_dir: Path) -> None:
    """Both corpus trees and the agent fixtures (Claude Code, Codex CLI, Gemini CLI), read in place."""
    from eywa.core.api import Eywa
    from eywa.core.config.settings import SourceSettings, load_settings
    from eywa.core.sources import KINDS

    folders = {"claude-code": [SHARED / "corpus", AGENTS / "claude"], "codex": [AGENTS / "codex"],
               "gemini": [AGENTS / "gemini"]}
    sources = [SourceSettings(kind=kind, path=path) for kind, paths in folders.items() for path in paths]
    sources += [SourceSettings(kind=kind, enabled=False) for kind in KINDS if kind not in folders]
    eywa = Eywa(load_settings(data_dir=data_dir, projects_dir=SHARED / "corpus", sources=sources))
    try:
        eywa.ingest()
    finally:
        eywa.close()


def items_said(labels: list[dict], data_dir: Path | None = None, labels_path: Path = LABELS,
               reader: str | None = None, without_kind: str | None = None) -> tuple[list[dict], dict[str, dict]]:
    """The labels and what was said of their sessions: each handoff, on an index built here unless `data_dir` holds
    one; with `reader`, that set's labels of the same sessions instead (and only the sessions it read)."""
    if reader:
        read = {label["id"]: as_handoff(label) for label in load_labels(labels_path, reader, without_kind)}
        return [label for label in labels if label["id"] in read], read
    with tempfile.TemporaryDirectory(prefix="eywa-handoffs-") as tmp:
        folder = data_dir or Path(tmp)
        if not (folder / "index.sqlite3").exists():
            build_index(folder)
        return labels, extracted(folder, [label["id"] for label in labels])


def run(data_dir: Path | None = None, show: bool = False, labels_path: Path = LABELS, strict: bool = False,
        which: str | None = None, reader: str | None = None,
        without_kind: str | None = None) -> dict[str, float | Detection]:
    """The scores against the labels at `labels_path`, on an index built here unless `data_dir` holds one; with
    `reader`, of that set's labels of the same sessions instead of the handoffs."""
    labels, handoffs = items_said(load_labels(labels_path, which, without_kind), data_dir, labels_path, reader,
                                  without_kind)
    if reader:
        return score_strict(labels, handoffs)
    if show:
        for label in labels:
            print(handoffs.get(label["id"], {}).get("text", f"(no handoff for {label['id']})"))
    return (score_strict if strict or labels_path.name == BLIND.name else score)(labels, handoffs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS,
                        help=f"the labels to score against (default {LABELS.name})")
    parser.add_argument("--strict", action="store_true", help="the strict per-item matcher (always for the blind set)")
    parser.add_argument("--set", choices=SETS, help="only the labels of this set")
    parser.add_argument("--reader", choices=SETS, help="score this set's labels of the same sessions, not Eywa's")
    parser.add_argument("--without-kind", help="leave out the labelled open threads of this kind (repo-state, ...)")
    parser.add_argument("--data-dir", type=Path, help="reuse an index here (built if missing)")
    parser.add_argument("--show", action="store_true", help="print each labelled session's handoff")
    parser.add_argument("--by-kind", action="store_true", help="threads named and sessions said open, per kind")
    parser.add_argument("--near", action="store_true", help="each labelled item's best F1 against the items said")
    parser.add_argument("--consensus", choices=SETS, metavar="SET",
                        help="items this set's reader of the same session also named, and how many are named")
    args = parser.parse_args()
    if args.by_kind or args.near or args.consensus:
        report(args)
        return 0
    results = run(args.data_dir, args.show, args.labels, args.strict, args.set, args.reader, args.without_kind)
    print(f"{results['sessions']} labelled sessions ({args.labels.name}{' ' + args.set if args.set else ''})")
    for name, value in list(results.items())[1:]:  # the sessions are in the line above
        print(f"{name:24} {value:.3f}" if isinstance(value, float) else f"{name:24} {value}")
    return 0


def report(args: argparse.Namespace) -> None:
    """The aggregates `--by-kind`, `--near` and `--consensus` ask for (no item, handoff or transcript text)."""
    labels, handoffs = items_said(load_labels(args.labels, args.set, args.without_kind), args.data_dir, args.labels,
                                  args.reader, args.without_kind)
    print(f"{len(labels)} labelled sessions ({args.labels.name}{' ' + args.set if args.set else ''})")
    if args.by_kind:
        print("threads by kind (named/labelled), sessions with kind (said open/total)")
        for kind, (threads, sessions) in by_kind(labels, handoffs).items():
            print(f"  {kind:18} {threads}   sessions {sessions}")
        for field, key in SAID.items():
            print(f"{field}: labelled {sum(len(label[field]) for label in labels)}, said "
                  f"{sum(len(handoffs.get(label['id'], EMPTY)[key]) for label in labels)}")
    if args.near:
        for field, bins in near_misses(labels, handoffs).items():
            print(field, sorted(bins.items()))
    if args.consensus:
        for field, kinds in consensus(labels, load_labels(args.labels, args.consensus), handoffs).items():
            total = Tally(sum(t.named for t in kinds.values()), sum(t.of for t in kinds.values()))
            per_kind = "; " + ", ".join(f"{kind} {tally}" for kind, tally in kinds.items()) \
                if field == "open_threads" else ""
            print(f"consensus {field} with {args.consensus}{' (repo-state aside)' if field == 'open_threads' else ''}: "
                  f"{total} named{per_kind}")


if __name__ == "__main__":
    raise SystemExit(main())
