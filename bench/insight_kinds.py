"""Which kinds of insight a full handoff keeps, and which it drops that would have named a decision (dev set only).

Method: for each corpus session of the blind set's `dev` labels, the rules' insights twice: as the handoff keeps
them (core/extract/insights.py `chosen`, at most MAX_INSIGHTS), and every candidate, with the caps lifted
in-process (MAX_INSIGHTS, MAX_CAUSES, NOTES_OF_A_KIND). Each candidate is counted under its kind and strength
(a root cause or a choice stated, and how plainly; a user's direction; a commit's reason; a change reported;
...) as kept or dropped. A kept item "matches" when its line has content-word F1 >= 0.3 with some labelled
decision (bench/handoff_quality.py's strict matcher); a dropped one "gains" when adding it alone to the kept
lines names one label more, one to one. `--full`: only the handoffs whose places are all taken; there a kept
item is "needed" when leaving it out names one label fewer. The held-out set is never read.

Usage: python bench/insight_kinds.py [--full]
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from unittest import mock

import handoff_quality as hq

from eywa.core.extract import insights as rules
from eywa.core.session import Session

_NAMES = {rules.REASONED: "REASONED", rules.REPORTED: "REPORTED", rules.ANNOUNCED: "ANNOUNCED",
          rules.LIMIT: "LIMIT", rules.FOLLOWED: "FOLLOWED", rules.FINDING: "FINDING",
          rules.BEFORE_EDIT: "BEFORE_EDIT", rules.LINTED: "LINTED", rules.CLOSING: "CLOSING",
          rules.WRITTEN: "WRITTEN"}
_KINDS = {"Root cause": "cause", "Decision": "choice", "Found": "found"}


def kind_of(item: rules.Insight, users: set[str], commits: set[str]) -> str:
    """The candidate's kind: who or what said it, else the kind and strength of a sentence stated."""
    if item.text in users:
        return "USER"
    if item.text in commits:
        return "COMMIT"
    return _NAMES.get(item.strength) or f"{_KINDS[item.kind]} s{item.strength}"


def every_candidate(session: Session, repeats: bool = True) -> list[rules.Insight]:
    """Every insight the rules find in `session`, their caps lifted; with `repeats` False, their repeat check too."""
    with mock.patch.multiple(rules, MAX_INSIGHTS=10**6, MAX_CAUSES=10**6, NOTES_OF_A_KIND={}), \
            mock.patch.object(rules, "_repeats", rules._repeats if repeats else lambda item, kept: False):
        return rules.chosen(session)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="only the handoffs whose places are all taken")
    args = parser.parse_args()
    # kind -> kept, kept matching (--full: needed), dropped, dropped gaining a label
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    gained_in: dict[str, set[str]] = defaultdict(set)
    labelled = named = ceiling = 0
    for label in hq.load_labels(hq.BLIND, "dev"):
        try:
            session = hq.corpus_session(label["id"])
        except KeyError:  # the agent fixtures' sessions
            continue
        wanted = [hq.label_text(item) for item in label["decisions"]]
        kept = rules.chosen(session)
        lines = [item.line() for item in kept]
        base = hq.matched_one_to_one(wanted, lines)
        every = every_candidate(session)
        labelled, named = labelled + len(wanted), named + base
        ceiling += hq.matched_one_to_one(wanted, [item.line() for item in every])
        if args.full and len(kept) < rules.MAX_INSIGHTS:
            continue
        users = {item.text for _, item in rules.user_directions(session)}
        commits = {item.text for item in rules.commit_reasons(session)}
        texts = {item.text for item in kept}
        for item in every:
            kind, line = kind_of(item, users, commits), item.line()
            if item.text in texts:
                counts[kind][0] += 1
                counts[kind][1] += (hq.matched_one_to_one(wanted, [x for x in lines if x != line]) < base if args.full
                                    else any(hq.headline_f1(line, text) >= hq.STRICT_F1 for text in wanted))
            else:
                gains = hq.matched_one_to_one(wanted, [*lines, line]) > base
                counts[kind][2] += 1
                counts[kind][3] += gains
                if gains:
                    gained_in[kind].add(label["id"])
    print(f"dev: {labelled} labelled decisions, {named} named, {ceiling} named by every candidate (caps lifted)")
    print(f"{'kind':12} {'kept':>5} {'needed' if args.full else 'match':>6} {'rate':>5} | "
          f"{'dropped':>7} {'gain':>5} {'rate':>5} {'sessions':>8}")
    order = Counter({kind: row[0] for kind, row in counts.items()})
    for kind, _ in order.most_common():
        kept_n, kept_hit, dropped, gained = counts[kind]
        print(f"{kind:12} {kept_n:5} {kept_hit:6} {kept_hit / kept_n if kept_n else 0:5.2f} | {dropped:7} {gained:5} "
              f"{gained / dropped if dropped else 0:5.2f} {len(gained_in[kind]):8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
