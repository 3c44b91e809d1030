"""Where the labelled decisions that no Insight names sit in their session (tunable sets only).

For each labelled decision whose best Insight scores under `UNSAID` (content-word F1, bench/handoff_quality.py), it
counts per set: whether the extractor had it among its candidates before the Insights limit (some candidate, every
limit lifted, reaches the strict 0.3: ranked out) or never (not seen); and in which record of the transcript the
label's `evidence` sits: the user's text, the agent's text (the last of its turn: a report; else mid-turn), a tool's
input (an edit, a command), a tool's output, or none found. Aggregates only.

Usage: python bench/unsaid_decisions.py --data-dir DIR  (DIR: an index built by
`bench/handoff_quality.py --data-dir DIR`)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import handoff_quality as hq
from insight_kinds import every_candidate

UNSAID = 0.15
_MARKS_RE = re.compile(r"[`*]")
KEY_CHARS = 50  # the evidence's first characters looked for in the transcript


def _plain(text: str) -> str:
    return " ".join(_MARKS_RE.sub("", text).split()).lower()


def candidates(session: hq.Session) -> list[str]:
    """Every insight the extractor finds in `session`, its limits and its repeat check lifted."""
    return [item.line() for item in every_candidate(session, repeats=False)]


def _said(record: dict, kind: str) -> bool:
    """Whether `record` is of `kind` (user, assistant) and holds text, not only tool calls or results."""
    content = (record.get("message") or {}).get("content")
    return record.get("type") == kind and (isinstance(content, str) or any(
        isinstance(block, dict) and block.get("type") == "text" for block in content or []))


def _turn_goes_on(records: list[dict], at: int) -> bool:
    """Whether the agent says more after record `at` before the user's next prompt: no report, then."""
    return next((_said(record, "assistant") for record in records[at + 1:]
                 if _said(record, "assistant") or _said(record, "user")), False)


def place(records: list[dict], evidence: str) -> str:
    """The kind of transcript record that first holds the evidence's opening words."""
    key = _plain(evidence)[:KEY_CHARS]
    for at, record in enumerate(records):
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                text = block.get("text", "")
            elif kind == "tool_use":
                text = json.dumps(block.get("input", {}))
            elif kind == "tool_result":
                text = json.dumps(block.get("content"))
            else:
                text = ""
            if key not in _plain(text.replace("\\n", " ").replace('\\"', '"')):
                continue
            if kind == "tool_use":
                return "tool input"
            if kind == "tool_result":
                return "tool output"
            if record.get("type") == "user":
                return "user text"
            return "agent text, mid-turn" if _turn_goes_on(records, at) else "agent text, report"
    return "none found"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    args = parser.parse_args()
    sets = [(name, hq.load_labels(hq.BLIND, name)) for name in hq.TUNABLE]
    sets += [("old", hq.load_labels(hq.LABELS)),
             ("old held-out", hq.load_labels(hq.HELDOUT))]
    for name, labels in sets:
        handoffs = hq.extracted(args.data_dir, [label["id"] for label in labels])
        seen: Counter[str] = Counter()
        where: Counter[str] = Counter()
        for label in labels:
            said = handoffs.get(label["id"], hq.EMPTY)["insights"]
            unsaid = [item for item in label["decisions"] if max(
                (hq.headline_f1(line, hq.label_text(item)) for line in said), default=0.0) < UNSAID]
            if not unsaid:
                continue
            try:
                path, session = hq.corpus_path(label["id"]), hq.corpus_session(label["id"])
            except KeyError:  # the agent fixtures' sessions
                continue
            found = candidates(session)
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            for item in unsaid:
                best = max((hq.headline_f1(line, hq.label_text(item)) for line in found), default=0.0)
                seen["ranked out" if best >= hq.STRICT_F1 else "not seen"] += 1
                where[place(records, str(item.get("evidence") or hq.label_text(item)))] += 1
        print(f"{name}: {sum(seen.values())} unsaid; {dict(seen)}; {dict(sorted(where.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
