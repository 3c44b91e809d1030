"""Open or done, as a blind reader reads an agent's closing message: how often the deterministic handoff agrees.

Each set under bench/closings/ is a file of closing messages (`NAME.txt`, separated by lines `=====`) that a helper
wrote in the styles of Codex CLI, Gemini CLI and Claude Code, and a file of its labels (`NAME.tsv`: number, `open` or
`done`, what is left in its own words), both written before any run of Eywa. Each closing ends a Claude Code, a
Codex and a Gemini session that asked for a change and edited one file; the handoff "says open" when its status is
partial or it names an open thread (a note counts: the reader is told something is left).

Usage: python bench/closings.py [--show]   (--show: each disagreement, the closing's start and the threads said)
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from eywa.core.extract.deterministic import draft  # noqa: E402
from eywa.core.session import Event, Session, ToolCall  # noqa: E402

SETS = BENCH / "closings"
AGENTS = ("claude-code", "codex", "gemini")
T0 = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Tally:
    agree: int
    false_alarms: int  # said open, labelled done
    misses: int  # said nothing open, labelled open
    of: int

    def __str__(self) -> str:
        return f"{self.agree}/{self.of} (false alarms {self.false_alarms}, misses {self.misses})"


def closings(name: str) -> tuple[list[str], list[str]]:
    """The set's closing messages and their labels (`open` or `done`), in order."""
    texts = [text.strip() for text in (SETS / f"{name}.txt").read_text(encoding="utf-8").split("\n=====\n")]
    labels = [line.split("\t")[1] for line in (SETS / f"{name}.tsv").read_text(encoding="utf-8").splitlines() if line]
    if len(texts) != len(labels):
        raise SystemExit(f"{name}: {len(texts)} closings but {len(labels)} labels")
    return texts, labels


def said(agent: str, closing: str) -> tuple[str, list[str]]:
    """(status, open threads) of a session of `agent` that edited one file and closed with `closing`."""
    session = Session(session_id="c1a5e0de-0000-4000-8000-000000000001", agent=agent, cwd="/tmp/project",
                      first_ts=T0, last_ts=T0)
    session.events = [Event("user", T0, text="Make the change we discussed"),
                      Event("tool", T0, tool=ToolCall("e1", "Edit", {"file_path": "/tmp/project/main.py"})),
                      Event("assistant", T0, text=closing)]
    handoff = draft(session, ZoneInfo("UTC"))
    return handoff.status, handoff.open_threads


def score(name: str, agent: str, show: bool = False) -> Tally:
    texts, labels = closings(name)
    agree = false_alarms = misses = 0
    for number, (text, label) in enumerate(zip(texts, labels, strict=True), 1):
        status, threads = said(agent, text)
        got = "open" if status == "partial" or threads else "done"
        agree += got == label
        false_alarms += got == "open" and label == "done"
        misses += got == "done" and label == "open"
        if show and got != label:
            print(f"  {name} #{number} labelled {label}, said {status}: {text[:100]!r}")
            for thread in threads:
                print(f"      {thread}")
    return Tally(agree, false_alarms, misses, len(texts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each disagreement")
    args = parser.parse_args()
    for path in sorted(SETS.glob("*.txt")):
        for agent in AGENTS:
            print(f"{path.stem:8} {agent:11} {score(path.stem, agent, args.show)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
