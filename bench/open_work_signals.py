"""Base rates of session-level signals of open work: for each signal (an action pattern, or where the closing message
stands), how many sessions labelled open and labelled "nothing open" it fires on, split by whether today's handoff
already names a thread. A signal worth a detection rule fires on open sessions the handoff is silent on and on no
session labelled nothing open, in every set.

Usage: python bench/open_work_signals.py --data-dir DIR SET [SET ...]
SET: a `set` of bench/handoff_labels_blind.yaml (dev, fresh2, agree, ...) or a labels file in bench/
(handoff_labels.yaml, handoff_labels_heldout.yaml). Counts only: safe on a held-out set. A blind set's threads of
kind repo-state are left out (the labellers differ on uncommitted edits); the old sets have no kinds.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import handoff_quality as hq

from eywa.core.extract import commands
from eywa.core.extract.claude_words import sentences
from eywa.core.extract.facts import session_facts
from eywa.core.extract.key_files import DOC_FILE_RE
from eywa.core.extract.plan_steps import plan_file
from eywa.core.extract.said_left import CHECK_HANDED_RE, MERGE_VERDICT_RE, checks_left_to_user, merge_left
from eywa.core.session import SUBAGENT_TOOLS, WRITE_TOOLS, Event, Session

BLIND = Path(__file__).resolve().parent / "handoff_labels_blind.yaml"
# a claim of the closing message that the change will work, not that it was seen to ("should now properly collapse")
_HEDGE_RE = re.compile(r"\bshould (?:now |already |also |still )?(?!be (?:able|done|committed|pushed)|you\b|i\b|we\b)"
                       r"[a-z]+", re.IGNORECASE)
_COMBINED = 3  # signals joined at most, in the search for a precise combination
# any sentence putting a test to the person ("you can verify:", "test the forms on a fork", "let me know if ..."): the
# wide reading that CHECK_HANDED_RE narrows to a step the person runs. "you" and the verb on one line, in either order,
# each looked for once from the line's start: linear on a long line
_TEST_TO_PERSON_RE = re.compile(r"^(?=.*\byou\b)(?=.*\b(?:test|verify|try|check|confirm)\b)|"
                                r"\blet me know (?:if|whether|how)\b", re.IGNORECASE | re.MULTILINE)


def _signals(session: Session) -> set[str]:
    events = session.events
    facts = session_facts(session)
    found: set[str] = set()
    last_edit = last_code = last_check = last_commit = -1
    for index, event in enumerate(events):
        call = event.tool
        if call is None:
            continue
        path = str(call.input.get("file_path", ""))
        if call.name in WRITE_TOOLS and not call.is_error and not plan_file(path):
            last_edit = index
            last_code = last_code if DOC_FILE_RE.search(path) else index
        if call.name == "Bash":
            command = str(call.input.get("command", ""))
            last_check = index if commands.checks(command) else last_check
            last_commit = index if any(s.verb == "commit" for s in commands.git_steps(command)) else last_commit
        if call.name == "ExitPlanMode":
            found.add("exit_plan")
        if call.name in SUBAGENT_TOOLS:
            found.add("subagent")
    marks: dict[str, Callable[[], bool]] = {
        "edits": lambda: last_edit >= 0,
        "edits_code": lambda: last_code >= 0,
        "commits": lambda: last_commit >= 0,
        "edits_never_commits": lambda: last_edit >= 0 and last_commit < 0,
        "check_run": lambda: last_check >= 0,
        "edits_no_check": lambda: last_edit >= 0 and last_check < 0,
        "edit_after_last_check": lambda: last_edit > last_check,
        "code_edit_after_last_check": lambda: last_code > last_check,
        "check_failed_on_the_way": lambda: any(not run.passed for run in facts.runs),
        "last_check_failing": lambda: bool(facts.failing()),
        "todo_list": lambda: bool(session.todos),
        "todo_unfinished": lambda: any(t.get("status") != "completed" for t in session.todos),
        "todo_dropped": lambda: bool(session.todos_dropped),
    }
    found |= {name for name, fires in marks.items() if fires()}
    closing = next((e.text for e in reversed(events) if e.kind == "assistant" and e.text.strip()), "")
    found |= _handed_signals(events, closing, 0 <= last_edit < last_check)
    if closing.rstrip().endswith("?"):
        found.add("closing_question")
    if _HEDGE_RE.search(closing):
        found.add("closing_should")
    prompt = max((i for i, e in enumerate(events) if e.kind == "user"), default=-1)
    turn = events[prompt + 1:]
    written = [e.tool for e in turn if e.tool is not None and e.tool.name in WRITE_TOOLS and not e.tool.is_error]
    if written and all(DOC_FILE_RE.search(str(c.input.get("file_path", ""))) for c in written):
        found.add("last_turn_edits_docs_only")
    if written and not any(e.tool is not None and e.tool.name == "Bash" for e in turn):
        found.add("last_turn_edits_no_shell")
    return found


def _handed_signals(events: list[Event], closing: str, checked_after_edit: bool) -> set[str]:
    """Steps handed to the person: a test put to them (wide), a check they are to run (CHECK_HANDED_RE), in the
    closing or mid-session; whether a check ran after the last edit; a PR called good to merge; and what the rules
    of core/extract/said_left.py make of them."""
    found: set[str] = set()
    said = [s.text for e in events if e.kind == "assistant" and e.text for s in sentences(e.text)]
    closed = {s.text for s in sentences(closing)}
    for name, pattern in (("test_to_person", _TEST_TO_PERSON_RE), ("check_handed", CHECK_HANDED_RE),
                          ("merge_verdict", MERGE_VERDICT_RE)):
        hits = [text for text in said if pattern.search(text)]
        if hits:
            found.add(name)
            found.add(f"{name}_{'closing' if any(text in closed for text in hits) else 'mid'}")
            if name != "merge_verdict":
                found.add(f"{name}_{'' if checked_after_edit else 'no_'}check_after_edit")
    if checks_left_to_user(events):
        found.add("rule_check_left_to_user")
    if merge_left(events):
        found.add("rule_merge_left")
    return found


def _labels(which: str) -> list[dict]:
    path = Path(__file__).resolve().parent / which
    return hq.load_labels(path) if path.suffix == ".yaml" else hq.load_labels(BLIND, which, "repo-state")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="an index built by bench/handoff_quality.py")
    parser.add_argument("sets", nargs="+")
    args = parser.parse_args()
    seen: list[tuple[str, str, frozenset[str]]] = []  # (set, O|N + said|silent, signals)
    for which in args.sets:
        labels = _labels(which)
        handoffs = hq.extracted(args.data_dir, [label["id"] for label in labels])
        for label in labels:
            try:
                session = hq.corpus_session(label["id"])
            except (KeyError, OSError):
                continue  # an agent fixture, not in the corpus
            said = bool(handoffs.get(label["id"], hq.EMPTY)["open_threads"])
            tag = ("O" if label["open_threads"] else "N") + ("said" if said else "silent")
            seen.append((which, tag, frozenset(_signals(session) | {"(all)"})))
    print("signal: per set, labelled open (handoff said / silent), labelled nothing open (said / silent)")
    for name in sorted(set().union(*(signals for _, _, signals in seen))):
        counts = collections.Counter((which, tag) for which, tag, signals in seen if name in signals)
        print(f"{name:28}", "  ".join(f"{which[:8]:>8} O {counts[which, 'Osaid']:2}/{counts[which, 'Osilent']:2} "
                                      f"N {counts[which, 'Nsaid']:2}/{counts[which, 'Nsilent']:2}"
                                      for which in args.sets))
    names = sorted(set().union(*(signals for _, _, signals in seen)) - {"(all)"})
    precise = []
    for size in range(1, _COMBINED + 1):
        for combination in itertools.combinations(names, size):
            hits = [(which, tag) for which, tag, signals in seen if set(combination) <= signals]
            gained = [which for which, tag in hits if tag == "Osilent"]
            if len(gained) >= 2 and len(set(gained)) >= 2 and sum(tag == "Nsilent" for _, tag in hits) <= 1:
                precise.append((len(gained), combination))
    print(f"combinations of up to {_COMBINED} signals firing on silent open sessions of two sets or more and on at "
          f"most one silent session labelled nothing open: {len(precise)}")
    for gained, combination in sorted(precise, reverse=True)[:10]:
        print(f"  {' + '.join(combination)}: {gained} silent open sessions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
