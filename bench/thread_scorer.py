"""A learned open-thread sentence scorer, measured (issue 25, step 12; bench/RESULTS.md, "a learned thread scorer"):
does a small logistic regression over GENERAL features of the sentences of each turn's closing report find the open
threads the phrase rules miss? (It did not: it is not wired into the extractor; this script reproduces the figures.)

Candidates: each sentence of each turn's closing report (the agent's last message before the person speaks again) and
of every message of the last turn. Features (no bag of words, FEATURES): where it sits (last turn, turns from the end,
place in its message, a list item, under a heading that reads done / next / notes), its words (negation, modal, hedge,
a question, length), whether it names code or a file and a later tool call's input names it, whether the person's next
prompt shares its words, and what the existing rules say of it (caveats.kind_of, said_left.labelled_step, the
next-step and later patterns of open_threads, claude_words.outcome, and whether an item of the handoff already says
it). A dev sentence is positive when its content-word F1 (handoff_quality.headline_f1) with a label is >= 0.3. Two
framings: "missed" (an add-on: the sentences no handoff item says, against the labels the rules miss) and "all" (a
rival: every sentence against every label, the handoff's verdict left out). The model: L2 logistic regression (numpy,
Newton steps), cross-validated by session (5 folds of dev sessions). Printed: out-of-fold AUC and ranks, the weights,
and the top sentence per session (fired, precision, labels named) with the strict scores of the handoffs given it as
one more thread, at thresholds set by the dev folds' top probabilities. `--set heldout|fresh` fits on all of dev and
prints that set's aggregates at the threshold chosen on the dev folds and the dev top-5 and top-20 ones; no session's
own result is printed for any set but dev, and for dev only with --show.

Usage: python bench/thread_scorer.py --data-dir DIR [--set dev|heldout|fresh] [--show]
(DIR: an index built by bench/handoff_quality.py --data-dir DIR, whose handoffs are the rules' own.)
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

from eywa.core.extract.caveats import kind_of
from eywa.core.extract.claude_words import outcome, sentences
from eywa.core.extract.open_threads import LATER_RE, NEXT_STEP_RE
from eywa.core.extract.said_left import clause, labelled_step
from eywa.core.session import Event, Session

_NEGATION_RE = re.compile(r"\b(?:not|no|never|without|none|nothing)\b|n't\b", re.IGNORECASE)
_MODAL_RE = re.compile(r"\b(?:should|could|would|may|might|need|needs|must|can)\b", re.IGNORECASE)
_HEDGE_RE = re.compile(r"\b(?:only|still|yet|later|follow-?up|separately|for now|currently|manual(?:ly)?|todo|future|"
                       r"eventually|pending|remaining|consider)\b", re.IGNORECASE)
_DONE_HEADING_RE = re.compile(r"\b(?:summary|changes?|done|fixed|complete|completed|implemented|what|result|"
                              r"verification|added|updated)\b", re.IGNORECASE)
NEXT_HEADING_RE = re.compile(r"\b(?:next|todo|to do|remaining|follow|future|recommend\w*|left|open|pending|"
                              r"outstanding|manual|consider\w*|suggest\w*|option\w*)\b", re.IGNORECASE)
NOTES_HEADING_RE = re.compile(r"\b(?:notes?|caveats?|limitations?|known|warnings?|risks?|issues?|concerns?|"
                               r"considerations?|important)\b", re.IGNORECASE)
_INTENT_RE = re.compile(r"^(?:\w+[.,!]?\s+)?(?:let me|let's|i'll|i will|now i)\b", re.IGNORECASE)
_CODE_RE = re.compile(r"`([^`\s]{3,80})`|\b([\w-]+(?:/[\w.-]+)+|"
                      r"[\w-]+\.(?:py|go|ts|tsx|js|md|json|yaml|yml|toml|sh|rs))\b")
_THREADS_SAID = 0.3  # F1 of a sentence with an item the handoff already holds: the rules say it

FEATURES = ("last_turn", "turn_from_end", "place", "first", "final", "listed", "nested", "heading", "heading_done",
            "heading_next", "heading_notes", "negation", "modal", "hedge", "question", "words", "code", "code_later",
            "next_prompt", "rule_caveat", "rule_next", "rule_later", "rule_step", "outcome", "intent", "rule_said",
            "message_sentences")


@dataclass
class Candidate:
    session: str
    text: str
    x: np.ndarray
    y: int


def _tool_text(event: Event) -> str:
    return str(event.tool.input) if event.tool is not None else ""


def _turns(events: list[Event]) -> list[tuple[int, int]]:
    """(start, end) event ranges between the person's prompts."""
    bounds = [i for i, e in enumerate(events) if e.kind == "user"]
    starts = [0, *[b + 1 for b in bounds]]
    ends = [*bounds, len(events)]
    return [(s, e) for s, e in zip(starts, ends, strict=True) if s < e]


def candidates(session: Session, said: list[str], labels: list[str]) -> list[Candidate]:
    events = session.events
    turns = _turns(events)
    found: list[Candidate] = []
    for number, (start, end) in enumerate(turns):
        messages = [i for i in range(start, end) if events[i].kind == "assistant" and events[i].text.strip()]
        if not messages:
            continue
        last = number == len(turns) - 1
        prompt = next((events[i].text for i in range(end, len(events)) if events[i].kind == "user"), "")
        prompt_words = hq.content_words(prompt)
        later_tools = " ".join(_tool_text(e) for e in events[messages[-1] + 1:] if e.tool is not None)
        for at in messages if last else messages[-1:]:
            listed = sentences(events[at].text)
            later_here = later_tools if at == messages[-1] else " ".join(
                _tool_text(e) for e in events[at + 1:] if e.tool is not None)
            for index, sentence in enumerate(listed):
                text = sentence.text
                words = hq.content_words(text)
                if len(words) < 3:
                    continue
                names = [a or b for a, b in _CODE_RE.findall(text)]
                heading = sentence.heading
                feats = {
                    "last_turn": float(last), "turn_from_end": 1 / (len(turns) - number),
                    "place": index / max(len(listed) - 1, 1), "first": float(index == 0),
                    "final": float(index == len(listed) - 1), "listed": float(sentence.listed),
                    "nested": float(sentence.nested), "heading": float(bool(heading)),
                    "heading_done": float(bool(_DONE_HEADING_RE.search(heading))),
                    "heading_next": float(bool(NEXT_HEADING_RE.search(heading))),
                    "heading_notes": float(bool(NOTES_HEADING_RE.search(heading))),
                    "negation": min(len(_NEGATION_RE.findall(text)), 2), "modal": min(len(_MODAL_RE.findall(text)), 2),
                    "hedge": min(len(_HEDGE_RE.findall(text)), 2), "question": float(text.rstrip().endswith("?")),
                    "words": math.log1p(len(text.split())), "code": float(bool(names)),
                    "code_later": float(any(name in later_here for name in names)),
                    "next_prompt": len(words & prompt_words) / len(words) if prompt_words else 0.0,
                    "rule_caveat": float(kind_of(text) is not None),
                    "rule_next": float(bool(NEXT_STEP_RE.search(text))),
                    "rule_later": float(bool(LATER_RE.search(text))),
                    "rule_step": float(labelled_step(text) is not None),
                    "outcome": float(outcome(text) is not None), "intent": float(bool(_INTENT_RE.match(text))),
                    "rule_said": float(any(hq.headline_f1(item, text) >= _THREADS_SAID for item in said)),
                    "message_sentences": math.log1p(len(listed)),
                }
                y = int(any(hq.headline_f1(text, label) >= hq.STRICT_F1 for label in labels))
                found.append(Candidate(session.session_id, text, np.array([feats[f] for f in FEATURES]), y))
    return found


def missed(label: dict, said: list[str]) -> list[str]:
    """The session's labelled open threads that no item of its handoff names (F1 >= 0.3)."""
    return [text for text in map(hq.label_text, label["open_threads"])
            if not any(hq.headline_f1(item, text) >= hq.STRICT_F1 for item in said)]


def load_sessions(ids: list[str]) -> dict[str, Session]:
    """The labelled sessions of the corpus and the agent fixtures, read as ingest reads them."""
    from eywa.core.ingest.prepare import read_session
    from eywa.core.sources import agent
    from eywa.core.sources.discovery import group_sessions, scan_files

    found: dict[str, Session] = {}
    wanted = set(ids)
    for kind, folder in (("codex", "codex"), ("gemini", "gemini"), ("claude-code", "claude")):
        source = agent(kind)
        files = [f for sub in source.folders for f in scan_files(hq.AGENTS / folder / sub, kind)]
        for group in group_sessions(files, source.session_of).values():
            session = read_session(group, str)[0]
            if session.session_id in wanted:
                found[session.session_id] = session
    for session_id in wanted - set(found):
        try:
            found[session_id] = hq.corpus_session(session_id)
        except KeyError:
            continue
    return found


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights with the bias last, feature means, feature scales): L2 logistic regression by Newton steps."""
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = l2 * np.eye(z.shape[1])
    penalty[-1, -1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w, mean, scale


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    w, mean, scale = model
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    return 1 / (1 + np.exp(-z @ w))


def fitted(cands: list[Candidate]) -> Callable[[np.ndarray], np.ndarray]:
    """The logistic regression (`fit`) on `cands`, as features -> probabilities."""
    return partial(predict, fit(np.array([c.x for c in cands]), np.array([c.y for c in cands])))


def out_of_fold(cands: list[Candidate], folds: int = 5,
                fitter: Callable[[list[Candidate]], Callable[[np.ndarray], np.ndarray]] = fitted) -> np.ndarray:
    """Each candidate's probability from a model `fitter` fitted on the other folds' sessions."""
    sessions = sorted({c.session for c in cands})
    fold_of = {s: i % folds for i, s in enumerate(sessions)}
    x = np.array([c.x for c in cands])
    which = np.array([fold_of[c.session] for c in cands])
    p = np.zeros(len(cands))
    for k in range(folds):
        p[which == k] = fitter([c for c, f in zip(cands, which, strict=True) if f != k])(x[which == k])
    return p


def top_per_session(cands: list[Candidate], p: np.ndarray) -> dict[str, tuple[float, str]]:
    best: dict[str, tuple[float, str]] = {}
    for c, prob in zip(cands, p, strict=True):
        if c.session not in best or prob > best[c.session][0]:
            best[c.session] = (float(prob), c.text)
    return best


def with_top(handoffs: dict[str, dict], best: dict[str, tuple[float, str]], threshold: float) -> dict[str, dict]:
    """The handoffs with each session's top sentence as one more open thread when it clears `threshold` and no item
    already says it."""
    out = {}
    for sid, got in handoffs.items():
        got = dict(got)
        prob, text = best.get(sid, (0.0, ""))
        item = clause(text)
        if prob >= threshold and not any(hq.headline_f1(t, item) >= _THREADS_SAID for t in got["open_threads"]):
            got["open_threads"] = [*got["open_threads"], item]
        out[sid] = got
    return out


def top_figures(labels: list[dict], best: dict[str, tuple[float, str]], threshold: float) -> tuple[int, int, int]:
    """(sessions whose top sentence clears the threshold, of them naming a label, labels named by top sentences)."""
    fired = hit = named = 0
    for label in labels:
        prob, text = best.get(label["id"], (0.0, ""))
        if prob < threshold:
            continue
        fired += 1
        wanted = [hq.label_text(i) for i in label["open_threads"]]
        n = hq.matched_one_to_one(wanted, [clause(text)])
        hit += n > 0
        named += n
    return fired, hit, named


def _ranks(cands: list[Candidate], p: np.ndarray) -> str:
    """Within the sessions holding a positive sentence: how often one is ranked first / in the top 3, by the model and
    by a plain baseline (the last sentence of the last message first, then back)."""
    by: dict[str, list[tuple[float, int, int]]] = {}
    for order, (c, prob) in enumerate(zip(cands, p, strict=True)):
        by.setdefault(c.session, []).append((float(prob), order, c.y))
    rows = [r for r in by.values() if any(y for _, _, y in r)]
    model = [[y for _, _, y in sorted(r, key=lambda t: -t[0])] for r in rows]
    base = [[y for _, _, y in sorted(r, key=lambda t: -t[1])] for r in rows]
    return (f"sessions with a positive candidate: {len(rows)}; a positive ranked 1st / in the top 3: model "
            f"{sum(m[0] for m in model)} / {sum(any(m[:3]) for m in model)}, last-sentence-first baseline "
            f"{sum(b[0] for b in base)} / {sum(any(b[:3]) for b in base)}; candidates per such session "
            f"{sum(map(len, rows)) / max(len(rows), 1):.0f}")


def _strict_line(name: str, s: dict) -> str:
    detection = s["open-work detection precision / recall"]
    return (f"{name:28} detection F1 {detection.f1:.3f} (P {detection.precision:.3f} / R "
            f"{detection.recall:.3f})  threads named {s['threads named']:.3f}  said {s['threads said']}")


def _wanted(target: str, label: dict, said: list[str]) -> list[str]:
    return missed(label, said) if target == "missed" else [hq.label_text(i) for i in label["open_threads"]]


def session_candidates(target: str, labels: list[dict], sessions: dict[str, Session],
                       handoffs: dict[str, dict]) -> list[Candidate]:
    """missed: the sentences no handoff item says, positive against the labels the rules miss (an add-on to the
    rules); all: every sentence, positive against every label, without the rules' verdict on the handoff (a rival)."""
    found = []
    for label in labels:
        if label["id"] not in sessions:
            continue
        said = handoffs.get(label["id"], hq.EMPTY)["open_threads"]
        for c in candidates(sessions[label["id"]], said, _wanted(target, label, said)):
            if target == "all":
                c.x[FEATURES.index("rule_said")] = 0.0
                found.append(c)
            elif not c.x[FEATURES.index("rule_said")]:
                found.append(c)
    return found


def _added(name: str, labels: list[dict], handoffs: dict[str, dict], best: dict[str, tuple[float, str]],
           threshold: float, base: dict) -> None:
    fired, hit, named = top_figures(labels, best, threshold)
    print(f"  {name} threshold {threshold:.3f}: top sentence fired on {fired} sessions, naming a label on {hit} "
          f"(precision {hit / fired if fired else 0:.3f}), labels it names {named}/{base['labelled threads']}")
    print(_strict_line("    rules + top sentence", hq.score_strict(labels, with_top(handoffs, best, threshold))))


def evaluate(target: str, dev: list[dict], dev_sessions: dict[str, Session], dev_handoffs: dict[str, dict],
             other: tuple[list[dict], dict[str, Session], dict[str, dict]] | None, show: bool) -> None:
    cands = session_candidates(target, dev, dev_sessions, dev_handoffs)
    x, y = np.array([c.x for c in cands]), np.array([c.y for c in cands])
    left = {lab["id"]: _wanted(target, lab, dev_handoffs.get(lab["id"], hq.EMPTY)["open_threads"]) for lab in dev}
    reached = sum(any(hq.headline_f1(c.text, text) >= hq.STRICT_F1 for c in cands if c.session == sid)
                  for sid, texts in left.items() for text in texts)
    print(f"== target {target}: dev {len(cands)} candidate sentences, {int(y.sum())} positive; labels wanted "
          f"{sum(map(len, left.values()))}, of them with a positive candidate {reached}")
    model = fit(x, y)
    p = out_of_fold(cands)
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(len(p))
    auc = (ranks[y == 1].sum() - y.sum() * (y.sum() - 1) / 2) / (y.sum() * (len(y) - y.sum()))
    print(f"  out-of-fold AUC {auc:.3f}; {_ranks(cands, p)}")
    print("  weights (all of dev, standardised features): " + ", ".join(
        f"{name} {weight:+.2f}" for name, weight in sorted(zip(FEATURES, model[0][:-1], strict=True),
                                                            key=lambda f: -abs(f[1])) if name != "rule_said"))
    best = top_per_session(cands, p)
    base = hq.score_strict(dev, dev_handoffs)
    print(_strict_line("  rules (dev)", base))
    tops = sorted((prob for prob, _ in best.values()), reverse=True)
    # the base rate is under 3%: thresholds at the top sessions' probabilities (the top 1, 5, 10, 20, 40, all)
    thresholds = [tops[min(k, len(tops)) - 1] for k in (1, 5, 10, 20, 40, len(tops))]
    scored = []
    for threshold in thresholds:
        _added("dev out of fold", dev, dev_handoffs, best, threshold, base)
        s = hq.score_strict(dev, with_top(dev_handoffs, best, threshold))
        scored.append((s["threads named"] + s["open-work detection F1"], threshold))
    chosen = max(scored)[1]
    print(f"  chosen on dev folds (threads named + detection F1): {chosen:.3f}")
    if show:
        for label in dev:
            prob, text = best.get(label["id"], (0.0, ""))
            print(f"  {label['id'][:8]} {prob:.3f} {clause(text)}")
    if other is None:
        return
    labels, sessions, handoffs = other
    found = session_candidates(target, [{**lab, "open_threads": []} for lab in labels], sessions, handoffs)
    best = top_per_session(found, predict(model, np.array([c.x for c in found])))
    base = hq.score_strict(labels, handoffs)
    print(_strict_line(f"  rules ({labels[0]['set']})", base))
    for threshold in dict.fromkeys([chosen, thresholds[1], thresholds[3]]):  # the chosen, the dev top 5 and top 20
        _added(labels[0]["set"], labels, handoffs, best, threshold, base)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--set", choices=["dev", "heldout", "fresh"], default="dev",
                        help="heldout | fresh: trained on all of dev, scored there as aggregates only")
    parser.add_argument("--show", action="store_true", help="dev only: each session's top sentence")
    args = parser.parse_args()
    dev = hq.load_labels(hq.BLIND, "dev")
    dev_sessions = load_sessions([label["id"] for label in dev])
    dev_handoffs = hq.extracted(args.data_dir, [label["id"] for label in dev])
    print(f"dev: {len(dev_sessions)} of {len(dev)} sessions read")
    other = None
    if args.set != "dev":
        labels = hq.load_labels(hq.BLIND, args.set)
        sessions = load_sessions([label["id"] for label in labels])
        print(f"{args.set}: {len(sessions)} of {len(labels)} sessions read")
        other = (labels, sessions, hq.extracted(args.data_dir, [label["id"] for label in labels]))
    for target in ("missed", "all"):
        evaluate(target, dev, dev_sessions, dev_handoffs, other, args.show and args.set == "dev")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
