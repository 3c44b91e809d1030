"""Session-level retrieval quality on LoCoMo (../shared/bench-data/locomo), for each scorer.

Method: each LoCoMo session becomes one Claude Code transcript (speaker A as the user, speaker B as
the assistant, one record a turn, timestamps from the session's date; shared photos as their caption),
one projects folder and index per conversation. Every question but category 5 (unanswerable) is a
query; its relevant sessions are those holding an evidence turn. Now is pinned to the day after the
conversation's last session, days_back from its first day (the `keywords` formula's recency window; the other
modes search every day by default, bench/year.py measures them so). Tuning is done on conversations 0-4 only;
5-9 are reported apart.

Usage: python bench/locomo.py [--conversations 0-4] [--modes keywords,bm25,hybrid,'fts5 reference']
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fts5_reference  # noqa: E402
from recall import metrics  # noqa: E402

MODES = "keywords,bm25,hybrid," + fts5_reference.NAME
LOCOMO = ROOT.parent / "shared" / "bench-data" / "locomo" / "locomo10.json"


def session_time(text: str) -> dt.datetime:
    """`1:56 pm on 8 May, 2023` -> an aware datetime."""
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=dt.UTC)


def write_transcripts(conversation: dict, folder: Path) -> dict[int, str]:
    """One JSONL transcript per session; returns session number -> session id."""
    talk = conversation["conversation"]
    speaker_a = talk["speaker_a"]
    ids: dict[int, str] = {}
    project = folder / "-home-bench-locomo"
    project.mkdir(parents=True)
    number = 1
    while f"session_{number}" in talk:
        sid = f"{number:08d}-0000-4000-8000-{conversation['sample_id'].replace('-', '')[-12:].rjust(12, '0')}"
        start = session_time(talk[f"session_{number}_date_time"])
        lines = []
        for turn, entry in enumerate(talk[f"session_{number}"]):
            text = f"{entry['speaker']}: {entry['text']}"
            if entry.get("blip_caption"):
                text += f" [shares a photo: {entry['blip_caption']}]"
            is_user = entry["speaker"] == speaker_a
            stamp = (start + dt.timedelta(minutes=turn)).isoformat().replace("+00:00", "Z")
            record = {"type": "user" if is_user else "assistant", "uuid": f"{sid}-{turn}", "sessionId": sid,
                      "timestamp": stamp, "cwd": "/home/bench/locomo",
                      "message": {"role": "user" if is_user else "assistant", "id": f"m{number}-{turn}",
                                  "model": "locomo",
                                  "content": text if is_user else [{"type": "text", "text": text}]}}
            lines.append(json.dumps(record))
        (project / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        ids[number] = sid
        number += 1
    return ids


def covering(conversation: dict, ids: dict[int, str]) -> int:
    """days_back from the conversation's first day, counted at the day after its last."""
    days = [session_time(conversation["conversation"][f"session_{n}_date_time"]).date() for n in ids]
    return (max(days) - min(days)).days + 2


def questions(conversation: dict, ids: dict[int, str]) -> list[tuple[str, set[str]]]:
    """Each question but category 5 (unanswerable) with the sessions holding its evidence turns, those with some."""
    asked = []
    for qa in conversation["qa"]:
        if qa.get("category") == 5:
            continue
        relevant = {ids[int(e.split(":")[0][1:])] for e in qa.get("evidence", [])
                    if e.startswith("D") and ":" in e and e.split(":")[0][1:].isdigit()
                    and int(e.split(":")[0][1:]) in ids}
        if relevant:
            asked.append((qa["question"], relevant))
    return asked


def evaluate_conversation(conversation: dict, modes: list[str], workdir: Path) -> dict[str, list]:
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings

    ids = write_transcripts(conversation, workdir / "projects")
    talk = conversation["conversation"]
    last = max(session_time(talk[f"session_{n}_date_time"]) for n in ids)
    os.environ["EYWA_NOW"] = (last + dt.timedelta(days=1)).date().isoformat()
    eywa = Eywa(load_settings(data_dir=workdir / "data", projects_dir=workdir / "projects"))
    days_back = covering(conversation, ids)
    out: dict[str, list] = {mode: [] for mode in modes}
    try:
        eywa.ingest()
        reference = fts5_reference.Reference.of_index(eywa.settings.db_path) if fts5_reference.NAME in modes else None
        for question, relevant in questions(conversation, ids):
            for mode in modes:
                ranked = reference.rank(question) if reference and mode == fts5_reference.NAME else [
                    h.session_id for h in eywa.recall(question, days_back=days_back, max_results=10, mode=mode)]
                out[mode].append((ranked, relevant))
    finally:
        eywa.close()
    return out


def run(conversations: list[int], modes: list[str]) -> dict[str, dict[str, float]]:
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    pooled: dict[str, list] = {mode: [] for mode in modes}
    for index in conversations:
        with tempfile.TemporaryDirectory(prefix="eywa-locomo-") as tmp:
            for mode, rows in evaluate_conversation(data[index], modes, Path(tmp)).items():
                pooled[mode].extend(rows)
    return {mode: {**metrics([r[0] for r in rows], [r[1] for r in rows]), "queries": len(rows)}
            for mode, rows in pooled.items()}


def parse_range(text: str) -> list[int]:
    start, _, end = text.partition("-")
    return list(range(int(start), int(end or start) + 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", default="0-4")
    parser.add_argument("--modes", default=MODES)
    args = parser.parse_args()
    results = run(parse_range(args.conversations), args.modes.split(","))
    print(f"LoCoMo conversations {args.conversations}")
    print("| mode | queries | recall@1 | recall@5 | hit@1 | hit@5 | MRR | NDCG@5 |\n|---|---|---|---|---|---|---|---|")
    for mode, m in results.items():
        print(f"| {mode} | {m['queries']} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | {m['hit@1']:.3f} "
              f"| {m['hit@5']:.3f} | {m['mrr']:.3f} | {m['ndcg@5']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
