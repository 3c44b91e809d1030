"""A learned picker of open-thread sentences, measured across sessions AND readers (issue 25; bench/RESULTS.md,
"Step 21 (a learned thread picker, measured)"): does a logistic regression over generic features of the agent's prose
pick the caveats named in passing and the steps not taken that the hand rules miss, on sessions and readers it was not
fitted on?

Candidates: every sentence or list item of every assistant message of a session (claude_words.sentences), cut at a
clause (said_left.clause), 3 content words or more, none an item of the handoff already says (content-word F1 >= 0.3).
Features (FEATURES; no session id, no file name, no bag of words): cue words and phrases, where it sits (last message,
the 3 before, earlier; fraction through the session; place in its message), the heading above it (next / notes /
done), a list item, a question, length, code named, whether later agent text says its words again or later tool
inputs name its code, whether the person wrote after it, and the caveat / next-step rules' verdict on it.
Positive: content-word F1 (handoff_quality.headline_f1) >= 0.3 with the text or evidence of any caveat or
step-not-taken label of the session by any tunable reader (dev, agree, fresh2, agree2; the two old yaml files, whose
threads have no kind, all of theirs). Group-wise validation: fit on the dev-session group (dev + agree + old labels of
those sessions), test on the fresh2-session group (fresh2 + agree2 + old), and the reverse. The threshold is chosen on
the training group out of fold (5 folds of sessions: threads named + detection F1 summed over its sets); the test group
is scored strictly per set with the top-1 / top-2 candidates above it added as "Caveat: ..." threads, (a) only to
sessions whose handoff already says open, (b) to every session. For scale: the same picks added to every open session
with no threshold, random picks so added (mean of 30 draws), and the ceiling (each open session given the candidates
that best match that set's own labels). `--model ranker` fits a softmax within each session instead; `--least` sets a
positive's F1. It reads bench/handoff_labels_heldout.yaml, the old held-out set (tunable despite its name); the blind
sets `heldout` and `fresh` of bench/handoff_labels_blind.yaml are never read.

Usage: python bench/thread_picker.py --data-dir DIR [--model lr|ranker] [--least F1]
(DIR: an index built by bench/handoff_quality.py --data-dir DIR)
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import handoff_quality as hq
from thread_scorer import (
    NEXT_HEADING_RE,
    NOTES_HEADING_RE,
    Candidate,
    fit,
    fitted,
    load_sessions,
    out_of_fold,
    predict,
)

from eywa.core.extract.caveats import kind_of
from eywa.core.extract.claude_words import sentences
from eywa.core.extract.open_threads import LATER_RE, NEXT_STEP_RE
from eywa.core.extract.said_left import clause, labelled_step
from eywa.core.session import Session

GROUPS = {"dev": ("dev", "agree"), "fresh2": ("fresh2", "agree2")}  # the sessions of the first set, read by both
KINDS = ("caveat", "step-not-taken")

_CUES = {
    "not_yet": r"\bnot yet\b|\byet to\b|\bhaven't\b|\bhasn't\b|\bnot been\b",
    "only": r"\bonly\b",
    "still": r"\bstill\b",
    "todo": r"\btodo\b|\bfixme\b|\btbd\b",
    "later": r"\blater\b|\bfuture\b|\beventually\b|\bfollow-?up\b|\bseparate(?:ly)?\b|\bfor now\b",
    "skipped": r"\bskip\w*|\bdefer\w*|\bpostpone\w*|\bout of scope\b|\bleft as\b|\btoo complex\b",
    "cannot": r"\bcan't\b|\bcannot\b|\bcouldn't\b|\bunable\b|\bwon't\b|\bwasn't able\b|\bnot able\b",
    "limitation": r"\blimitation|\bcaveat|\bknown issue|\bworkaround|\bgotcha|\bwarning\b",
    "note": r"^note\b|\bnote that\b|\bkeep in mind\b|\bbe aware\b|\bworth noting\b|\bimportant\b",
    "contrast": r"\bhowever\b|\bbut\b|\balthough\b|\bthough\b",
    "hedge": r"\bmight\b|\bmay\b|\bcould\b|\bpossibly\b|\blikely\b|\bprobably\b",
    "need": r"\bneeds? to\b|\bwill need\b|\bshould\b|\bmust\b|\bhave to\b|\brequires?\b",
    "offer": r"\brecommend\w*|\bconsider\w*|\bsuggest\w*|\byou (?:may|might|could) want\b|\bwould you like\b|"
             r"\bwant me to\b|\bshall i\b|\blet me know\b|\bi can\b|\bif you(?:'d)? like\b",
    "manual": r"\bmanual(?:ly)?\b|\bby hand\b",
    "untested": r"\buntested\b|\bnot (?:been )?(?:tested|verified|run)\b|\bunverified\b|\bwithout test\w*",
    "conflict": r"\bconflict\w*|\brebase\b",
    "negation": r"\bnot\b|\bno\b|\bnever\b|\bnone\b|\bnothing\b|n't\b",
    "failure": r"\bfail\w*|\berror\w*|\bbroken\b|\bflaky\b|\bbug\b",
    "pending": r"\bpending\b|\bremain\w*|\boutstanding\b|\bunresolved\b|\bleft\b|\bopen\b",
    "done": r"\bfixed\b|\badded\b|\bupdated\b|\bimplemented\b|\bcreated\b|\bnow\b|\bdone\b|\bcomplete\w*|\bpass\w*",
    "intent": r"^(?:\w+[.,!]?\s+)?(?:let me|let's|i'll|i will|now i|first,? i)\b",
}
_CUE_RES = {name: re.compile(pattern, re.IGNORECASE) for name, pattern in _CUES.items()}
_HEADINGS = {
    "heading_next": NEXT_HEADING_RE,
    "heading_notes": NOTES_HEADING_RE,
    # not thread_scorer's: any "complete..." word, and no "what"
    "heading_done": re.compile(r"\b(?:summary|changes?|done|fixed|complete\w*|implemented|result|verification|"
                               r"added|updated)\b", re.IGNORECASE),
}
_CODE_RE = re.compile(r"`([^`\s]{3,80})`")
_COMMIT_RE = re.compile(r"\bgit\s+(?:commit|push)\b")

FEATURES = (*_CUES, *_HEADINGS, "last_message", "last_three", "earlier", "through", "place", "first", "final",
            "listed", "nested", "question", "words", "code", "said_later", "code_later", "committed_later",
            "person_after", "next_prompt", "rule_caveat", "rule_next")


def _tool_text(session: Session, start: int) -> str:
    return " ".join(str(e.tool.input) for e in session.events[start:] if e.tool is not None)


def candidates(session: Session, said: list[str], wanted: list[str], least: float = hq.STRICT_F1) -> list[Candidate]:
    """The session's clauses of agent prose that no item said already says, last occurrence of each kept; positive
    when one reaches F1 `least` with a wanted text."""
    events = session.events
    messages = [i for i, e in enumerate(events) if e.kind == "assistant" and e.text.strip()]
    found: dict[str, Candidate] = {}
    for number, at in enumerate(messages):
        listed = sentences(events[at].text)
        later_text = " ".join(events[i].text for i in messages[number + 1:]).lower()
        later_tools = _tool_text(session, at + 1)
        prompt = next((e.text for e in events[at + 1:] if e.kind == "user" and e.text), "")
        prompt_words = hq.content_words(prompt)
        from_end = len(messages) - 1 - number
        for index, sentence in enumerate(listed):
            text = clause(sentence.text)
            words = hq.content_words(text)
            if len(words) < 3 or any(hq.headline_f1(item, text) >= hq.STRICT_F1 for item in said):
                continue
            names = _CODE_RE.findall(sentence.text)
            feats = {name: float(bool(pattern.search(sentence.text))) for name, pattern in _CUE_RES.items()}
            feats |= {name: float(bool(pattern.search(sentence.heading))) for name, pattern in _HEADINGS.items()}
            feats |= {
                "last_message": float(from_end == 0), "last_three": float(0 < from_end <= 3),
                "earlier": float(from_end > 3), "through": number / max(len(messages) - 1, 1),
                "place": index / max(len(listed) - 1, 1), "first": float(index == 0),
                "final": float(index == len(listed) - 1), "listed": float(sentence.listed),
                "nested": float(sentence.nested), "question": float(sentence.text.rstrip().endswith("?")),
                "words": math.log1p(len(sentence.text.split())), "code": float(bool(names)),
                "said_later": sum(w in later_text for w in words) / len(words),
                "code_later": float(any(name in later_tools for name in names)),
                "committed_later": float(bool(_COMMIT_RE.search(later_tools))),
                "person_after": float(bool(prompt)),
                "next_prompt": len(words & prompt_words) / len(words),
                "rule_caveat": float(kind_of(sentence.text) is not None),
                "rule_next": float(bool(NEXT_STEP_RE.search(sentence.text) or LATER_RE.search(sentence.text)
                                        or labelled_step(sentence.text))),
            }
            y = int(any(hq.headline_f1(text, label) >= least for label in wanted))
            found[text] = Candidate(session.session_id, text, np.array([feats[f] for f in FEATURES]), y)
    return list(found.values())


def wanted_texts(group: str) -> dict[str, list[str]]:
    """Session id -> the texts and evidence of its caveat and step-not-taken labels, every tunable reader."""
    ids = {label["id"] for label in hq.load_labels(hq.BLIND, GROUPS[group][0])}
    wanted: dict[str, list[str]] = {sid: [] for sid in ids}
    items = [(label["id"], item) for which in GROUPS[group] for label in hq.load_labels(hq.BLIND, which)
             for item in label["open_threads"] if item.get("kind") in KINDS]
    items += [(label["id"], item) for path in hq.OLD for label in hq.load_labels(path) if label["id"] in ids
              for item in label["open_threads"]]
    for sid, item in items:
        wanted[sid] += [text for text in (hq.label_text(item), str(item.get("evidence") or "")) if text]
    return wanted


@dataclass
class Group:
    name: str
    sets: dict[str, tuple[list[dict], dict[str, dict]]]  # set -> (labels, handoffs)
    cands: list[Candidate]
    wanted: int
    reached: int


def load_group(name: str, data_dir: Path, least: float = hq.STRICT_F1) -> Group:
    wanted = wanted_texts(name)
    sessions = load_sessions(list(wanted))
    sets = {}
    for which in GROUPS[name]:
        labels = hq.load_labels(hq.BLIND, which)
        sets[which] = (labels, hq.extracted(data_dir, [label["id"] for label in labels]))
    handoffs = sets[GROUPS[name][0]][1]
    cands = [c for sid, session in sorted(sessions.items())
             for c in candidates(session, handoffs.get(sid, hq.EMPTY)["open_threads"], wanted[sid], least)]
    labels_wanted = [(sid, t) for sid, texts in wanted.items() for t in texts]
    reached = sum(any(c.y and hq.headline_f1(c.text, t) >= least for c in cands if c.session == sid)
                  for sid, t in labels_wanted)
    return Group(name, sets, cands, len(labels_wanted), reached)


def ranked(cands: list[Candidate], p: np.ndarray) -> dict[str, list[tuple[float, str]]]:
    """Session id -> its candidates' (probability `p`, text), most probable first."""
    by: dict[str, list[tuple[float, str]]] = {}
    for c, prob in zip(cands, p, strict=True):
        by.setdefault(c.session, []).append((float(prob), c.text))
    return {sid: sorted(rows, reverse=True) for sid, rows in by.items()}


def with_picks(handoffs: dict[str, dict], picks: dict[str, list[tuple[float, str]]], threshold: float, top: int,
               open_only: bool) -> dict[str, dict]:
    """The handoffs with up to `top` picks above `threshold` added as caveats (only where already open if asked)."""
    out = {}
    for sid, got in handoffs.items():
        if open_only and not got["open_threads"]:
            out[sid] = got
            continue
        added = [f"Caveat: {text}" for prob, text in picks.get(sid, [])[:top] if prob >= threshold]
        out[sid] = {**got, "open_threads": [*got["open_threads"], *added]}
    return out


def figures(group: Group, picks: dict[str, list[tuple[float, str]]], threshold: float, top: int,
            open_only: bool) -> dict[str, dict]:
    """Set -> its strict scores (handoff_quality.score_strict) with the `picks` added as `with_picks` adds them."""
    return {which: hq.score_strict(labels, with_picks(handoffs, picks, threshold, top, open_only))
            for which, (labels, handoffs) in group.sets.items()}


def _gain(scores: dict[str, dict], base: dict[str, dict]) -> float:
    return sum(s["threads named"] + s["open-work detection F1"] - base[w]["threads named"]
               - base[w]["open-work detection F1"] for w, s in scores.items())


def _auc(y: np.ndarray, p: np.ndarray) -> float:
    """The area under the ROC curve of `p` for labels `y` (Mann-Whitney, ties unbroken); nan with no positive or no
    negative."""
    positives = y.sum()
    if positives in (0, len(y)):
        return math.nan
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(len(p))
    return float((ranks[y == 1].sum() - positives * (positives - 1) / 2) / (positives * (len(y) - positives)))


def fit_ranker(cands: list[Candidate], l2: float = 1.0, steps: int = 300) -> Callable[[np.ndarray], np.ndarray]:
    """A conditional logit: a softmax over each session's candidates (sessions with a positive), by gradient steps;
    it learns to rank within a session, which is what a top-1 pick needs, not a global rate."""
    x = np.array([c.x for c in cands])
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z, y = (x - mean) / scale, np.array([c.y for c in cands], dtype=float)
    sessions = np.array([c.session for c in cands])
    rows = [r for r in (np.flatnonzero(sessions == s) for s in dict.fromkeys(sessions)) if y[r].any()]
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        grad = l2 * w
        for r in rows:
            s = z[r] @ w
            p = np.exp(s - s.max())
            grad += z[r].T @ (p / p.sum() - y[r] / y[r].sum())
        w -= 0.5 * grad / len(rows)
    return lambda xs: 1 / (1 + np.exp(-((xs - mean) / scale) @ w))


def _line(scores: dict[str, dict]) -> str:
    return "  ".join(f"{w} threads {s['threads named']:.3f} ({round(s['threads named'] * s['labelled threads'])}"
                     f"/{s['labelled threads']}) det P {s['open-work detection precision / recall'].precision:.3f} "
                     f"R {s['open-work detection precision / recall'].recall:.3f} said {s['threads said']}"
                     for w, s in scores.items())


def _ranks(group: Group, picks: dict[str, list[tuple[float, str]]]) -> str:
    positive = {(c.session, c.text) for c in group.cands if c.y}
    sessions = {sid for sid, _ in positive}
    first = sum((sid, picks[sid][0][1]) in positive for sid in sessions)
    three = sum(any((sid, text) in positive for _, text in picks[sid][:3]) for sid in sessions)
    return f"sessions with a positive {len(sessions)}: one ranked 1st {first}, in the top 3 {three}"


def _random_named(group: Group, top: int, seeds: int = 30) -> str:
    """Threads named when `top` random candidates are added to each open session, mean over `seeds` draws."""
    named: dict[str, list[float]] = {}
    for seed in range(seeds):
        picks = ranked(group.cands, np.random.default_rng(seed).random(len(group.cands)))
        for which, s in figures(group, picks, -1.0, top, True).items():
            named.setdefault(which, []).append(s["threads named"])
    return "  ".join(f"{w} threads {np.mean(v):.3f}" for w, v in named.items())


def _ceiling(group: Group) -> str:
    """Threads named when each open session gets the `top` candidates that best match that set's own labels: what a
    perfect picker of these candidates could add."""
    found = []
    for which, (labels, handoffs) in group.sets.items():
        wanted = {label["id"]: [hq.label_text(i) for i in label["open_threads"]] for label in labels}
        picks = {sid: sorted(((max((hq.headline_f1(f"Caveat: {c.text}", t) for t in wanted[sid]), default=0.0),
                               c.text) for c in group.cands if c.session == sid), reverse=True) for sid in wanted}
        for top in (1, 2):
            s = hq.score_strict(labels, with_picks(handoffs, picks, hq.STRICT_F1, top, True))
            found.append(f"{which} top-{top} {s['threads named']:.3f}")
    return ", ".join(found)


def direction(train: Group, test: Group, model: str) -> None:
    print(f"\n=== {model} fitted on the {train.name} group, tested on the {test.name} group")
    x, y = np.array([c.x for c in train.cands]), np.array([c.y for c in train.cands])
    predictor: Callable[[np.ndarray], np.ndarray]
    if model == "lr":
        weights = fit(x, y)
        predictor = partial(predict, weights)
        print("  weights (standardised, largest 14): " + ", ".join(
            f"{n} {w:+.2f}" for n, w in sorted(zip(FEATURES, weights[0][:-1], strict=True),
                                               key=lambda f: -abs(f[1]))[:14]))
    else:
        predictor = fit_ranker(train.cands)
    p_train = out_of_fold(train.cands, fitter=fitted if model == "lr" else fit_ranker)
    train_picks = ranked(train.cands, p_train)
    base_train = figures(train, train_picks, 2.0, 1, False)
    tops = sorted((rows[0][0] for rows in train_picks.values()), reverse=True)
    grid = [tops[min(k, len(tops)) - 1] for k in (1, 3, 5, 10, 20, 40)]
    xt, yt = np.array([c.x for c in test.cands]), np.array([c.y for c in test.cands])
    p = predictor(xt)
    picks = ranked(test.cands, p)
    print(f"  train out-of-fold AUC {_auc(y, p_train):.3f}, {_ranks(train, train_picks)}")
    print(f"  test AUC {_auc(yt, p):.3f}, {_ranks(test, picks)}")
    print(f"  rules alone:  {_line(figures(test, picks, 2.0, 1, False))}")
    for top in (1, 2):
        for open_only in (True, False):
            scored = [(_gain(figures(train, train_picks, t, top, open_only), base_train), t) for t in grid]
            chosen = max([*scored, (0.0, 2.0)])[1]  # adding nothing is a choice too
            print(f"  top-{top} {'(a) open only' if open_only else '(b) every session'}, threshold chosen on "
                  f"{train.name} out of fold {chosen:.3f}:\n    {_line(figures(test, picks, chosen, top, open_only))}")
        print(f"  top-{top} (a) added to every open session, no threshold:\n"
              f"    {_line(figures(test, picks, -1.0, top, True))}\n    random picks, same: {_random_named(test, top)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--model", choices=["lr", "ranker"], default="lr",
                        help="lr: logistic regression over all candidates; ranker: a softmax within each session")
    parser.add_argument("--least", type=float, default=hq.STRICT_F1,
                        help="a positive's F1 with a label's text or evidence (0.3: the scorer's; 0.5: closer quotes)")
    args = parser.parse_args()
    groups = {name: load_group(name, args.data_dir, args.least) for name in GROUPS}
    for g in groups.values():
        x, y = np.array([c.x for c in g.cands]), np.array([c.y for c in g.cands])
        print(f"{g.name} group: {len({c.session for c in g.cands})} sessions, {len(g.cands)} candidates, "
              f"{int(y.sum())} positive; label texts (text, evidence) {g.wanted}, with a positive one {g.reached}")
        print("  cues, candidates / positive: " + " ".join(
            f"{name} {int((x[:, i] > 0).sum())}/{int(y[x[:, i] > 0].sum())}" for i, name in enumerate(_CUES)))
        print(f"  ceiling, the best-matching candidates added to each open session (a): {_ceiling(g)}")
    direction(groups["dev"], groups["fresh2"], args.model)
    direction(groups["fresh2"], groups["dev"], args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
