"""Open or done, and what is open, as a blind reader reads a whole short session: how often the deterministic handoff
agrees, and how many of the reader's open threads it names.

Each set under bench/scripted/ is a file of sessions (`NAME.txt`, separated by lines `=====`) that a helper wrote in
the styles of Codex CLI, Gemini CLI and Claude Code, and its labels (`NAME.tsv`: number, `open` or `done`, the open
threads in its own words separated by ` | `), both written before any run of Eywa. A session is a script of tagged
blocks, each starting a line: `USER:` and `AGENT:` text, `EDIT: path` and `WRITE: path` (a file edited or made),
`RUN: command` and its output, `OUT:` (exit 0) or `FAIL:` (non-zero). Where a closing set (bench/closings.py) holds
one last message, these hold what comes before it: caveats said mid-session and resolved later or not, plans,
questions, commits, pushes and check runs. Each script is read as a Claude Code, a Codex and a Gemini session.

A handoff "says open" when its status is partial or it names an open thread; a labelled thread is named when some
open thread of the handoff has content-word F1 >= 0.3 with it, one to one (bench/handoff_quality.py's strict matcher).

Usage: python bench/scripted.py [--show] [NAME ...]   (--show: each disagreement and each thread not named)
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from closings import AGENTS, T0, Tally  # noqa: E402
from handoff_quality import matched_one_to_one  # noqa: E402

from eywa.core.extract.deterministic import draft  # noqa: E402
from eywa.core.session import Event, Session, ToolCall  # noqa: E402
from eywa.core.sources.common import fail, keep_output  # noqa: E402

SETS = BENCH / "scripted"
ROOT = "/tmp/project"
_TAG_RE = re.compile(r"^(USER|AGENT|EDIT|WRITE|RUN|OUT|FAIL):[ \t]?(.*)$")


@dataclass(frozen=True)
class Label:
    state: str  # open | done
    threads: tuple[str, ...]


@dataclass(frozen=True)
class Score:
    tally: Tally
    named: int
    threads: int

    def __str__(self) -> str:
        return f"{self.tally}; threads named {self.named}/{self.threads}"


def blocks(script: str) -> list[tuple[str, str]]:
    """(tag, text) of each block, in order; a line without a tag continues the block before it."""
    found: list[tuple[str, list[str]]] = []
    for line in script.splitlines():
        if tag := _TAG_RE.match(line):
            found.append((tag.group(1), [tag.group(2)]))
        elif found:
            found[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"text before the first tag: {line!r}")
    return [(tag, "\n".join(lines).strip()) for tag, lines in found]


def session_of(agent: str, script: str) -> Session:
    """The session the script tells, as the agent's reader would have read it: tool names as every source maps them,
    a command's output kept and a failure's cut as they are (core/sources/common.py)."""
    start = T0 - dt.timedelta(hours=1)
    session = Session(session_id="5c21b7ed-0000-4000-8000-000000000001", agent=agent, cwd=ROOT, first_ts=start)
    for at, (tag, text) in enumerate(blocks(script)):
        when = start + dt.timedelta(seconds=20 * at)
        if tag in ("USER", "AGENT"):
            session.events.append(Event("user" if tag == "USER" else "assistant", when, text=text))
        elif tag in ("EDIT", "WRITE"):
            call = ToolCall(f"c{at}", tag.title(), {"file_path": f"{ROOT}/{text.removeprefix('./')}"})
            session.events.append(Event("tool", when, tool=call))
        elif tag == "RUN":
            session.events.append(Event("tool", when, tool=ToolCall(f"c{at}", "Bash", {"command": text})))
        else:
            call = session.events[-1].tool if session.events else None
            if call is None or call.name != "Bash":
                raise ValueError(f"{tag}: not right after a RUN")
            keep_output(call, text, str)  # as every source keeps a command's output: its end, and a failure's start
            if tag == "FAIL":
                fail(call, text, str)
        session.last_ts = when
    return session


def sessions(name: str) -> tuple[list[str], list[Label]]:
    """The set's scripts and their labels, in order."""
    scripts = [text.strip() for text in (SETS / f"{name}.txt").read_text(encoding="utf-8").split("\n=====\n")]
    labels = []
    for line in (SETS / f"{name}.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip():
            _, state, *rest = line.split("\t")
            threads = tuple(t.strip() for t in (rest[0] if rest else "").split(" | ") if t.strip())
            labels.append(Label(state.strip(), threads if state.strip() == "open" else ()))
    if len(scripts) != len(labels):
        raise SystemExit(f"{name}: {len(scripts)} sessions but {len(labels)} labels")
    return scripts, labels


def score(name: str, agent: str, show: bool = False) -> Score:
    scripts, labels = sessions(name)
    agree = false_alarms = misses = named = wanted = 0
    for number, (script, label) in enumerate(zip(scripts, labels, strict=True), 1):
        handoff = draft(session_of(agent, script), ZoneInfo("UTC"))
        got = "open" if handoff.status == "partial" or handoff.open_threads else "done"
        agree += got == label.state
        false_alarms += got == "open" and label.state == "done"
        misses += got == "done" and label.state == "open"
        hits = matched_one_to_one(list(label.threads), handoff.open_threads)
        named, wanted = named + hits, wanted + len(label.threads)
        if show and (got != label.state or hits < len(label.threads)):
            print(f"  {name} #{number} labelled {label.state}, said {handoff.status}, "
                  f"named {hits}/{len(label.threads)}")
            for thread in label.threads:
                print(f"      label: {thread}")
            for thread in handoff.open_threads:
                print(f"      said:  {thread}")
    return Score(Tally(agree, false_alarms, misses, len(scripts)), named, wanted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="the sets to score (default: every set)")
    parser.add_argument("--show", action="store_true", help="print each disagreement and each thread not named")
    args = parser.parse_args()
    for name in args.names or sorted(path.stem for path in SETS.glob("*.txt")):
        for agent in AGENTS:
            print(f"{name:10} {agent:11} {score(name, agent, args.show)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
