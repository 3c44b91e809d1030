"""What followed each question the agent put to the user (an offer "Want me to fix these?", a choice "Should we add
`edit_file` defensively, or leave it out?", "Which approach do you prefer?"), over the whole corpus: the session
ended, the agent went ahead with tools before any reply, the reply answers it at once (yes, no, an option's number,
"let's ..."), or another prompt came (moved on, or answered in other words: read those by hand with --show).

Usage: python bench/open_choices.py [--show] [--data-dir DIR]
--show lists the rows other than answered at once, each with the kinds of open threads the tunable sets' readers
labelled on its session (dev, fresh2, agree, agree2, and the two old sets, whose threads have no kind: "open"; "none" =
labelled, nothing open) and, with --data-dir, the open threads today's handoff says. It reads
bench/handoff_labels_heldout.yaml, the old held-out set (tunable despite its name); the blind sets `heldout` and `fresh`
of bench/handoff_labels_blind.yaml are never read.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import handoff_quality as hq

from eywa.core.extract.claude_words import sentences
from eywa.core.extract.said_left import ASK_PREFIX, YES_WORDS
from eywa.core.session import Session

# a question put to the user: an offer of a step, or a choice between options
_ASKED_RE = re.compile(rf"\b{ASK_PREFIX}\b|\b(?:would|do) you (?:like|want|prefer)\b|\bshould we\b|\bprefer\b|"
                       r"\bwant to\b[^?]*\bor\b|\bwhich (?:\w+ )?(?:do|would|should) (?:you|we|i)\b|"
                       r"\bwhich (?:approach|option|one|way)\b|\bhow would you like\b", re.IGNORECASE)
# a reply that takes the question up at once: yes or no, an option by number or letter, "let's ...", "both"
_ANSWER_RE = re.compile(rf"^(?:{YES_WORDS}|no|nope|don'?t|let'?s|option|\d+\b|[abc]\b|both|neither|yup)\b",
                        re.IGNORECASE)


def followed(session: Session) -> list[tuple[int, str, str, str]]:
    """(event index, the question, what followed: ended | went ahead | answered | other prompt, the next prompt)
    for each agent message that asks the user something."""
    rows: list[tuple[int, str, str, str]] = []
    events = session.events
    for index, event in enumerate(events):
        asked = [s.text for s in sentences(event.text) if s.text.endswith("?") and _ASKED_RE.search(s.text)] \
            if event.kind == "assistant" else []
        if not asked:
            continue
        after = events[index + 1:]
        reply = next((e for e in after if e.kind == "user" and e.text.strip()), None)
        before = after[:after.index(reply)] if reply is not None else after
        prompt = reply.text.strip() if reply is not None else ""
        what = "went ahead" if any(e.tool is not None and e.tool.name != "AskUserQuestion" for e in before) else \
            "ended" if reply is None else "answered" if _ANSWER_RE.match(prompt) else "other prompt"
        rows.append((index, asked[-1], what, prompt))
    return rows


def _labelled() -> dict[str, list[tuple[str, str]]]:
    """Session id -> (set, the kinds of its open threads or "none") for each tunable reader."""
    kinds: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for which, path in [*((s, hq.BLIND) for s in hq.TUNABLE), *((p.stem, p) for p in hq.OLD)]:
        for label in hq.load_labels(path, which if path == hq.BLIND else None):
            said = ",".join(sorted({t.get("kind", "open") for t in label["open_threads"]})) or "none"
            kinds[label["id"]].append((which, said))
    return kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    sessions = [session for _, session in hq.corpus_sessions()]
    rows = [(session.session_id, *row) for session in sessions for row in followed(session)]
    print(f"{len(sessions)} sessions, {len(rows)} agent messages asking the user:",
          ", ".join(f"{what} {n}" for what, n in collections.Counter(row[3] for row in rows).most_common()))
    if not args.show:
        return 0
    labelled = _labelled()
    shown = [row for row in rows if row[3] != "answered"]
    handoffs = hq.extracted(args.data_dir, [row[0] for row in shown]) if args.data_dir else {}
    for session_id, index, question, what, prompt in shown:
        sets = " ".join(f"{which}:{kinds}" for which, kinds in labelled.get(session_id, [])) or "unlabelled"
        print(f"{session_id[:8]} #{index} {what} [{sets}]\n  asked: {question[:160]}")
        if prompt:
            print(f"  next:  {' '.join(prompt.split())[:160]}")
        for thread in handoffs.get(session_id, hq.EMPTY)["open_threads"]:
            print(f"  eywa:  {thread[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
